#include "spec/internal/document_error.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::spec::internal {
namespace {

constexpr char kPayloadUrl[] = "type.tessera.io/tessera.api.JobSpecError";

}  // namespace

absl::Status DocumentError(Position position, std::string_view field, std::string_view message) {
  const std::string text =
      field.empty() ? std::string(message) : fmt::format("{}: {}", field, message);
  absl::Status status = absl::InvalidArgumentError(AtPosition(position, text));
  const nlohmann::json parts = {
      {"field", field}, {"line", position.line}, {"column", position.column}, {"message", message}};
  // Replacing invalid UTF-8 keeps dump() from throwing on a hostile field name.
  status.SetPayload(kPayloadUrl, absl::Cord(parts.dump(-1, ' ', false,
                                                       nlohmann::json::error_handler_t::replace)));
  return status;
}

std::optional<JobSpecError> ErrorParts(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayloadUrl);  // an absl::optional<absl::Cord>
  if (!payload.has_value()) return std::nullopt;
  const nlohmann::json parts = nlohmann::json::parse(std::string(*payload), nullptr,
                                                     /*allow_exceptions=*/false);
  if (!parts.is_object()) return std::nullopt;
  JobSpecError error;
  error.field = parts.value("field", "");
  error.line = parts.value("line", 0);
  error.column = parts.value("column", 0);
  error.message = parts.value("message", "");
  return error;
}

absl::Status WithSource(const absl::Status& status, std::string_view source) {
  if (status.ok() || source.empty()) return status;
  const std::optional<JobSpecError> parts = ErrorParts(status);
  const bool positioned = parts.has_value() && parts->line > 0;
  absl::Status wrapped(status.code(), fmt::format("{}{}{}", source, positioned ? ":" : ": ",
                                                  std::string(status.message())));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { wrapped.SetPayload(url, payload); });
  return wrapped;
}

}  // namespace tessera::spec::internal

#include "spec/request_error.h"

#include "absl/strings/cord.h"
#include "fmt/format.h"
#include "spec/jobspec.h"

namespace tessera::spec {
namespace {

// The payload FieldError and WithField attach: the name of the offending field.
constexpr char kFieldPayload[] = "type.tessera.io/tessera.api.RequestField";

}  // namespace

absl::Status WithField(absl::Status status, std::string_view field) {
  status.SetPayload(kFieldPayload, absl::Cord(std::string(field)));
  return status;
}

absl::Status FieldError(std::string_view field, std::string_view message) {
  return WithField(absl::InvalidArgumentError(fmt::format("{}: {}", field, message)), field);
}

std::optional<std::string> ErrorField(const absl::Status& status) {
  if (auto field = status.GetPayload(kFieldPayload); field.has_value()) {
    return std::string(*field);
  }
  if (std::optional<JobSpecError> error = GetJobSpecError(status);
      error.has_value() && !error->field.empty()) {
    return error->field;
  }
  return std::nullopt;
}

absl::Status ItemError(std::string_view list, size_t index, const absl::Status& status) {
  const std::string item = fmt::format("{}[{}]", list, index);
  std::optional<std::string> field = ErrorField(status);
  std::string message(status.message());
  if (std::optional<JobSpecError> parse = GetJobSpecError(status); parse.has_value()) {
    message = field.has_value() ? fmt::format("{}: {}", *field, parse->message) : parse->message;
  }
  if (field.has_value() && message.starts_with(*field + ": ")) {
    message = fmt::format("{}.{}", item, message);
  } else {
    message = fmt::format("{}: {}", item, message);
  }
  return WithField(absl::Status(status.code(), message),
                   field.has_value() ? fmt::format("{}.{}", item, *field) : item);
}

}  // namespace tessera::spec

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

}  // namespace tessera::spec

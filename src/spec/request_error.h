// Request errors that name the field at fault, shared by the REST and gRPC layers: the REST
// error body's "field" and the gRPC "field" trailer come from here.
//
// A field is either a request parameter or body field ("limit", "job_id"), attached by
// FieldError / WithField as a status payload, or a job document path
// ("spec.tasks[1].resources.gpu") from the job-spec codec's parse errors (GetJobSpecError).
// Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tessera::spec {

// InvalidArgument("FIELD: MESSAGE") that remembers FIELD.
absl::Status FieldError(std::string_view field, std::string_view message);
// `status` (code and message unchanged) remembering `field`.
absl::Status WithField(absl::Status status, std::string_view field);
// The field at fault in `status`, if one is named.
std::optional<std::string> ErrorField(const absl::Status& status);

}  // namespace tessera::spec

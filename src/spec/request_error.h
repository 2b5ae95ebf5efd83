// Request errors that name the field at fault, shared by the REST and gRPC layers: the REST
// error body's "field" and the gRPC "field" trailer come from here.
//
// A field is either a request parameter or body field ("limit", "job_id"), attached by
// FieldError / WithField as a status payload, or a job document path
// ("spec.tasks[1].resources.gpu") from the job-spec codec's parse errors (GetJobSpecError).
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
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
// The error of item `index` of the request list `list` ("items"), for batch requests: the same
// code, the field at fault put under the item ("items[3].spec.tasks[0].resources.gpu") and the
// message led by it ("items[3].spec.tasks[0].resources.gpu: must be >= 0"). A job-spec parse
// error loses its line and column (they count within the item, not the request); an error
// that names no field names the item itself ("items[3]: ..."). REQUIRES: !status.ok().
absl::Status ItemError(std::string_view list, size_t index, const absl::Status& status);

}  // namespace tessera::spec

// ApiError: a Kubernetes API answer that is not a success, as an absl::Status.
//
// The API server answers a failed request with an HTTP status and, usually, a Status object
// ({"kind":"Status","status":"Failure","message":...,"reason":...,"code":...}); a watch stream
// reports a failure as an ERROR event carrying the same object. Codes map as:
//   400 BadRequest          InvalidArgument     401 Unauthorized   Unauthenticated
//   403 Forbidden           PermissionDenied    404 NotFound       NotFound
//   409 AlreadyExists       AlreadyExists       409 Conflict       Aborted
//   410 Gone / Expired      OutOfRange (a resourceVersion too old to watch from: relist)
//   422 Invalid             InvalidArgument     429, 5xx           Unavailable
//   anything else           Unknown
// Messages read "<what>: <code> <reason>: <the Status message>" with a hint for 401 and 403.
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "agent/kubernetes/internal/json_fields.h"

namespace tessera::agent::k8s {

// `what` names the request ("GET /api/v1/nodes"); `body` is the answer's body (a Status
// object, or anything).
absl::Status ApiError(std::string_view what, int http_status, std::string_view body);

// The same for a Status object already parsed (a watch ERROR event's object). Its `code`
// member gives the HTTP status (500 when missing).
absl::Status ApiErrorFromStatusObject(std::string_view what, const Json& status);

// True for the error of a resourceVersion too old to watch from (410 Gone / Expired).
bool IsResourceVersionExpired(const absl::Status& status);

}  // namespace tessera::agent::k8s

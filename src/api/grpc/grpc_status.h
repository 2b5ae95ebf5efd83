// Error mapping of the gRPC API: absl::Status (the JobService's canonical codes) to
// grpc::Status, code for code, with the faulty field's path as the "field" trailer.
//
// The field comes from a job-spec parse error (spec/jobspec.h, GetJobSpecError: the
// document path, "spec.tasks[1].resources.gpu") or from FieldError (spec/request_error.h: a request
// field, "job_id"). The message is passed through unchanged. Thread-safe: pure functions;
// ToGrpcStatus writes only to the call's own ServerContext.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"
#include "spec/request_error.h"

namespace tessera::api {

// Trailing metadata keys (lower case, as gRPC requires).
inline constexpr char kFieldTrailer[] = "field";
inline constexpr char kRetryAfterTrailer[] = "retry-after-ms";

// The gRPC code with the same meaning (absl and gRPC share the canonical codes); UNKNOWN for
// a code outside them.
grpc::StatusCode ToGrpcCode(absl::StatusCode code);

// `status` as a grpc::Status; adds the "field" trailer to `context` when a field is at fault.
grpc::Status ToGrpcStatus(const absl::Status& status, grpc::ServerContext& context);

// The token of an "authorization" value "Bearer <token>" (the scheme in any case);
// Unauthenticated when the value has another form.
absl::StatusOr<std::string_view> BearerToken(std::string_view value);

}  // namespace tessera::api

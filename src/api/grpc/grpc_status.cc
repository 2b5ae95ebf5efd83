#include "api/grpc/grpc_status.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "spec/jobspec.h"

namespace tessera::api {
grpc::StatusCode ToGrpcCode(absl::StatusCode code) {
  // Both enumerate the canonical codes with the same numbers, OK = 0 ... UNAUTHENTICATED = 16.
  static_assert(static_cast<int>(absl::StatusCode::kOk) == grpc::StatusCode::OK);
  static_assert(static_cast<int>(absl::StatusCode::kResourceExhausted) ==
                grpc::StatusCode::RESOURCE_EXHAUSTED);
  static_assert(static_cast<int>(absl::StatusCode::kUnauthenticated) ==
                grpc::StatusCode::UNAUTHENTICATED);
  const int value = static_cast<int>(code);
  if (value < grpc::StatusCode::OK || value > grpc::StatusCode::UNAUTHENTICATED) {
    return grpc::StatusCode::UNKNOWN;
  }
  return static_cast<grpc::StatusCode>(value);
}

grpc::Status ToGrpcStatus(const absl::Status& status, grpc::ServerContext& context) {
  if (status.ok()) return grpc::Status::OK;
  if (std::optional<std::string> field = spec::ErrorField(status)) {
    context.AddTrailingMetadata(kFieldTrailer, *field);
  }
  return grpc::Status(ToGrpcCode(status.code()), std::string(status.message()));
}

// The token of an "authorization" value "Bearer <token>" (the scheme in any case).
absl::StatusOr<std::string_view> BearerToken(std::string_view value) {
  constexpr std::string_view kScheme = "bearer ";
  const bool bearer = value.size() > kScheme.size() &&
                      std::equal(kScheme.begin(), kScheme.end(), value.begin(),
                                 [](char a, char b) { return a == absl::ascii_tolower(b); });
  if (!bearer) {
    return absl::UnauthenticatedError(
        "malformed \"authorization\" metadata: want \"Bearer <token>\"");
  }
  std::string_view token = value.substr(kScheme.size());
  while (!token.empty() && absl::ascii_isspace(token.front())) token.remove_prefix(1);
  while (!token.empty() && absl::ascii_isspace(token.back())) token.remove_suffix(1);
  return token;
}

}  // namespace tessera::api

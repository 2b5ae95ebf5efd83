#include "agent/kubernetes/api_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::agent::k8s {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(ApiErrorTest, HttpStatusesMapToCodes) {
  struct Case {
    int http;
    std::string reason;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {400, "BadRequest", absl::StatusCode::kInvalidArgument},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied},
      {404, "NotFound", absl::StatusCode::kNotFound},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {409, "Conflict", absl::StatusCode::kAborted},
      {410, "Expired", absl::StatusCode::kOutOfRange},
      {422, "Invalid", absl::StatusCode::kInvalidArgument},
      {429, "TooManyRequests", absl::StatusCode::kUnavailable},
      {500, "InternalError", absl::StatusCode::kUnavailable},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
      {418, "Teapot", absl::StatusCode::kUnknown},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.http);
    const Json body = {{"kind", "Status"},
                       {"status", "Failure"},
                       {"reason", c.reason},
                       {"message", "it went wrong"},
                       {"code", c.http}};
    absl::Status status = ApiError("GET /api/v1/nodes", c.http, body.dump());
    EXPECT_EQ(status.code(), c.code);
    EXPECT_THAT(Message(status),
                AllOf(HasSubstr("GET /api/v1/nodes: "), HasSubstr(std::to_string(c.http)),
                      HasSubstr(c.reason), HasSubstr("it went wrong")));
  }
}

TEST(ApiErrorTest, CredentialAndPermissionErrorsCarryAHint) {
  EXPECT_THAT(Message(ApiError("GET /x", 401, "")), HasSubstr("credentials"));
  EXPECT_THAT(Message(ApiError("GET /x", 403, "")), HasSubstr("rbac"));
}

TEST(ApiErrorTest, BodiesThatAreNotStatusObjectsAreQuotedPrintably) {
  absl::Status status = ApiError("GET /x", 502, std::string("bad\x01gateway\n"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Message(status), HasSubstr("bad?gateway?"));
  EXPECT_THAT(Message(ApiError("GET /x", 500, "")), HasSubstr("(empty answer)"));
  EXPECT_LT(Message(ApiError("GET /x", 500, std::string(10000, 'a'))).size(), 400u);
}

TEST(ApiErrorTest, WatchErrorEventsSayWhenToRelist) {
  const Json expired = {{"kind", "Status"},
                        {"reason", "Expired"},
                        {"message", "too old resource version: 5 (9)"},
                        {"code", 410}};
  absl::Status status = ApiErrorFromStatusObject("watch", expired);
  EXPECT_TRUE(IsResourceVersionExpired(status));
  EXPECT_THAT(Message(status), HasSubstr("too old resource version"));
  EXPECT_FALSE(IsResourceVersionExpired(ApiErrorFromStatusObject("watch", Json::object())));
  EXPECT_EQ(ApiErrorFromStatusObject("watch", {{"code", "x"}}).code(),
            absl::StatusCode::kUnavailable);  // no usable code: a server error
}

}  // namespace
}  // namespace tessera::agent::k8s

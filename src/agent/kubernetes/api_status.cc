#include "agent/kubernetes/api_status.h"

#include <string>

#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

// Bytes of a non-Status body quoted in a message.
constexpr size_t kMaxQuoted = 200;

absl::StatusCode CodeFor(int http_status, std::string_view reason) {
  switch (http_status) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kUnavailable;
    default:
      return http_status >= 500 && http_status < 600 ? absl::StatusCode::kUnavailable
                                                     : absl::StatusCode::kUnknown;
  }
}

std::string_view Hint(int http_status) {
  switch (http_status) {
    case 401:
      return " (the API server refused the credentials: check the kubeconfig user's token or "
             "the service account token)";
    case 403:
      return " (the credentials lack a permission: see deploy/kubernetes/rbac.yaml)";
    default:
      return "";
  }
}

absl::Status Make(std::string_view what, int http_status, std::string_view reason,
                  std::string_view message) {
  return absl::Status(CodeFor(http_status, reason),
                      fmt::format("{}: {} {}: {}{}", what, http_status,
                                  reason.empty() ? "Failure" : reason, message, Hint(http_status)));
}

std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuoted)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

}  // namespace

absl::Status ApiErrorFromStatusObject(std::string_view what, const Json& status) {
  int http_status = 500;
  if (const Json* code = Member(status, "code"); code != nullptr && code->is_number_integer() &&
                                                 code->get<int64_t>() >= 100 &&
                                                 code->get<int64_t>() < 600) {
    http_status = static_cast<int>(code->get<int64_t>());
  }
  const Json* reason = Member(status, "reason");
  const Json* message = Member(status, "message");
  return Make(what, http_status,
              reason != nullptr && reason->is_string() ? reason->get_ref<const std::string&>() : "",
              message != nullptr && message->is_string()
                  ? Printable(message->get_ref<const std::string&>())
                  : "(no message)");
}

absl::Status ApiError(std::string_view what, int http_status, std::string_view body) {
  std::optional<Json> parsed = ParseJson(body);
  if (parsed.has_value() && Member(*parsed, "kind") != nullptr && (*parsed)["kind"] == "Status") {
    // The HTTP status is authoritative; the object's code may be missing.
    Json status = *parsed;
    status["code"] = http_status;
    return ApiErrorFromStatusObject(what, status);
  }
  return Make(what, http_status, "", body.empty() ? "(empty answer)" : Printable(body));
}

bool IsResourceVersionExpired(const absl::Status& status) {
  return status.code() == absl::StatusCode::kOutOfRange;
}

}  // namespace tessera::agent::k8s

#include "cli/client/api_error.h"

#include <charconv>
#include <utility>

#include "absl/strings/cord.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::cli {
namespace {

constexpr char kUnreachablePayload[] = "tessera.io/cli/unreachable";
constexpr char kFieldPayload[] = "tessera.io/cli/field";
constexpr char kRetryAfterPayload[] = "tessera.io/cli/retry-after-ms";

constexpr std::pair<std::string_view, absl::StatusCode> kCodes[] = {
    {"CANCELLED", absl::StatusCode::kCancelled},
    {"UNKNOWN", absl::StatusCode::kUnknown},
    {"INVALID_ARGUMENT", absl::StatusCode::kInvalidArgument},
    {"DEADLINE_EXCEEDED", absl::StatusCode::kDeadlineExceeded},
    {"NOT_FOUND", absl::StatusCode::kNotFound},
    {"ALREADY_EXISTS", absl::StatusCode::kAlreadyExists},
    {"PERMISSION_DENIED", absl::StatusCode::kPermissionDenied},
    {"RESOURCE_EXHAUSTED", absl::StatusCode::kResourceExhausted},
    {"FAILED_PRECONDITION", absl::StatusCode::kFailedPrecondition},
    {"ABORTED", absl::StatusCode::kAborted},
    {"OUT_OF_RANGE", absl::StatusCode::kOutOfRange},
    {"UNIMPLEMENTED", absl::StatusCode::kUnimplemented},
    {"INTERNAL", absl::StatusCode::kInternal},
    {"UNAVAILABLE", absl::StatusCode::kUnavailable},
    {"DATA_LOSS", absl::StatusCode::kDataLoss},
    {"UNAUTHENTICATED", absl::StatusCode::kUnauthenticated},
};

// The code docs/api.md pairs with an HTTP status, for answers without an error body.
absl::StatusCode CodeForHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kFailedPrecondition;
    case 413:
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 503:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

// Retry-After in seconds (the HTTP-date form is not used by the API).
std::optional<int64_t> RetryAfterMillis(std::string_view header) {
  int64_t seconds = 0;
  auto [ptr, ec] = std::from_chars(header.data(), header.data() + header.size(), seconds);
  if (header.empty() || ec != std::errc() || ptr != header.data() + header.size() || seconds < 0 ||
      seconds > 86400) {
    return std::nullopt;
  }
  return seconds * 1000;
}

std::string Printable(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::optional<absl::StatusCode> StatusCodeFromName(std::string_view name) {
  for (const auto& [text, code] : kCodes) {
    if (text == name) return code;
  }
  return std::nullopt;
}

absl::Status ApiErrorFromResponse(int http_status, std::string_view body,
                                  std::string_view retry_after) {
  absl::StatusCode code = CodeForHttpStatus(http_status);
  std::string message;
  std::string field;
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const bool structured = parsed.is_object() && parsed.contains("error") &&
                          parsed["error"].is_object() && parsed["error"].contains("message") &&
                          parsed["error"]["message"].is_string();
  if (structured) {
    const nlohmann::json& error = parsed["error"];
    message = error["message"].get<std::string>();
    if (error.contains("code") && error["code"].is_string()) {
      code = StatusCodeFromName(error["code"].get<std::string>()).value_or(code);
    }
    if (error.contains("field") && error["field"].is_string()) {
      field = error["field"].get<std::string>();
    }
  } else {
    const std::string text = Printable(body);
    message = text.empty() ? fmt::format("HTTP {}", http_status)
                           : fmt::format("HTTP {}: {}", http_status, text);
  }
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  absl::Status status(code, message);
  if (!field.empty()) status.SetPayload(kFieldPayload, absl::Cord(field));
  if (std::optional<int64_t> ms = RetryAfterMillis(retry_after)) {
    status.SetPayload(kRetryAfterPayload, absl::Cord(std::to_string(*ms)));
  }
  return status;
}

absl::Status UnreachableError(std::string_view message) {
  absl::Status status = absl::UnavailableError(std::string(message));
  status.SetPayload(kUnreachablePayload, absl::Cord("1"));
  return status;
}

bool IsUnreachable(const absl::Status& status) {
  return status.GetPayload(kUnreachablePayload).has_value();
}

std::optional<std::string> ErrorField(const absl::Status& status) {
  auto field = status.GetPayload(kFieldPayload);
  if (!field) return std::nullopt;
  return std::string(*field);
}

std::optional<Duration> RetryAfter(const absl::Status& status) {
  auto ms = status.GetPayload(kRetryAfterPayload);
  if (!ms) return std::nullopt;
  const std::string text(*ms);
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return Duration(value);
}

}  // namespace tessera::cli

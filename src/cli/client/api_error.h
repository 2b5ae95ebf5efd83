// ApiError: the REST API's error answers as absl::Status, and the marks the CLI needs to tell
// "the server said no" from "no server answered".
//
// Every API error is JSON (docs/api.md): {"error": {"code": "INVALID_ARGUMENT", "message":
// "...", "field": "spec.tasks[1].resources.gpu"}}. ApiErrorFromResponse turns one into a status
// with that canonical code and the server's message unchanged, and attaches the field and the
// Retry-After delay (429) as payloads. An answer that is not such a body (a proxy's HTML page)
// gets the code of its HTTP status and a message naming the status and the start of the body.
// Transport failures (nothing listening, timeouts, a connection cut mid-answer) are
// UnreachableError: Unavailable, marked so IsUnreachable() tells them from a server's own
// 503 UNAVAILABLE answer.
// Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "tessera/common/clock.h"

namespace tessera::cli {

// The status for an HTTP answer with a non-2xx `http_status`. `retry_after` is the raw
// Retry-After header ("" when absent).
absl::Status ApiErrorFromResponse(int http_status, std::string_view body,
                                  std::string_view retry_after);

// "cannot connect to http://127.0.0.1:8080: connection refused".
absl::Status UnreachableError(std::string_view message);

// True for UnreachableError statuses only.
bool IsUnreachable(const absl::Status& status);
// The field path the server blamed, when it named one.
std::optional<std::string> ErrorField(const absl::Status& status);
// How long the server asked to wait before retrying (429 Retry-After), when it said.
std::optional<Duration> RetryAfter(const absl::Status& status);

// The canonical code for a name as the API writes it ("INVALID_ARGUMENT"); nullopt when unknown.
std::optional<absl::StatusCode> StatusCodeFromName(std::string_view name);

}  // namespace tessera::cli

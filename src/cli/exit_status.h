// The exit statuses of the client verbs (submit, get, list, describe, cancel, logs, nodes,
// clusters, token, replay) and how their errors are printed:
//   0 success;
//   1 the server answered with an error: "error: <message>" on stderr, the message as the
//     server wrote it, preceded by the field path when the server named one that the message
//     does not already contain;
//   2 bad usage (flags, files): the message names the flag or the file;
//   3 no server answered: the message names the address tried.
// Thread-safety: functions on the given streams; callers serialise their use.
#pragma once

#include <ostream>
#include <string_view>

#include "absl/status/status.h"

namespace tessera::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

// Prints `status` (not OK) from a RestClient call on `err` and returns 1 or 3.
int ReportApiError(const absl::Status& status, std::ostream& err);

// Prints "error: <message>" on `err` and returns 2.
int ReportUsageError(std::string_view message, std::ostream& err);

// The line ReportApiError prints, without "error: " and the newline.
std::string ApiErrorMessage(const absl::Status& status);

}  // namespace tessera::cli

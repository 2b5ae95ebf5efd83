// Durations at the edges: seconds as numbers ("90", "1.5") or Go-style strings ("90s", "5m",
// "1h30m", "250ms"; units ns, us/µs, ms, s, m, h). Negative or malformed values are errors naming
// the field; so is a value that is not a whole number of milliseconds ("0.5ms"), the resolution
// of Duration, or one beyond its range. Surrounding whitespace is ignored.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/common/clock.h"

namespace tessera {

absl::StatusOr<Duration> ParseDuration(std::string_view text, std::string_view field);

// 5400000 ms -> "1h30m"; 1500 ms -> "1.5s"; 0 -> "0s".
std::string FormatDuration(Duration d);

}  // namespace tessera

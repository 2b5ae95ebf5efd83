// Wall-time limits as `tessera submit --time` takes them: Slurm's forms, or a Go-style duration.
//
//   "90"          minutes (as sbatch: a bare number is minutes, not seconds)
//   "90:30"       minutes:seconds
//   "1:30:00"     hours:minutes:seconds
//   "2-12"        days-hours;  "2-12:30" days-hours:minutes;  "2-12:30:15"
//   days-hours:minutes:seconds "1h30m", "45s", "2h"   Go-style (core/duration.h) "unlimited",
//   "infinite"  no limit (nullopt)
// The leading number may be as large as needed ("120:00" = two hours); the ones after a ':'
// are 0..59, hours after a '-' 0..23. A limit must be positive. Errors are InvalidArgument
// naming `flag` and the forms accepted.
// Thread-safe: pure function.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/common/clock.h"

namespace tessera::cli {

absl::StatusOr<std::optional<Duration>> ParseWallTime(std::string_view text, std::string_view flag);

}  // namespace tessera::cli

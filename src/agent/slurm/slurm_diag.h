// SlurmDiag: slurmctld's clock, read from slurmrestd's diagnostics (GET /slurm/<version>/diag).
//
// The agent asks for incremental lists (`?update_time=S`) in slurmctld's seconds, so it reads
// slurmctld's clock once at start from `statistics.req_time`: the epoch second slurmctld
// answered the request in. v0.0.38 and v0.0.39 send it as a number, v0.0.40 and later as
// {"set": true, "infinite": false, "number": N}; both read the same.
//
// Untrusted input: InvalidArgument naming the field when the reply is not JSON, has no
// "statistics" object, or its req_time is missing, unset, not a positive integer or beyond the
// year 2286. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::agent {

// Epoch seconds on slurmctld's clock.
absl::StatusOr<int64_t> ParseSlurmClock(std::string_view json);

}  // namespace tessera::agent

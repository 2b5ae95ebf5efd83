// The body of a job-end notice (slurm_job_notices.h): a form, as `curl --data` sends it, whose
// field `job_id` is the Slurm job id, e.g. "job_id=4211" or "job_id=4211&state=COMPLETED"
// (other fields are ignored). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::agent {

// The job id the notice names. InvalidArgument naming the field otherwise: "job_id: missing",
// "job_id: must be a positive integer, not \"x\"" (the value quoted at most 32 bytes).
absl::StatusOr<int64_t> ParseJobEndedNotice(std::string_view body);

}  // namespace tessera::agent

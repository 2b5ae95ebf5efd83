// A line of Slurm's job-completion log (JobCompType=jobcomp/filetxt), which slurmctld appends
// as each job ends: "JobId=4211 UserId=alice(1000) GroupId=... JobState=COMPLETED ...".
// Only the job id is read; the backend reads the job itself from slurmrestd (slurm_jobs.h).
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::agent {

// The job id the line starts with. InvalidArgument naming the field otherwise: "JobId:
// missing", "JobId: must be a positive integer, not \"x\"" (at most 32 bytes shown, escaped).
absl::StatusOr<int64_t> ParseJobCompLine(std::string_view line);

}  // namespace tessera::agent

// A line of Slurm's job-completion log (JobCompType=jobcomp/filetxt), which slurmctld appends
// as each job ends:
//   JobId=4211 UserId=alice(1000) GroupId=... Name=x JobState=COMPLETED Partition=gpu
//   TimeLimit=... StartTime=2026-12-07T19:22:13 EndTime=2026-12-07T19:22:14 ... ExitCode=0:0
// Times are slurmctld's local time, read in the agent's (run both in one time zone); ExitCode
// is "status:signal". Pure; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "agent/slurm/slurm_jobs.h"

namespace tessera::agent {

// The job the line names: its id, and what the line tells of its end — `state` (JobState),
// `exit_code` as Slurm's raw wait status (status << 8, or the signal), `start_time` and
// `end_time` — each left empty when the line lacks it or it cannot be read. InvalidArgument
// naming the field when the line does not start with the job id: "JobId: missing", "JobId:
// must be a positive integer, not \"x\"" (at most 32 bytes shown, escaped).
absl::StatusOr<SlurmJob> ParseJobCompLine(std::string_view line);

// Whether the line tells the job's end whole — it ended COMPLETED or CANCELLED, with its exit
// code and start time — so that it need not be read from slurmrestd. Other ends (FAILED,
// NODE_FAIL, ...) carry a reason the line lacks and are read.
bool TellsWholeEnd(const SlurmJob& logged);

}  // namespace tessera::agent

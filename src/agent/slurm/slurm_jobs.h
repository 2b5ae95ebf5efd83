// SlurmJobs: slurmrestd's job list (GET /slurm/<version>/jobs, .../job/{id}) and what a job's
// state means for the Tessera task it runs.
//
// Tessera's jobs carry the launch id twice: as the job name and in the comment
// "tessera:<launch id>" (kCommentPrefix). LaunchIdOf reads the comment, so a user's job that
// happens to share a name is never taken for one of Tessera's.
//
// State mapping (job_state):
//   PENDING, CONFIGURING, REQUEUED, ... (waiting)      kWaiting: nothing to report
//   RUNNING, COMPLETING, SUSPENDED, STAGE_OUT, ...     kRunning: the task started (start_time)
//   COMPLETED, exit 0                                  Succeeded
//   COMPLETED or FAILED, exit status n != 0            Failed "Error", exit code n
//   FAILED, killed by signal s                         Failed "Killed", exit code 128 + s
//   FAILED, reason JobLaunchFailure                    Failed "StartFailed"
//   CANCELLED                                          Cancelled
//   TIMEOUT, DEADLINE                                  Failed "TimeLimitExceeded"
//   NODE_FAIL, BOOT_FAIL                               Failed "Lost"
//   PREEMPTED, OUT_OF_MEMORY                           Failed "Killed"
//   any end after Tessera asked to cancel              Cancelled
// exit_code is Slurm's raw wait status (exit 3 is 768, SIGTERM is 15). Times are epoch
// seconds, turned into TimePoints.
//
// Every REST API version from v0.0.38 to v0.0.43 is read by the one parser, into the same
// SlurmJob (testdata/README.md lists the shapes and where each is documented):
//   job_state   "RUNNING" (v0.0.38, v0.0.39), or a list of the base state and its flags
//               (v0.0.40+: ["PENDING", "REQUEUED"]) read as v0.0.38's word — the flag Slurm's
//               job_state_string() names first (COMPLETING, CONFIGURING, REQUEUED, ...), else
//               the base state
//   times       epoch seconds, or {"set", "infinite", "number"} (v0.0.40+); unset and
//               infinite read as absent
//   exit_code   the raw wait status (v0.0.38), flagged (v0.0.39), or {"status": [...],
//               "return_code": N, "signal": {"id": N, "name": ...}} (v0.0.40+), turned into
//               the raw wait status (return code << 8, or the signal number)
//
// Untrusted input: a reply that is not JSON or has no "jobs" list is InvalidArgument; a job
// entry with a wrong type or no job_id is skipped with its error listed, naming the field
// ("slurm jobs[3]: exit_code.return_code.number: must be an integer, got \"x\"").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/cluster/cluster.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

inline constexpr std::string_view kCommentPrefix = "tessera:";

struct SlurmJob {
  int64_t id = 0;
  std::string name;
  std::string comment;
  std::string state;         // job_state, upper case: "RUNNING"
  std::string state_reason;  // "None", "Resources", "JobLaunchFailure"
  std::string nodes;         // "node3", "node[1-2]"
  std::string partition;
  std::optional<int64_t> exit_code;  // raw wait status
  std::optional<TimePoint> start_time;
  std::optional<TimePoint> end_time;
};

struct SlurmJobList {
  std::vector<SlurmJob> jobs;
  std::vector<std::string> errors;  // one line per job entry left out as malformed
  // The reply to an incremental read (`?update_time=T`) says that no job changed since T: no
  // jobs (an empty or missing list) and the warning "No job changes since update_time=T", the
  // answer of slurmrestd from
  // v0.0.39 on (its openapi/v0.0.39 and openapi/slurmctld plugins) where 22.05 answers HTTP 304.
  bool unchanged = false;
};

absl::StatusOr<SlurmJobList> ParseSlurmJobs(std::string_view json);

// The launch id of one of Tessera's jobs (from its comment); "" for any other job.
std::string LaunchIdOf(const SlurmJob& job);

enum class SlurmJobPhase { kWaiting, kRunning, kEnded };
SlurmJobPhase PhaseOf(std::string_view job_state);

// How the job's task ended; nullopt while it waits or runs. `cancel_requested`: Tessera asked
// for it to stop, so any end is Cancelled. The time is the job's end_time, else `now`.
std::optional<TaskEnd> TaskEndOf(const SlurmJob& job, std::string_view launch_id,
                                         bool cancel_requested, TimePoint now);

}  // namespace tessera::agent

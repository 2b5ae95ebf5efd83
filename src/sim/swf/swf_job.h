// SwfJobSpec: the one mapping from a Standard Workload Format row (swf_trace.h) to a Tessera job,
// shared by `tessera sim --swf` (swf_workload.h) and `tessera replay --swf`
// (cli/replay/trace_jobs.h), so that a log row is the same job in a simulation and in a replay
// against a server.
//
// The rule, and why:
//   processors  P = requested_processors when known (> 0), else allocated_processors (> 0). The
//               request is what the scheduler sees at submission (Slurm's -n, PBS's nodes=); the
//               allocation is its answer, which a simulation is meant to reproduce, not to copy.
//               Logs that record only the allocation (NASA iPSC) still give a size.
//   tasks       one task group "proc" of P replicas, each 1 cpu (1000 millicores) and, when the
//               log gives it, requested_memory KB of memory (SWF memory is per processor, like
//               Slurm's --mem-per-cpu); no memory otherwise.
//   gang        min_available = P: an SWF job is rigid, all of its processors or none.
//   duration    run_time seconds: how long the job holds its processors on simulated nodes.
//   time limit  requested_time when known and at least run_time, else run_time. Logs hold jobs
//               that ran past their request (killed late, or a grace period); a limit below the
//               run would end the job early, so the replayed or simulated job would not be the
//               logged one. A log without requested times gives backfill the run time (an exact
//               estimate), as simulation studies of such logs do; time_limit_raised says when
//               the request was raised.
// The spec has no name, queue or placement constraints: the callers add them (the simulator
// its queue and home cluster, the replay its name, labels and toleration, and scales the times).
//
// A row that cannot be a job gets a skip reason instead, counted by the callers:
//   "submit time unknown", "run time <= 0 or unknown" (cancelled jobs log 0), "processors unknown",
//   "more than N processors (tasks per job)" (kMaxTasksPerJob), "requested memory too large"
//   (over kMaxSwfMemoryKb per processor).
// Thread-safety: pure functions; results are value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/job.h"
#include "sim/swf/swf_trace.h"

namespace tessera::sim::swf {

// The task group every SWF job has.
inline constexpr char kSwfTaskGroup[] = "proc";
// One cpu, in millicores.
inline constexpr int64_t kSwfMilliPerCpu = 1000;
// The largest memory per processor a row may ask for: 1 PiB (in KB), far beyond any machine.
inline constexpr int64_t kMaxSwfMemoryKb = int64_t{1} << 40;

struct SwfJobMapping {
  std::optional<JobSpec> spec;     // set when the row is a job
  std::string skip_reason;         // why it is not; empty when it is
  bool time_limit_raised = false;  // requested_time was below run_time: limit = run_time
};

// The processors the job asks for (the rule above); nullopt when neither count is known.
std::optional<int64_t> SwfJobProcessors(const SwfJob& job);

// The job of one row, or why there is none.
SwfJobMapping SwfJobSpec(const SwfJob& job);

}  // namespace tessera::sim::swf

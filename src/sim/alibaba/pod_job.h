// PodJobSpec: the one mapping from a pod of the Alibaba GPU trace (alibaba_trace.h) to a Tessera
// job, shared by `tessera replay --pods` (cli/replay/trace_jobs.h) and the trace simulator
// (`tessera sim`, replay_runner.h), so that a pod asks for the same resources and runs as long in
// both.
//
// The rule, and why:
//   request   the pod's TaskRequest as the pod list gives it (cpu millicores, memory bytes,
//             num_gpu x gpu_milli — 0.46 of one GPU, or whole GPUs — and the allowed GPU models):
//             the pod's spec, what the scheduler saw at creation.
//   run time  deletion_time - scheduled_time, or - creation_time when the pod never ran (its
//             lifetime: a pending pod held nothing, but a replay has no other duration for it),
//             at least 0 seconds; unknown without deletion_time (a pod still running when the
//             trace ended) or without either start. The simulator holds such a pod's resources
//             to the end of the trace.
//   job       one task group "main" of one replica with the request (a pod is one task, its own
//             gang), duration = the run time, no time limit (the trace has no requested times).
// The spec has no name, queue or placement constraints: the caller adds them.
// A pod without a run time is no job: skip reason "unknown run time".
// Thread-safety: pure functions; results are value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/job.h"
#include "sim/alibaba/alibaba_trace.h"

namespace tessera::sim::alibaba {

// The task group of a pod's job.
inline constexpr char kPodTaskGroup[] = "main";

struct PodJobMapping {
  std::optional<JobSpec> spec;  // set when the pod is a job
  std::string skip_reason;      // why it is not; empty when it is
};

// The pod's run time in seconds (the rule above); nullopt when unknown.
std::optional<int64_t> PodRunSeconds(const TraceTask& pod);

// The job of one pod, or why there is none.
PodJobMapping PodJobSpec(const TraceTask& pod);

}  // namespace tessera::sim::alibaba

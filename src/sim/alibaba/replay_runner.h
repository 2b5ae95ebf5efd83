// Time-driven replay of the Alibaba trace: tasks arrive at their creation_time, ask for the pod's
// request and hold it for the pod's run time (PodRunSeconds, pod_job.h, the mapping `tessera
// replay --pods` uses too: deletion_time - scheduled_time, creation_time when the pod was never
// scheduled; forever when it has no deletion_time), on the discrete-event engine
// (sim/engine/event_queue.h).
//
// A task is placed on arrival through Framework::PlaceTask and ClusterState::Assume. One that
// does not fit now but could fit an empty cluster (the framework's satisfiability mode) waits
// in a FIFO pending queue; one that could never fit is counted as failed. When a task finishes,
// a scheduling cycle at the same instant retries the pending tasks in FIFO order (a task that
// does not fit stays queued; later ones may still be placed, as in kube-scheduler). Time starts
// at the earliest creation_time. `arrival_speedup` > 1 compresses the arrival times (creation
// times are divided by it; how long each task runs is unchanged): the trace spreads 8,152 pods
// over about 149 days, which loads the 6,212-GPU cluster to well under 1% on average, so a
// speedup is how a replay reaches the contended regime. Metrics are sampled every
// `sample_interval` of simulated time:
// allocation per resource, F(M) and the fragmentation ratio, running, pending, failed and
// completed counts. The time means of GPU allocation and fragmentation ratio and the peak GPU
// allocation are exact, taken over every state change (not over the samples), so they do not
// depend on `sample_interval`.
//
// Deterministic for (trace, policy, seed, options). Runs share nothing mutable.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba/trace_input.h"
#include "tessera/common/clock.h"

namespace tessera::sim::alibaba {

struct ReplayOptions {
  std::string policy = "fgd";
  uint64_t seed = 42;
  Duration sample_interval = std::chrono::hours(1);
  double arrival_speedup = 1;                // > 0; creation times are divided by it
  std::atomic<int64_t>* progress = nullptr;  // incremented once per submission
};

struct ReplaySample {
  double time_s = 0;  // since the first creation_time
  double gpu_alloc_pct = 0;
  double cpu_alloc_pct = 0;
  double memory_alloc_pct = 0;
  double frag_pct = 0;        // F(M), % of all GPUs
  double frag_ratio_pct = 0;  // F(M) / free milli-GPU, %
  int64_t running = 0;
  int64_t pending = 0;
  int64_t failed = 0;
  int64_t completed = 0;
};

struct ReplayResult {
  std::string workload;
  std::string policy;
  uint64_t seed = 0;
  std::vector<ReplaySample> samples;
  int64_t submitted = 0;
  int64_t placed_on_arrival = 0;
  int64_t placed_after_wait = 0;
  int64_t failed = 0;         // could never fit
  int64_t still_pending = 0;  // waiting when the trace ended
  int64_t completed = 0;
  double wait_mean_s = 0;  // over the tasks that waited and were placed
  double wait_p50_s = 0;
  double wait_p95_s = 0;
  double gpu_alloc_time_mean_pct = 0;  // time-weighted over the run
  double frag_ratio_time_mean_pct = 0;
  double gpu_alloc_peak_pct = 0;  // the highest GPU allocation held for any time, or at the end
  double last_arrival_s = 0;  // when the last task arrived
  double simulated_seconds = 0;
  double wall_seconds = 0;
};

// InvalidArgument when the pod list has no times (the 5-column form) or the policy is unknown;
// Internal when the framework errs or the state refuses a chosen placement.
absl::StatusOr<ReplayResult> RunReplay(const TraceInput& input, const ReplayOptions& options);

}  // namespace tessera::sim::alibaba

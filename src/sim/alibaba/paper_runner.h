// The FGD paper's experiment for one (policy, seed): every task of the (inflated) trace arrives
// once, in a seeded random order, and is placed by the policy's built-in profile or counted as
// failed. Nothing ever leaves, nothing is retried; time does not move (§2.8 of the definitions).
//
// Wiring: a ClusterState of the trace's nodes (permuted with the run's Rng, as the artifact
// permutes them), a Framework built from BuiltinProfile(policy) and BuiltinPlugins(), and a
// Handle with the run's Rng (seeded with the seed; the same Rng first draws the arrival order
// and clones, see inflation.h), a ManualClock, the target workload M and a sink that records
// bindings. Each task goes through Framework::PlaceTask then ClusterState::Assume.
// After every arrival the run samples arrived milli-GPU, allocation per resource, F(M) and the
// fragmentation ratio (incrementally, cluster_metrics.h) and buckets them by arrived % (curve.h).
//
// A run is deterministic for (trace, policy, seed, options). Runs share nothing mutable, so
// different runs may execute on different threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba/curve.h"
#include "sim/alibaba/trace_input.h"

namespace tessera::sim::alibaba {

struct PaperRunOptions {
  std::string policy = "fgd";  // a built-in profile name
  uint64_t seed = 42;
  double inflate = 1.3;  // tune ratio; <= 0 keeps the trace as it is
  bool shuffle_nodes = true;
  bool keep_samples = false;  // keep the per-arrival samples in the result
  // Incremented once per arrival when set (progress reporting from other threads).
  std::atomic<int64_t>* progress = nullptr;
};

// One per-arrival observation.
struct ArrivalSample {
  int32_t arrival = 0;  // 0-based
  bool placed = false;
  double arrived_pct = 0;  // arrived milli-GPU / capacity x 100
  double gpu_alloc_pct = 0;
  double cpu_alloc_pct = 0;
  double memory_alloc_pct = 0;
  double frag_milli = 0;      // F(M)
  double frag_pct = 0;        // F(M) / capacity x 100
  double frag_ratio_pct = 0;  // F(M) / free milli-GPU x 100
  int64_t failed_tasks = 0;   // so far
};

struct PaperRunResult {
  std::string workload;
  std::string policy;
  uint64_t seed = 0;
  double inflate = 0;

  // Over arrived workload 0..130 %.
  Curve gpu_allocation;     // GPU allocation %  (unallocated = 100 - this)
  Curve frag_amount;        // F(M), % of all GPUs
  Curve frag_ratio;         // F(M) / free GPU, %
  Curve cpu_allocation;     // %
  Curve memory_allocation;  // %

  int64_t arrived_tasks = 0;
  int64_t clones = 0;
  int64_t removed = 0;
  int64_t failed_tasks = 0;
  int64_t arrived_gpu_milli = 0;
  int64_t failed_gpu_milli = 0;
  // Failed tasks per kind ("cpu-only", "sharing", "1-gpu", "2-gpu", ...) and per reason code of
  // the diagnosis ("InsufficientResources", ...).
  std::map<std::string, int64_t> failed_by_kind;
  std::map<std::string, int64_t> failed_by_reason;
  // At the end of the run.
  double final_gpu_alloc_pct = 0;
  double final_cpu_alloc_pct = 0;
  double final_memory_alloc_pct = 0;
  double final_frag_pct = 0;
  double final_frag_ratio_pct = 0;
  double wall_seconds = 0;
  std::vector<ArrivalSample> samples;  // when keep_samples
};

// "cpu-only", "sharing", "1-gpu", "2-gpu", ... for a task request.
std::string TaskKind(const TaskRequest& request);

// Runs the experiment. Errors: InvalidArgument for an unknown policy; Internal when the
// framework reports an error or the state refuses a placement the framework chose.
absl::StatusOr<PaperRunResult> RunPaperExperiment(const TraceInput& input,
                                                  const PaperRunOptions& options);

}  // namespace tessera::sim::alibaba

// The FGD paper's target workload M (§2.1 of its definitions): the "typical" task classes of a
// trace with the probability of each.
//
// Tasks are grouped by the key (cpu millicores, milli-GPU per device, GPU count, allowed GPU
// models); memory is not part of the key. Groups are sorted by count, most common first (ties:
// ascending key, so the result is deterministic), and added one at a time until they cover at
// least `popularity_threshold_pct` percent of the tasks considered. Their probabilities are
// then renormalized to sum to 1. CPU-only tasks are included unless `include_cpu_only` is false.
// The class requests carry no memory (fragmentation ignores it).
// Thread-safety: pure functions (LoadTargetWorkload reads its file).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/target_workload.h"
#include "sim/alibaba/alibaba_trace.h"

namespace tessera::sim::alibaba {

struct TargetWorkloadOptions {
  double popularity_threshold_pct = 95;  // the artifact's podPopularityThreshold
  bool include_cpu_only = true;          // the artifact's isInvolvedCpuPods
};

struct TargetWorkloadStats {
  int32_t distinct_classes = 0;  // groups in the trace
  int32_t kept_classes = 0;      // groups in M
  double covered_pct = 0;        // share of the considered tasks that M's groups hold
};

// REQUIRES: `tasks` holds at least one task that is considered. `stats` may be null.
TargetWorkload BuildTargetWorkload(const std::vector<TraceTask>& tasks,
                                   const TargetWorkloadOptions& options = {},
                                   TargetWorkloadStats* stats = nullptr);

// M of the pod list file at `pods_path`, read without its node list: every GPU model a gpu_spec
// names is taken as known (the server's configured target workload, whose clusters join later).
// Errors: LoadPodList's ("file:line: field: problem"; NotFound / PermissionDenied for a file
// that cannot be read), and InvalidArgument when `options` leave no task to consider.
absl::StatusOr<TargetWorkload> LoadTargetWorkload(const std::string& pods_path,
                                                  const TargetWorkloadOptions& options = {},
                                                  TargetWorkloadStats* stats = nullptr);

}  // namespace tessera::sim::alibaba

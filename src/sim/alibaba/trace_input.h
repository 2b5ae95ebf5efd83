// TraceInput: one loaded trace, prepared once and shared read-only by every run of a sweep.
//
// Holds the node list, the pod list, the target workload M built from the pod list (§2.1 of
// the FGD paper's definitions; before any inflation) and M prepared for fast fragmentation
// measurement. `workload_name` is the pod file's stem ("openb_pod_list_default"), the name the
// artifact's result files use.
// Thread-safety: immutable after Load; safe to share between threads.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/target_workload.h"
#include "sched/plugins/gpushare/fragmentation.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/alibaba/target_workload_builder.h"

namespace tessera::sim::alibaba {

struct TraceInput {
  std::string nodes_path;
  std::string pods_path;
  std::string workload_name;
  NodeList nodes;
  PodList pods;
  TargetWorkload target;
  TargetWorkloadStats target_stats;
  std::unique_ptr<gpushare::PreparedWorkload> prepared;  // of `target`

  // Loads both files and builds M. Errors name the file, line and field.
  static absl::StatusOr<std::unique_ptr<TraceInput>> Load(
      const std::string& nodes_path, const std::string& pods_path,
      const TargetWorkloadOptions& options = {});
  // Builds from already parsed lists (tests).
  static std::unique_ptr<TraceInput> FromLists(NodeList nodes, PodList pods,
                                               std::string workload_name,
                                               const TargetWorkloadOptions& options = {});
};

// "dir/openb_pod_list_default.csv" -> "openb_pod_list_default".
std::string WorkloadNameFromPath(const std::string& path);

}  // namespace tessera::sim::alibaba

// GpuClustering: keeps GPU tasks of the same request class together — the FGD paper's baseline
// "GpuClustering". Classes are "sharing", "1 GPU", "2 GPUs", ... (core/hosted_gpu_classes.h). With
// bonus = 25 * (8000 - free milli-GPU of the node) / 8000 (integer arithmetic: the fuller the
// node, the higher), the score is
//
//   75 + bonus   the node hosts GPU tasks of the task's own class only
//   50 + bonus   the node hosts the task's class and others
//   25 + bonus   the node hosts no GPU task
//        bonus   the node hosts other classes only
//
// clamped to [0, 100]. CPU-only tasks score 0 everywhere (a random placement). Reserve takes the
// tightest devices. Memory is ignored.
//
// The node's classes come from Node::hosted_gpu_classes, which ClusterState keeps through
// RecordHostedClass. Score reports kError for a node with GPUs in use but no class recorded:
// its state was built without that bookkeeping and the policy would silently misrank it.
//
// Arguments: none. Thread-safety: Score is const and pure.
// Source: hkust-adsl/kubernetes-scheduler-simulator, gpu_clustering_score.go.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "sched/plugins/gpushare/policy_support.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class GpuClustering final : public ScorePlugin, public gpushare::TightestDeviceReserve {
 public:
  static constexpr std::string_view kName = "GpuClustering";

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
};

}  // namespace tessera

namespace tessera::gpushare {

// The score of `task` on `node` (see above); nullopt when the node uses GPUs but records no
// hosted class.
std::optional<int64_t> GpuClusteringScore(const TaskRequest& task, const Node& node);

}  // namespace tessera::gpushare

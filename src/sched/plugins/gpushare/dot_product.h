// DotProduct: the Tetris-style alignment score, as the FGD paper's baseline "DotProd".
//
// The node's free vector (free cpu, total free milli-GPU) and the task's request vector (cpu,
// gpu_count x gpu_milli) are each divided by the largest node spec (128,000 millicores, 8,000
// milli-GPU); with dot = node . task,
//
//   score = trunc(100 * (1 - dot / 2))
//
// so the node whose free resources align least with the request wins (the artifact's "merge"
// dimension with "max" normalisation). A node without the task's cpu free scores 0. Reserve
// takes the tightest devices. Memory is ignored.
//
// Arguments: none. Thread-safety: Score is const and pure.
// Source: hkust-adsl/kubernetes-scheduler-simulator, dot_product_score.go; Grandl et al.,
// "Multi-resource packing for cluster schedulers" (SIGCOMM'14).
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "sched/plugins/gpushare/policy_support.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class DotProduct final : public ScorePlugin, public gpushare::TightestDeviceReserve {
 public:
  static constexpr std::string_view kName = "DotProduct";

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
};

}  // namespace tessera

namespace tessera::gpushare {

// The score of `task` on `node` (see above).
int64_t DotProductScore(const TaskRequest& task, const Node& node);

}  // namespace tessera::gpushare

// GpuPacking: fills partly used GPUs first, then partly used nodes, then idle nodes — the FGD
// paper's baseline "GpuPacking". Three score bands, highest first:
//
//   [50, 100]  the task fits on partly used devices only: 100 - (sum over the devices it would
//              take of their free percent) / 10, at least 50;
//   [33, 50]   the node is partly used but the task needs fully free devices: 50 - the number
//              of fully free devices it takes, at least 33;
//   33 - n     the node is idle (all n devices fully free): max(33 - n, n).
//
// The devices "it would take" are the fitting devices in ascending order of free milli-GPU, as
// the artifact picks them. CPU-only tasks score 0 everywhere (a random placement); so does a
// node where the task's devices do not fit. All arithmetic is integer, as in the artifact.
// Reserve takes the tightest devices. Memory is ignored.
//
// Arguments: none. Thread-safety: Score is const and pure.
// Source: hkust-adsl/kubernetes-scheduler-simulator, gpu_packing_score.go.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "sched/plugins/gpushare/policy_support.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class GpuPacking final : public ScorePlugin, public gpushare::TightestDeviceReserve {
 public:
  static constexpr std::string_view kName = "GpuPacking";

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
};

}  // namespace tessera

namespace tessera::gpushare {

// The score of `task` on `node` (see above).
int64_t GpuPackingScore(const TaskRequest& task, const Node& node);

}  // namespace tessera::gpushare

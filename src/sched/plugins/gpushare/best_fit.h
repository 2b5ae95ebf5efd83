// BestFit: prefers the node the task leaves with the least free resources — the FGD paper's
// baseline "BestFit". With the node's free cpu and total free milli-GPU after placing the task,
// each divided by the largest node spec (128,000 millicores, 8,000 milli-GPU),
//
//   s = 0.5 * cpu_left / 128000 + 0.5 * gpu_left / 8000,   score = trunc(100 * (1 - s))
//
// and NormalizeScore rescales the feasible nodes' scores min-max to [0, 100] (integer arithmetic;
// all 0 when every node scores the same), as the artifact does. A node without the task's cpu or
// milli-GPU free scores 0. Reserve takes the tightest devices. Memory is ignored.
//
// Arguments: none. Thread-safety: Score is const and pure; NormalizeScore only rewrites the span
// it is given.
// Source: hkust-adsl/kubernetes-scheduler-simulator, best_fit_score.go and NormalizeScore in
// plugin_utils.go.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "sched/plugins/gpushare/policy_support.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class BestFit final : public ScorePlugin, public gpushare::TightestDeviceReserve {
 public:
  static constexpr std::string_view kName = "BestFit";

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
  bool HasNormalizeScore() const override { return true; }
  SchedStatus NormalizeScore(const CycleState& state, const TaskRequest& task,
                             std::span<int64_t> scores) const override;
};

}  // namespace tessera

namespace tessera::gpushare {

// The raw score of `task` on `node`, before normalisation (see above).
int64_t BestFitScore(const TaskRequest& task, const Node& node);

// Min-max rescaling to [kMinNodeScore, kMaxNodeScore]; all kMinNodeScore when the scores are
// equal.
void MinMaxNormalize(std::span<int64_t> scores);

}  // namespace tessera::gpushare

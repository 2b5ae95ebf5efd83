// Random: places a task on a uniformly random feasible node and, for a sharing task, on a
// uniformly random fitting device of it — the FGD paper's baseline "Random".
//
// As in the artifact, one feasible node drawn uniformly at random scores 100 and every other
// one 0: Score is the constant 0 (so it caches like any pure score), and NormalizeScore, which
// sees the feasible nodes of the attempt, raises one of them, drawn with the Handle's Rng, to
// 100. The winner is unique, so the placement is uniform whatever the framework's tie-break
// (uniform, or first node in order as the artifact's scheduler does). Reserve draws the device
// of a sharing task uniformly among the devices that fit; whole-GPU tasks take the lowest-index
// fully free devices, as in the artifact.
//
// Arguments: none. Needs handle.rng. Thread-safety: Score is const and pure; NormalizeScore and
// Reserve run on the scheduling thread, which owns the Rng.
// Source: hkust-adsl/kubernetes-scheduler-simulator, random_score.go and the "random" GPU
// selection of open_gpu_share.go.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/common/rng.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/reserve_plugin.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class Random final : public ScorePlugin, public ReservePlugin {
 public:
  static constexpr std::string_view kName = "Random";

  // InvalidArgument on any argument; FailedPrecondition without handle.rng.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  explicit Random(Rng* rng) : rng_(rng) {}

  std::string_view name() const override { return kName; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
  bool HasNormalizeScore() const override { return true; }
  SchedStatus NormalizeScore(const CycleState& state, const TaskRequest& task,
                             std::span<int64_t> scores) const override;
  SchedStatus Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                      Placement* placement) override;

 private:
  Rng* rng_;
};

}  // namespace tessera

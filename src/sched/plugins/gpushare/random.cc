#include "sched/plugins/gpushare/random.h"

#include <algorithm>
#include <concepts>

#include "core/device_selection.h"
#include "fmt/format.h"
#include "sched/plugins/gpushare/policy_support.h"

namespace tessera {

static_assert(std::derived_from<Random, ScorePlugin>);
static_assert(std::derived_from<Random, ReservePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> Random::New(const PluginArgs& args, const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  if (handle.rng == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("{}: needs a random number generator (handle.rng is null)", kName));
  }
  return std::make_unique<Random>(handle.rng);
}

SchedStatus Random::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                          int64_t* score) const {
  *score = kMinNodeScore;
  return {};
}

SchedStatus Random::NormalizeScore(const CycleState& state, const TaskRequest& task,
                                   std::span<int64_t> scores) const {
  std::fill(scores.begin(), scores.end(), kMinNodeScore);
  if (!scores.empty()) scores[rng_->Uniform(scores.size())] = kMaxNodeScore;
  return {};
}

SchedStatus Random::Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                            Placement* placement) {
  if (!gpushare::NeedsDeviceChoice(task, *placement)) return {};
  if (!task.IsSharing())
    return gpushare::FillDevices(task, SelectTightestDevices(node, task), placement);
  const DeviceList feasible = FeasibleDevices(node, task);
  if (feasible.empty()) return SchedStatus::Unschedulable(gpushare::kNoFittingDevices);
  return gpushare::FillDevices(task, DeviceList{feasible[rng_->Uniform(feasible.size())]},
                               placement);
}

}  // namespace tessera

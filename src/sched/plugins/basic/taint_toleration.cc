#include "sched/plugins/basic/taint_toleration.h"

#include <algorithm>
#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<TaintToleration, FilterPlugin>);
static_assert(std::derived_from<TaintToleration, ScorePlugin>);

namespace {

bool Tolerated(const Taint& taint, const TaskRequest& task) {
  return std::any_of(task.tolerations.begin(), task.tolerations.end(),
                     [&](const Toleration& t) { return t.Tolerates(taint); });
}

bool IsHard(const Taint& taint) {
  return taint.effect == TaintEffect::kNoSchedule || taint.effect == TaintEffect::kNoExecute;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> TaintToleration::New(const PluginArgs& args,
                                                             const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<TaintToleration>();
}

SchedStatus TaintToleration::Filter(const CycleState& state, const TaskRequest& task,
                                    const Node& node) const {
  for (const Taint& taint : node.taints) {
    if (IsHard(taint) && !Tolerated(taint, task)) return SchedStatus::Unresolvable(kUntolerated);
  }
  return {};
}

SchedStatus TaintToleration::Score(const CycleState& state, const TaskRequest& task,
                                   const Node& node, int64_t* score) const {
  const int64_t untolerated =
      std::count_if(node.taints.begin(), node.taints.end(), [&](const Taint& taint) {
        return taint.effect == TaintEffect::kPreferNoSchedule && !Tolerated(taint, task);
      });
  *score = kMaxNodeScore / (1 + untolerated);
  return {};
}

}  // namespace tessera

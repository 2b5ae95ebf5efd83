#include "sched/plugins/basic/node_unschedulable.h"

#include <algorithm>
#include <concepts>
#include <string>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<NodeUnschedulable, FilterPlugin>);

namespace {

bool ToleratesCordon(const TaskRequest& task) {
  static const Taint kCordonTaint{std::string(NodeUnschedulable::kUnschedulableTaintKey), "",
                                  TaintEffect::kNoSchedule};
  return std::any_of(task.tolerations.begin(), task.tolerations.end(),
                     [](const Toleration& t) { return t.Tolerates(kCordonTaint); });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NodeUnschedulable::New(const PluginArgs& args,
                                                               const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<NodeUnschedulable>();
}

SchedStatus NodeUnschedulable::Filter(const CycleState& state, const TaskRequest& task,
                                      const Node& node) const {
  if (node.removed) return SchedStatus::Unresolvable(kRemoved);
  if (node.condition == NodeCondition::kDown) return SchedStatus::Unresolvable(kDown);
  if (node.unschedulable && !ToleratesCordon(task)) return SchedStatus::Unresolvable(kCordoned);
  return {};
}

}  // namespace tessera

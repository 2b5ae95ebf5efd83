#include "sched/plugins/cluster/cluster_selector.h"

#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<ClusterSelector, FilterPlugin>);
static_assert(std::derived_from<ClusterSelector, PreFilterPlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> ClusterSelector::New(const PluginArgs& args,
                                                             const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<ClusterSelector>();
}

SchedStatus ClusterSelector::PreFilter(CycleState& state, const TaskRequest& task) {
  return task.cluster_selector.empty() ? SchedStatus::Skip() : SchedStatus();
}

SchedStatus ClusterSelector::Filter(const CycleState& state, const TaskRequest& task,
                                    const Node& node) const {
  for (const auto& [key, value] : task.cluster_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) {
      return SchedStatus::Unresolvable(kNotSelected);
    }
  }
  return {};
}

}  // namespace tessera

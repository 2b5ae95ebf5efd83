#include "sched/plugins/basic/node_affinity.h"

#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<NodeAffinity, FilterPlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> NodeAffinity::New(const PluginArgs& args,
                                                          const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<NodeAffinity>();
}

SchedStatus NodeAffinity::Filter(const CycleState& state, const TaskRequest& task,
                                 const Node& node) const {
  for (const auto& [key, value] : task.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) {
      return SchedStatus::Unresolvable(kSelectorMismatch);
    }
  }
  return {};
}

}  // namespace tessera

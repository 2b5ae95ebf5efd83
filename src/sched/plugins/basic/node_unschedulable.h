// NodeUnschedulable: keeps new tasks off nodes that cannot take work.
//
// A Filter. Rejects, in this order, a node that left the inventory (`removed`), a node whose
// agent reports it down (`condition == kDown`) and a cordoned node (`unschedulable`), each with
// its own Reason under the code "NodeUnavailable". All three are UnschedulableAndUnresolvable:
// evicting tasks (preemption) cannot make such a node usable.
//
// As in Kubernetes, a task that tolerates the taint `node.kubernetes.io/unschedulable:NoSchedule`
// (for example with an empty-key Exists toleration) may still be placed on a cordoned node; it is
// never placed on a down or removed node.
//
// Arguments: none. Thread-safe: Filter is const and reads only its inputs.
// Source: kube-scheduler's NodeUnschedulable plugin; Slurm's DRAIN/DOWN node states.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"

namespace tessera {

class NodeUnschedulable final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  // The taint key a task tolerates to be placed on a cordoned node.
  static constexpr std::string_view kUnschedulableTaintKey = "node.kubernetes.io/unschedulable";

  static constexpr Reason kRemoved{"NodeUnavailable", "node is removed"};
  static constexpr Reason kDown{"NodeUnavailable", "node is down"};
  static constexpr Reason kCordoned{"NodeUnavailable", "node is cordoned"};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                     const Node& node) const override;
};

}  // namespace tessera

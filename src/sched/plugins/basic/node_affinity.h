// NodeAffinity: keeps a task on nodes whose labels carry its node selector.
//
// A Filter. Every key=value pair of TaskRequest::node_selector must be among the node's labels
// (an exact match of the value); an empty selector matches every node. A mismatch is
// UnschedulableAndUnresolvable (labels do not change by evicting tasks), code
// "NodeSelectorMismatch", detail "node selector mismatch". The cluster a node belongs to is the
// ordinary label `tessera.io/cluster` here, so `{tessera.io/cluster: slurm-a}` pins a task to
// one cluster.
//
// Arguments: none. Thread-safe: Filter is const and reads only its inputs.
// Source: kube-scheduler's NodeAffinity plugin (its nodeSelector part); Nomad's constraints.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"

namespace tessera {

class NodeAffinity final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeAffinity";

  static constexpr Reason kSelectorMismatch{"NodeSelectorMismatch", "node selector mismatch"};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                     const Node& node) const override;
};

}  // namespace tessera

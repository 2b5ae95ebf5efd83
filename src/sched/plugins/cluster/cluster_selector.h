// ClusterSelector: keeps a task in the clusters its job's clusterSelector names.
//
// A Filter (and a PreFilter that turns it off for jobs without a selector). Every key=value pair of
// TaskRequest::cluster_selector (the job's clusterSelector, copied onto each task by the Scheduler)
// must be among the node's labels, which carry the labels of the node's cluster and
// `tessera.io/cluster: NAME`; an empty selector matches every node. A mismatch is
// UnschedulableAndUnresolvable (labels do not change by evicting tasks), code
// "NodeSelectorMismatch" (the contract's code for label mismatches), detail "cluster not
// selected". The reason is out of scope (sched_status.h): the nodes of other clusters are counted
// after those of the selected ones and do not decide the pending code, so a job pinned to a full
// cluster waits with "InsufficientResources: 0/12 nodes: 4 insufficient gpu, 8 cluster not
// selected".
//
// The server and the scenario parser also merge the clusterSelector into the node selector, so a
// profile without this plugin still honours it (NodeAffinity then says "node selector
// mismatch"); listed before NodeAffinity, this filter gives the cluster-level reason.
//
// Arguments: none. Thread-safe: Filter is const and reads only its inputs.
// Source: Karmada's ClusterAffinity (clusterNames / labelSelector), Kueue's ResourceFlavor
// nodeLabels, Armada's per-cluster node selectors.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/pre_filter_plugin.h"
#include "tessera/sched/registry.h"

namespace tessera {

class ClusterSelector final : public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "ClusterSelector";

  static constexpr Reason kNotSelected{"NodeSelectorMismatch", "cluster not selected",
                                       /*out_of_scope=*/true};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  // Skip (its Filter is then not called) when the task has no cluster selector.
  SchedStatus PreFilter(CycleState& state, const TaskRequest& task) override;
  SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                     const Node& node) const override;
};

}  // namespace tessera

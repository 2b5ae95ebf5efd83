// TaintToleration: honours node taints against the task's tolerations.
//
// A Filter and a Score. A toleration matches a taint with Kubernetes semantics
// (Toleration::Tolerates in core/job.h): equal key, equal value unless the operator is Exists,
// equal effect unless the toleration names none; an empty key with Exists tolerates every taint.
//
// Filter: a node with a NoSchedule or NoExecute taint that no toleration of the task matches is
// rejected as UnschedulableAndUnresolvable (preemption cannot remove a taint), code
// "Untolerated", detail "untolerated taint". PreferNoSchedule taints never reject.
//
// Score: a pure per-node function of the number n of PreferNoSchedule taints the task does not
// tolerate: score = kMaxNodeScore / (1 + n), integer division — 100, 50, 33, 25, ... — so a node
// with fewer untolerated soft taints always scores higher. (kube-scheduler normalises the count
// against the worst feasible node instead; a per-node score keeps the framework's per-class score
// cache valid and needs no NormalizeScore.)
//
// Arguments: none. Thread-safe: Filter and Score are const and read only their inputs.
// Source: kube-scheduler's TaintToleration plugin.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class TaintToleration final : public FilterPlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "TaintToleration";

  static constexpr Reason kUntolerated{"Untolerated", "untolerated taint"};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                     const Node& node) const override;
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
};

}  // namespace tessera

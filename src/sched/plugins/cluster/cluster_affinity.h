// ClusterAffinity: the job's clusterAffinity and clusterAntiAffinity over cluster labels.
//
// Kubernetes node affinity, one level up: the terms look at the labels of the node's cluster
// (every node carries them, `tessera.io/cluster: NAME` included). TaskRequest carries the job's
// terms (core/job.h, ClusterAffinityTerms), copied onto each task by the Scheduler.
//
// As a Filter (required terms):
//   clusterAffinity.required       every requirement must hold: else UnschedulableAndUnresolvable,
//                                  code "NodeSelectorMismatch", detail "cluster affinity not
//                                  satisfied"
//   clusterAntiAffinity.required   a cluster on which any requirement holds is excluded: code
//                                  "NodeSelectorMismatch", detail "cluster excluded by
//                                  anti-affinity"
//                                  Both reasons are out of scope (sched_status.h): they do not
//                                  decide the pending code while nodes of an allowed cluster
//                                  were rejected for another reason.
// As a Score (preferred terms): each clusterAffinity.preferred term whose requirements all hold
// earns its weight, and so does each clusterAntiAffinity.preferred term that does not hold; the
// score is the earned share of the sum of every preferred weight, 0..100 (0 for every node when
// the job prefers nothing). The score depends on the task and the node's labels only, so it needs
// no NormalizeScore: equal across the nodes of a cluster, it moves whole clusters up or down.
//
// Its PreFilter and PreScore return Skip for a job without required (preferred) terms, so a job
// without cluster affinity costs no Filter (Score) call per node.
//
// Operators: In, NotIn, Exists, DoesNotExist, as Kubernetes' NodeSelectorRequirement (NotIn and
// DoesNotExist hold when the label is absent).
//
// Arguments: none. Thread-safe: Filter and Score are const and read only their inputs.
// Source: Kubernetes NodeAffinity (requiredDuringScheduling / preferredDuringScheduling terms),
// Karmada's ClusterAffinity and cluster affinity groups.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/pre_filter_plugin.h"
#include "tessera/sched/pre_score_plugin.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class ClusterAffinity final : public PreFilterPlugin,
                              public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin {
 public:
  static constexpr std::string_view kName = "ClusterAffinity";

  static constexpr Reason kAffinityMismatch{"NodeSelectorMismatch",
                                            "cluster affinity not satisfied",
                                            /*out_of_scope=*/true};
  static constexpr Reason kAntiAffinity{"NodeSelectorMismatch", "cluster excluded by anti-affinity",
                                        /*out_of_scope=*/true};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  // Skip (no Filter calls) when the task has no required terms.
  SchedStatus PreFilter(CycleState& state, const TaskRequest& task) override;
  SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                     const Node& node) const override;
  // Skip (no Score calls: 0 for every node) when the task has no preferred terms.
  SchedStatus PreScore(CycleState& state, const TaskRequest& task) override;
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;
};

}  // namespace tessera

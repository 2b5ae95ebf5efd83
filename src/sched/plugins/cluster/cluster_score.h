// ClusterScore: prefers cheaper clusters, by the cost tier in their labels.
//
// A Score (with a PreScore that skips it while the inventory has a single cluster: tiers are
// cluster labels, and one cluster has nothing to compare). A cluster says what its capacity costs
// with the label `tessera.io/cost-tier`: an integer tier 0..maxTier, lower is cheaper (for example
// 0 owned hardware, 1 reserved cloud capacity, 2 on-demand cloud, …). A node scores
//     (maxTier - tier) x 100 / maxTier
// so tier 0 scores 100 and tier maxTier (or above) 0. A node without the label, or whose value is
// not an integer >= 0, counts as tier maxTier: unlabelled capacity is taken last. Every node of a
// cluster carries the cluster's labels, so the score is equal across a cluster and moves whole
// clusters: with the framework placing a gang inside one cluster (sched/framework.h), the
// cheapest cluster that fits the gang is tried first, as Kueue tries a ClusterQueue's resource
// flavors in their listed order and Karmada weighs clusters by static preference.
// In the default profile its weight (10) makes one tier step (10 points with maxTier 10) worth as
// much as the whole range of LeastAllocated: cost decides between clusters, load within one.
//
// Arguments: `label` (default tessera.io/cost-tier), `maxTier` (integer 1..1000, default 10).
// Thread-safe: Score is const and reads only its inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/pre_score_plugin.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class ClusterScore final : public PreScorePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "ClusterScore";
  static constexpr std::string_view kCostTierLabel = "tessera.io/cost-tier";
  static constexpr std::string_view kLabelArg = "label";
  static constexpr std::string_view kMaxTierArg = "maxTier";
  static constexpr int64_t kDefaultMaxTier = 10;
  static constexpr int64_t kMaxMaxTier = 1000;

  // InvalidArgument for an unknown argument, an empty label, or maxTier outside 1..1000.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  ClusterScore(std::string label, int64_t max_tier)
      : label_(std::move(label)), max_tier_(max_tier) {}

  std::string_view name() const override { return kName; }
  // Skip (no Score calls) when the nodes belong to one cluster (tessera/sched/cluster_count.h):
  // there is no cluster to prefer, and a single-cluster fleet pays nothing for this plugin.
  SchedStatus PreScore(CycleState& state, const TaskRequest& task) override;
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;

  // The tier a node counts as (maxTier when the label is absent or not an integer >= 0).
  int64_t TierOf(const Node& node) const;

 private:
  std::string label_;
  int64_t max_tier_;
};

}  // namespace tessera

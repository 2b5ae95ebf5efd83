#include "sched/plugins/cluster/cluster_affinity.h"

#include <algorithm>
#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {
namespace {

bool AllHold(const std::vector<LabelRequirement>& requirements, const Labels& labels) {
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const LabelRequirement& r) { return r.Matches(labels); });
}

}  // namespace

static_assert(std::derived_from<ClusterAffinity, FilterPlugin>);
static_assert(std::derived_from<ClusterAffinity, ScorePlugin>);
static_assert(std::derived_from<ClusterAffinity, PreFilterPlugin>);
static_assert(std::derived_from<ClusterAffinity, PreScorePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> ClusterAffinity::New(const PluginArgs& args,
                                                             const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<ClusterAffinity>();
}

SchedStatus ClusterAffinity::PreFilter(CycleState& state, const TaskRequest& task) {
  const bool none =
      task.cluster_affinity.required.empty() && task.cluster_anti_affinity.required.empty();
  return none ? SchedStatus::Skip() : SchedStatus();
}

SchedStatus ClusterAffinity::PreScore(CycleState& state, const TaskRequest& task) {
  const bool none =
      task.cluster_affinity.preferred.empty() && task.cluster_anti_affinity.preferred.empty();
  return none ? SchedStatus::Skip() : SchedStatus();
}

SchedStatus ClusterAffinity::Filter(const CycleState& state, const TaskRequest& task,
                                    const Node& node) const {
  if (!AllHold(task.cluster_affinity.required, node.labels)) {
    return SchedStatus::Unresolvable(kAffinityMismatch);
  }
  for (const LabelRequirement& r : task.cluster_anti_affinity.required) {
    if (r.Matches(node.labels)) return SchedStatus::Unresolvable(kAntiAffinity);
  }
  return {};
}

SchedStatus ClusterAffinity::Score(const CycleState& state, const TaskRequest& task,
                                   const Node& node, int64_t* score) const {
  int64_t total = 0;
  int64_t earned = 0;
  for (const PreferredLabelTerm& term : task.cluster_affinity.preferred) {
    total += term.weight;
    if (AllHold(term.match, node.labels)) earned += term.weight;
  }
  for (const PreferredLabelTerm& term : task.cluster_anti_affinity.preferred) {
    total += term.weight;
    if (!AllHold(term.match, node.labels)) earned += term.weight;
  }
  *score = total == 0 ? kMinNodeScore : earned * kMaxNodeScore / total;
  return {};
}

}  // namespace tessera

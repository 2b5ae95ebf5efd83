// Framework: runs scheduling attempts through a resolved profile's plugins.
//
// One Framework per profile, built once at start-up: Create() instantiates every plugin the
// profile names (once each, whatever the number of points it serves) and resolves them into
// per-point vectors, so the hot path does no lookups or casts.
//
// A task attempt (PlaceTask) is a stage chain:
//   PreFilter (once) → Filter (per node, cached) → [PostFilter when none fit]
//   → PreScore (once) → Score (per feasible node, cached) → NormalizeScore → weighted sum
//   → pick the highest total, ties broken as the profile says (uniformly with the Handle's Rng,
//   or the first in node order) → Reserve (devices).
// Filter verdicts and raw scores are cached per task equivalence class and node version
// (ClusterState), so identical tasks — a gang's replicas, a burst of inference replicas, the
// common classes of a trace — reuse each other's work and only changed nodes are re-evaluated;
// a new target workload (SetTargetWorkload) drops them all.
// A PreFilter that returns Skip turns its plugin's Filter off for the attempt, a PreScore that
// returns Skip its Score (the cluster plugins step aside so for jobs without cluster constraints
// and, ClusterScore, with a single cluster: tessera/sched/cluster_count.h).
//
// A gang attempt (ScheduleGang) places a job's tasks one by one, assuming each into the state,
// asks Permit after each, and binds the gang only once permitted; on any failure every task
// reserved in the attempt is forgotten and unreserved: a waiting gang never holds capacity.
//
// A gang stays inside one cluster (Node::cluster). When the state's nodes belong to several
// clusters, ScheduleGang tries the clusters as units: those where the gang's first task fits
// some node, best first by that node's weighted total (so cluster-level scorers — ClusterScore's
// cost tiers, ClusterAffinity's preferred terms — and the load of each cluster's best node
// decide; ties broken as the profile breaks ties between nodes), each attempt restricted to the
// nodes of one cluster, until one permits the gang. A job of a single task needs no such loop:
// its best node decides its cluster. Backfill reservations and victim searches place gangs
// through ScheduleGang, so they too keep each gang in one cluster. With one cluster (the common
// single-cluster deployment) nothing of this runs: the attempt is exactly the single-cluster one.
// Per-cluster best totals come from one extra MaxTree per cluster in each class cache, kept only
// while the state has several clusters. A node's cluster must not change once it is added.
//
// Match modes (one entry point for the live scheduler, the API's explain/estimate and the
// simulator): kAllocate places and binds; kWithoutAllocating answers "where would it go now"
// and leaves the state as it was; kSatisfiability asks "could it ever run" against every node's
// allocatable capacity with nothing placed. (kAllocateOrReserve — backfill reservations — comes
// with the backfill planner.)
//
// Thread-safety: not thread-safe; owned and called by the scheduling thread.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/job.h"
#include "core/placement.h"
#include "sched/cluster_state.h"
#include "sched/profile.h"
#include "tessera/sched/bind_plugin.h"
#include "tessera/sched/diagnosis.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/permit_plugin.h"
#include "tessera/sched/post_filter_plugin.h"
#include "tessera/sched/pre_filter_plugin.h"
#include "tessera/sched/pre_score_plugin.h"
#include "tessera/sched/queue_sort_plugin.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/reserve_plugin.h"
#include "tessera/sched/score_plugin.h"
#include "tessera/sched/target_workload_plugin.h"

namespace tessera {

enum class MatchMode { kAllocate, kWithoutAllocating, kSatisfiability };

// The outcome of one task attempt. `placement` is set exactly when status.ok().
struct TaskAttempt {
  SchedStatus status;
  std::optional<Placement> placement;
  Diagnosis diagnosis;     // per-reason node counts; filled when no node fit
  bool nominated = false;  // a PostFilter plugin made room; retry in a later cycle
};

// The outcome of one gang attempt.
struct GangAttempt {
  SchedStatus status;                 // Success when the gang was permitted (and bound)
  std::vector<Placement> placements;  // one per task placed, in task order; empty on failure
  std::vector<int32_t> task_indices;  // the task index of each placement
  int32_t failed_task = -1;           // the first task that found no node, when any
  // That task's diagnosis. When several clusters were tried, each cluster's nodes are counted
  // under the reasons of its own attempt (the failed task reported is that of the cluster that
  // placed the most gang tasks).
  Diagnosis diagnosis;
  // When no cluster fits a gang whose tasks would fit across several: "the gang fits no single
  // cluster (…: east 2, west 2 of 4)"; empty otherwise.
  std::string note;
};

class Framework {
 public:
  // Builds every plugin the profile names. InvalidArgument names the point and the plugin when a
  // name is unknown, a plugin does not implement the point it is listed at, a weight is < 1, or
  // a factory rejects its arguments.
  static absl::StatusOr<std::unique_ptr<Framework>> Create(const Profile& profile,
                                                           const Registry& registry,
                                                           const Handle& handle);

  ~Framework();

  const std::string& profile_name() const { return profile_name_; }

  // Finds a node (and devices) for one task without changing `state`. With kSatisfiability the
  // nodes are judged as if empty.
  TaskAttempt PlaceTask(const ClusterState& state, const TaskRequest& task,
                        MatchMode mode = MatchMode::kAllocate);

  // Places `tasks` all-or-nothing for their first `min_available` (the gang; tasks beyond it are
  // placed as capacity allows), assuming each into `state`. With kAllocate the placed tasks are
  // bound and stay assumed; with kWithoutAllocating they are forgotten again before returning.
  // The tasks are kept in one cluster (see above); `cluster`, when not empty, is that cluster
  // (the tasks beyond a running gang join its cluster): no node of another is considered.
  // REQUIRES: 1 <= min_available <= tasks.size().
  GangAttempt ScheduleGang(ClusterState& state, std::string_view job,
                           std::span<const TaskRequest> tasks, int32_t min_available,
                           MatchMode mode = MatchMode::kAllocate, std::string_view cluster = {});

  // Hands `workload` to every plugin of the profile that reads the target workload
  // (TargetWorkloadPlugin), then drops every cached verdict and score, so that the next attempts
  // measure against it; a no-op for a profile without such a plugin. The first plugin's error.
  absl::Status SetTargetWorkload(const TargetWorkload& workload);

  // The profile's QueueSort order.
  bool Less(const QueuedJobInfo& a, const QueuedJobInfo& b) const {
    return queue_sort_->Less(a, b);
  }

 private:
  struct ClassCache;  // per equivalence class: cached verdicts and scores per node

  // Restricts an attempt to no cluster (every node) — the only value with a single cluster.
  static constexpr int32_t kAnyCluster = -1;

  // The state's clusters, indexed as nodes are added (node indices and clusters never change).
  struct ClusterIndex {
    uint64_t state_uid = 0;
    int32_t nodes = 0;                          // nodes indexed so far
    uint64_t layout = 0;                        // changes whenever nodes are indexed
    std::vector<std::string> names;             // by cluster id, in order of first node
    std::vector<int32_t> of_node;               // cluster id of each node
    std::vector<int32_t> position;              // each node's position among its cluster's
    std::vector<std::vector<int32_t>> members;  // node indices of each cluster, ascending
    bool several() const { return names.size() > 1; }
  };

  Framework() = default;
  // Brings clusters_ up to date with the state's nodes.
  void IndexClusters(const ClusterState& state);
  // Rebuilds the class cache's per-cluster trees from its totals.
  void RebuildClusterTotals(ClassCache& cache) const;
  TaskAttempt PlaceTaskIn(const ClusterState& state, const TaskRequest& task, int32_t cluster);
  // One gang attempt restricted to `cluster`. With `fits`, a gang that cannot be placed there
  // is not given up at the first sign of it: the remaining tasks are tried too (a task of an
  // equivalence class that already failed is not: the cluster only fills up), and *fits
  // receives how many tasks fit — for the "fits no single cluster" note. Without, the attempt
  // stops as soon as the permit plugins say the gang cannot be placed.
  GangAttempt GangIn(ClusterState& state, std::string_view job, std::span<const TaskRequest> tasks,
                     int32_t min_available, MatchMode mode, int32_t cluster,
                     int32_t* fits = nullptr);
  // The clusters tried for a gang, as described in the class comment; the diagnosis of the
  // clusters left out (its first task fits no node there) is added to `skipped`.
  std::vector<int32_t> ClusterOrder(const ClusterState& state, const TaskRequest& first,
                                    Diagnosis& skipped);
  GangAttempt ScheduleAcrossClusters(ClusterState& state, std::string_view job,
                                     std::span<const TaskRequest> tasks, int32_t min_available,
                                     MatchMode mode);
  ClassCache& CacheFor(const ClusterState& state, const TaskRequest& task);
  // Runs PreFilter and PreScore; marks the filters whose PreFilter returned Skip.
  SchedStatus RunPreFilter(CycleState& cycle, const TaskRequest& task);
  // Re-evaluates the nodes that changed since the cache last looked (every node the first time).
  SchedStatus Refresh(ClassCache& cache, const CycleState& cycle, const ClusterState& state,
                      const TaskRequest& task);
  // Filters and scores one node into the cache; *total is its weighted total (kInfeasible-like
  // minimum when rejected or removed).
  SchedStatus Evaluate(ClassCache& cache, const CycleState& cycle, const ClusterState& state,
                       const TaskRequest& task, int32_t index, int64_t* total);
  // Drops the least recently used class caches (never `keep`) while over the memory budget.
  void EvictIfOverBudget(const ClusterState& state, const ClassCache* keep);
  // A small id for a rejection reason (1-based; reasons are few and static).
  uint16_t ReasonId(const Reason* reason);
  // The highest-scoring feasible node (ties broken with the Rng), or -1 when none is feasible.
  int32_t SelectNode(ClassCache& cache, const CycleState& cycle, const TaskRequest& task,
                     int32_t cluster);
  // Which of `ties` equal best nodes to take (in node order): the first, or one drawn uniformly
  // with the Handle's Rng, as the profile says (no draw when there is one candidate).
  int64_t PickTie(int64_t ties);
  // Why no node of `cluster` (kAnyCluster: of the state) fits the class, from its cached
  // verdicts; kept in the class cache until one of its entries is written again, so the
  // reference is valid until then.
  const Diagnosis& Diagnose(ClassCache& cache, const ClusterState& state, int32_t cluster) const;
  TaskAttempt PlaceOnEmptyNodes(const ClusterState& state, const TaskRequest& task);
  void UnreserveAll(CycleState& cycle, const TaskRequest& task, const Placement& placement);
  SchedStatus Permit(const GangProgress& progress);

  std::string profile_name_;
  Handle handle_;
  TieBreak tie_break_ = TieBreak::kRandom;
  std::vector<std::unique_ptr<Plugin>> owned_;
  QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<PreScorePlugin*> pre_score_;
  std::vector<ScorePlugin*> score_;
  std::vector<int64_t> score_weights_;
  bool any_normalize_ = false;  // some scorer normalizes: totals are rebuilt per attempt
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<BindPlugin*> bind_;
  std::vector<TargetWorkloadPlugin*> workload_readers_;

  std::vector<bool> skipped_filters_;  // this attempt's filters skipped by their PreFilter
  std::vector<bool> skipped_scores_;   // this attempt's scorers skipped by their PreScore
  // This attempt's filters and scorers that were not skipped, for the per-node loops.
  struct ActiveScore {
    size_t index = 0;  // into score_
    int64_t weight = 1;
  };
  std::vector<FilterPlugin*> active_filters_;
  std::vector<ActiveScore> active_scores_;

  std::vector<const Reason*> reasons_;  // interned by ReasonId
  uint64_t use_clock_ = 0;
  uint64_t cache_state_uid_ = 0;
  std::unordered_map<std::string, std::unique_ptr<ClassCache>> caches_;
  ClusterIndex clusters_;
};

}  // namespace tessera

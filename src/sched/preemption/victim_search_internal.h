// VictimSearch: one run of FindVictims (victim_search.h), shared by the files that implement
// it — victim_search.cc (the passes over the gang, the node ranking, the result) and
// victim_search_room.cc (what candidates hold and free per node, evicting and placing).
// Internal to src/sched/preemption; not thread-safe (one run on one thread).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "sched/preemption/node_room.h"
#include "sched/preemption/victim_index.h"
#include "sched/preemption/victim_search.h"

namespace tessera::victim_search_internal {

constexpr std::string_view kPreemptor = "preemptor";
// Single victims are looked for first on each priority level, the youngest first: a shortcut
// for the common cases (a 1-GPU job makes room for a 1-GPU task, an 8-GPU one for an 8-GPU
// task) that spares ranking every node. Only candidates that hold, on one node, at least the
// task's GPUs (its cpu and memory for a CPU-only task) are checked; the node ranking that
// follows finds every other kind of single victim. Bounded: the candidates looked at, and the
// nodes checked.
constexpr int32_t kMaxSinglePops = 1024;
constexpr int32_t kMaxSingleChecks = 64;
// Greedy passes over the gang before falling back to evicting everything useful.
constexpr int32_t kMaxPasses = 8;

inline int64_t StartMs(const VictimCandidate& c) { return c.start_time.time_since_epoch().count(); }

// How good a victim set is, compared lexicographically: lower highest priority, fewer victims,
// lower priority sum, later starts.
struct SetKey {
  int32_t max_priority = 0;
  int32_t count = 0;
  int64_t priority_sum = 0;
  int64_t start_sum = 0;  // milliseconds since the epoch, summed
};

// Whether a single victim holding `totals` on a node is worth checking for `task` (see
// kMaxSinglePops).
inline bool Covers(const TaskRequest& task, const RoomTotals& totals) {
  if (task.NeedsGpu()) return totals.gpu_milli >= task.TotalGpuMilli();
  return totals.cpu >= task.cpu && totals.memory >= task.memory;
}

inline bool Better(const SetKey& a, const SetKey& b) {
  return std::tie(a.max_priority, a.count, a.priority_sum, b.start_sum) <
         std::tie(b.max_priority, b.count, b.priority_sum, a.start_sum);
}

// One run of FindVictims. Invariant between steps: every candidate in `victims_` is forgotten
// from the state, every (task, placement) in `assumed_` is assumed into it, nothing else changed.
//
// The candidates come from a list (ids: positions in it) or from a VictimIndex (ids: its slots;
// ties broken by handle where the list breaks them by position).
class VictimSearch {
 public:
  VictimSearch(ClusterState& state, Framework& framework, std::span<const TaskRequest> tasks,
               int32_t min_available, std::span<const VictimCandidate> candidates)
      : state_(state),
        framework_(framework),
        tasks_(tasks),
        min_available_(min_available),
        candidates_(candidates),
        gpu_totals_only_(std::all_of(tasks.begin(), tasks.end(),
                                     [](const TaskRequest& t) { return t.NeedsGpu(); })),
        full_totals_(!gpu_totals_only_),
        evicted_(candidates.size(), 0) {}
  VictimSearch(ClusterState& state, Framework& framework, std::span<const TaskRequest> tasks,
               int32_t min_available, const VictimIndex& index, int32_t below_priority)
      : state_(state),
        framework_(framework),
        tasks_(tasks),
        min_available_(min_available),
        index_(&index),
        gpu_totals_only_(std::all_of(tasks.begin(), tasks.end(),
                                     [](const TaskRequest& t) { return t.NeedsGpu(); })),
        full_totals_(true),  // the index keeps whole totals
        evicted_(static_cast<size_t>(index.slot_count()), 0) {
    for (const auto& [priority, level] : index.levels()) {
      if (priority >= below_priority) break;
      index_levels_.push_back(&level);
    }
  }

  std::optional<VictimChoice> Run();

 private:
  // Candidates grouped by priority level, lowest first; built a level at a time.
  struct Ranked {
    int32_t priority;
    int32_t index;
    int64_t start;  // milliseconds since the epoch
  };

  const VictimCandidate& C(int32_t c) const {
    return index_ != nullptr ? index_->candidate(c) : candidates_[c];
  }
  // Breaks ties between candidates alike in every other respect: the lower comes first.
  int64_t Order(int32_t c) const { return index_ != nullptr ? index_->candidate(c).job : c; }

  // Partitions the next priority level out of the candidates not yet ranked; false when none.
  bool AddLevel();
  int32_t LevelCount() const {
    return index_ != nullptr ? levels_added_ : static_cast<int32_t>(level_end_.size());
  }
  std::span<Ranked> Level(int32_t level);
  // Makes the per-node totals and holder lists cover every candidate of the first `levels`
  // levels.
  void Accumulate(int32_t levels);
  bool Accumulated(int32_t candidate) const {
    return accumulated_levels_ > 0 && C(candidate).priority <= accumulated_priority_;
  }
  void AccumulateFromIndex(int32_t levels);
  // Adds (+1) or removes (-1) the candidate's holdings to the totals of the nodes it runs on,
  // when it is accumulated, and marks those nodes changed.
  void ApplyTotals(int32_t candidate, int64_t sign);
  void AddToTotals(const TaskRequest& task, const Placement& placement, int64_t sign) {
    RoomTotals& totals = totals_[placement.node_index];
    if (full_totals_) {
      totals.Apply(task, placement, sign);
    } else if (!placement.gpus.empty()) {
      totals.gpu_milli += sign * static_cast<int64_t>(placement.gpus.size()) * placement.gpu_milli;
    }
  }
  // Groups the accumulated holders by node (a counting sort), when they changed.
  void IndexHolders();
  // Whether accumulated candidates run on `node`, and each of them (evicted ones too).
  bool HasHolders(int32_t node) const {
    return index_ != nullptr ? holder_count_[node] > 0
                             : holder_begin_[node + 1] > holder_begin_[node];
  }
  template <typename F>
  void ForEachHolder(int32_t node, F f) const {
    if (index_ == nullptr) {
      for (int32_t h = holder_begin_[node]; h < holder_begin_[node + 1]; ++h) {
        f(holder_candidates_[h]);
      }
      return;
    }
    for (int32_t c : index_->holders(node)) {
      if (Accumulated(c)) f(c);
    }
  }
  // Adds (+1) or removes (-1) candidate's holdings on `node` to `room`.
  template <typename Room>
  void Release(Room& room, int32_t candidate, int32_t node, int64_t sign) const;
  // What the candidate holds on each node it runs on, in one pass over its tasks.
  using PerNodeTotals = absl::InlinedVector<std::pair<int32_t, RoomTotals>, 4>;
  PerNodeTotals TotalsOf(int32_t candidate) const;

  // Frees room for task `task` (not fitting anywhere now) by evicting victims, then places and
  // assumes it. False when no victims do it (or on a framework error: failed_).
  bool MakeRoom(int32_t task);
  bool TrySingles(int32_t task, int32_t level);
  bool TryNodes(int32_t task, int32_t levels);
  // The victims `entry`'s node needs for `task`, by reprieving the accumulated candidates, the
  // most important first, while the task still fits; false when the node does not help.
  bool NodeVictims(const TaskRequest& task, int32_t node, std::vector<int32_t>& victims,
                   SetKey& key);
  // Reprieves the candidates of `order` in turn from `room` (all of them released) while the
  // task still fits the node; returns the ones that could not be.
  std::vector<int32_t> Reprieve(const TaskRequest& task, int32_t node, NodeRoom room,
                                std::span<const int32_t> order) const;
  SetKey KeyOf(std::span<const int32_t> victims) const;
  // True when evicting the candidate alone (holding `totals` there) would let the task fit
  // `node` by arithmetic.
  bool SingleFits(const TaskRequest& task, int32_t candidate, int32_t node,
                  const RoomTotals& totals) const;
  // Evicts `set` and places the task; reprieves the set again when the task still finds no node.
  bool EvictAndPlace(int32_t task, std::span<const int32_t> set);
  bool PlaceAndAssume(int32_t task, bool* placed);

  // One greedy pass over the gang's tasks in order; true when min_available were placed. The
  // tasks placed are forgotten again before returning.
  bool Pass();
  // Evicts every candidate on a node where some task of the gang could fit with all candidates
  // gone; then asks the framework. False when the gang still does not fit.
  bool EvictEverythingUseful();
  // Reprieves victims, the most important first, while the gang still fits.
  void Prune();
  // True when resource arithmetic shows the gang cannot fit the state as it is: its tasks are
  // all alike (whole GPUs or none), none fitted any node before the search changed anything,
  // and the nodes it changed cannot take min_available copies. Spares the framework's
  // attempt (and its diagnosis of every node) for victims that are plainly needed.
  bool ShownUnfit();
  bool ScheduleGang();

  void Evict(int32_t candidate);
  void Reprieve(int32_t candidate);
  void Restore();
  bool MoreImportant(int32_t a, int32_t b) const;
  // The task's equivalence key, computed once.
  const std::string& TaskKey(int32_t task);

  ClusterState& state_;
  Framework& framework_;
  std::span<const TaskRequest> tasks_;
  int32_t min_available_;
  std::span<const VictimCandidate> candidates_;
  const VictimIndex* index_ = nullptr;
  std::vector<const VictimIndex::Level*> index_levels_;  // below the priority bound
  int32_t levels_added_ = 0;
  std::vector<int32_t> holder_count_;            // with an index: accumulated candidates per node
  std::span<const VictimIndex::NodeFree> free_;  // with an index: as of the last TryNodes

  std::vector<Ranked> ranked_;
  std::vector<size_t> level_end_;
  int32_t accumulated_levels_ = 0;
  int32_t accumulated_priority_ = 0;
  std::vector<RoomTotals> totals_;  // per node: what accumulated, not evicted candidates hold
  // Every task of the gang needs GPUs: the totals count milli-GPU only (read from placements
  // alone), which spares reading the requests of every CPU-only candidate.
  bool gpu_totals_only_;
  bool full_totals_;                                  // the totals count cpu and memory too
  std::vector<int32_t> touched_;                      // the nodes holding accumulated candidates
  std::vector<std::pair<int32_t, int32_t>> holders_;  // (node, candidate), accumulated
  std::vector<int32_t> holder_begin_;  // per node + 1: its range in holder_candidates_
  std::vector<int32_t> holder_candidates_;
  bool holders_indexed_ = false;

  // Nodes whose state or totals changed, in order (repeats allowed): a ranking of nodes stays
  // valid for the others.
  std::vector<int32_t> changed_;
  // The nodes ranked for the last task searched, kept for the next task of the same class (a
  // gang's replicas): only changed nodes are ranked again.
  struct NodeRanking {
    std::string task_key;
    int32_t levels = 0;
    size_t changes_seen = 0;
    std::vector<std::pair<SetKey, int32_t>> nodes;  // (key, node)
  };
  NodeRanking ranking_;
  // (task class, level) pairs whose single-victim search found nothing.
  std::vector<std::pair<std::string, int32_t>> singles_exhausted_;
  std::vector<std::string> task_keys_;

  std::vector<uint8_t> evicted_;
  std::vector<int32_t> victims_;
  std::vector<std::pair<int32_t, Placement>> assumed_;
  GangAttempt gang_;     // the last gang attempt that fitted
  bool failed_ = false;  // the framework reported an error
  // Some victims the arithmetic chose did not make the task fit (another filter refused it).
  bool framework_refused_ = false;
  // The gang's first task fitted no node before any eviction.
  bool first_task_fitted_nowhere_ = false;
};

template <typename Room>
void VictimSearch::Release(Room& room, int32_t candidate, int32_t node, int64_t sign) const {
  const VictimCandidate& c = C(candidate);
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    if (c.placements[t].node_index == node) room.Apply(c.tasks[t], c.placements[t], sign);
  }
}

}  // namespace tessera::victim_search_internal

#include "sched/preemption/victim_search.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "sched/preemption/node_room.h"
#include "sched/preemption/victim_index.h"

namespace tessera {
namespace {

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

int64_t StartMs(const VictimCandidate& c) { return c.start_time.time_since_epoch().count(); }

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
bool Covers(const TaskRequest& task, const RoomTotals& totals) {
  if (task.NeedsGpu()) return totals.gpu_milli >= task.TotalGpuMilli();
  return totals.cpu >= task.cpu && totals.memory >= task.memory;
}

bool Better(const SetKey& a, const SetKey& b) {
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

bool VictimSearch::MoreImportant(int32_t a, int32_t b) const {
  const VictimCandidate& x = C(a);
  const VictimCandidate& y = C(b);
  if (x.priority != y.priority) return x.priority > y.priority;
  if (x.start_time != y.start_time) return x.start_time < y.start_time;
  return Order(a) > Order(b);
}

bool VictimSearch::AddLevel() {
  if (index_ != nullptr) {
    if (levels_added_ == static_cast<int32_t>(index_levels_.size())) return false;
    ++levels_added_;
    return true;
  }
  if (ranked_.empty() && !candidates_.empty()) {
    ranked_.reserve(candidates_.size());
    for (size_t i = 0; i < candidates_.size(); ++i) {
      ranked_.push_back(
          {candidates_[i].priority, static_cast<int32_t>(i), StartMs(candidates_[i])});
    }
  }
  const size_t begin = level_end_.empty() ? 0 : level_end_.back();
  if (begin >= ranked_.size()) return false;
  int32_t lowest = ranked_[begin].priority;
  for (size_t i = begin; i < ranked_.size(); ++i) lowest = std::min(lowest, ranked_[i].priority);
  // Stable: each level lists its candidates in the caller's order, which is (most likely) the
  // order of their tasks in memory.
  auto end = std::stable_partition(ranked_.begin() + static_cast<ptrdiff_t>(begin), ranked_.end(),
                                   [&](const Ranked& r) { return r.priority == lowest; });
  level_end_.push_back(static_cast<size_t>(end - ranked_.begin()));
  return true;
}

std::span<VictimSearch::Ranked> VictimSearch::Level(int32_t level) {
  const size_t begin = level == 0 ? 0 : level_end_[level - 1];
  return std::span<Ranked>(ranked_).subspan(begin, level_end_[level] - begin);
}

VictimSearch::PerNodeTotals VictimSearch::TotalsOf(int32_t candidate) const {
  PerNodeTotals out;
  const VictimCandidate& c = C(candidate);
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    const int32_t node = c.placements[t].node_index;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == node; });
    if (it == out.end()) it = out.insert(out.end(), {node, RoomTotals{}});
    it->second.Apply(c.tasks[t], c.placements[t], +1);
  }
  return out;
}

template <typename Room>
void VictimSearch::Release(Room& room, int32_t candidate, int32_t node, int64_t sign) const {
  const VictimCandidate& c = C(candidate);
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    if (c.placements[t].node_index == node) room.Apply(c.tasks[t], c.placements[t], sign);
  }
}

const std::string& VictimSearch::TaskKey(int32_t task) {
  if (task_keys_.empty()) task_keys_.resize(tasks_.size());
  std::string& key = task_keys_[task];
  if (key.empty()) key = tasks_[task].EquivalenceKey();
  return key;
}

void VictimSearch::Accumulate(int32_t levels) {
  if (totals_.empty()) totals_.resize(static_cast<size_t>(state_.size()));
  if (index_ != nullptr) {
    AccumulateFromIndex(levels);
    return;
  }
  // Fetch candidates ahead (memory latency dominates): their records far ahead, then the
  // placements those records point to (scattered allocations of the caller's) nearer.
  constexpr size_t kRecordDistance = 32;
  constexpr size_t kPlacementDistance = 12;
  for (; accumulated_levels_ < levels; ++accumulated_levels_) {
    const std::span<const Ranked> level = Level(accumulated_levels_);
    for (size_t i = 0; i < level.size(); ++i) {
      if (i + kRecordDistance < level.size()) {
        __builtin_prefetch(&candidates_[level[i + kRecordDistance].index]);
      }
      if (i + kPlacementDistance < level.size()) {
        const VictimCandidate& ahead = candidates_[level[i + kPlacementDistance].index];
        __builtin_prefetch(ahead.placements.data());
        if (!gpu_totals_only_) __builtin_prefetch(ahead.tasks.data());
      }
      const Ranked& r = level[i];
      const VictimCandidate& c = candidates_[r.index];
      for (size_t t = 0; t < c.tasks.size(); ++t) {
        const int32_t node = c.placements[t].node_index;
        holders_.emplace_back(node, r.index);
        if (!evicted_[r.index]) AddToTotals(c.tasks[t], c.placements[t], +1);
      }
      accumulated_priority_ = r.priority;
    }
    holders_indexed_ = false;
  }
}

void VictimSearch::AccumulateFromIndex(int32_t levels) {
  if (holder_count_.empty()) holder_count_.resize(totals_.size(), 0);
  for (; accumulated_levels_ < levels; ++accumulated_levels_) {
    const VictimIndex::Level& level = *index_levels_[accumulated_levels_];
    const size_t n = std::min(level.nodes.size(), totals_.size());
    for (size_t i = 0; i < n; ++i) {
      const VictimIndex::NodeHolding& holding = level.nodes[i];
      if (holding.holders == 0) continue;
      totals_[i].Add(holding.totals, +1);
      holder_count_[i] += holding.holders;
    }
    // The level's candidates evicted so far hold nothing.
    for (int32_t c : victims_) {
      const VictimCandidate& v = C(c);
      if (v.priority != level.priority) continue;
      for (size_t t = 0; t < v.tasks.size(); ++t) AddToTotals(v.tasks[t], v.placements[t], -1);
    }
    accumulated_priority_ = level.priority;
    holders_indexed_ = false;
  }
}

void VictimSearch::IndexHolders() {
  if (holders_indexed_) return;
  holders_indexed_ = true;
  const auto n = static_cast<size_t>(state_.size());
  if (index_ != nullptr) {
    touched_.clear();
    for (size_t i = 0; i < n; ++i) {
      if (holder_count_[i] > 0) touched_.push_back(static_cast<int32_t>(i));
    }
    return;
  }
  holder_begin_.assign(n + 1, 0);
  for (const auto& [node, c] : holders_) ++holder_begin_[node + 1];
  for (size_t i = 0; i < n; ++i) holder_begin_[i + 1] += holder_begin_[i];
  holder_candidates_.resize(holders_.size());
  std::vector<int32_t> next(holder_begin_.begin(), holder_begin_.end() - 1);
  for (const auto& [node, c] : holders_) holder_candidates_[next[node]++] = c;
  // A candidate's tasks were added together, so its repeats on a node are adjacent: drop them.
  touched_.clear();
  int32_t write = 0;
  for (size_t i = 0; i < n; ++i) {
    const int32_t begin = holder_begin_[i];
    const int32_t end = holder_begin_[i + 1];
    holder_begin_[i] = write;
    for (int32_t h = begin; h < end; ++h) {
      if (h == begin || holder_candidates_[h] != holder_candidates_[h - 1]) {
        holder_candidates_[write++] = holder_candidates_[h];
      }
    }
    if (end > begin) touched_.push_back(static_cast<int32_t>(i));
  }
  holder_begin_[n] = write;
  holder_candidates_.resize(static_cast<size_t>(write));
}

void VictimSearch::ApplyTotals(int32_t candidate, int64_t sign) {
  const VictimCandidate& c = C(candidate);
  const bool accumulated = Accumulated(candidate);
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    const int32_t node = c.placements[t].node_index;
    changed_.push_back(node);
    if (accumulated) AddToTotals(c.tasks[t], c.placements[t], sign);
  }
}

void VictimSearch::Evict(int32_t candidate) {
  const VictimCandidate& c = C(candidate);
  for (size_t t = 0; t < c.tasks.size(); ++t) state_.Forget(c.tasks[t], c.placements[t]);
  evicted_[candidate] = 1;
  victims_.push_back(candidate);
  ApplyTotals(candidate, -1);
}

void VictimSearch::Reprieve(int32_t candidate) {
  const VictimCandidate& c = C(candidate);
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    // Cannot fail: it puts back exactly what Evict removed, onto room nothing else took
    // (assumed preemptor tasks are forgotten before any reprieve outside EvictAndPlace, and
    // EvictAndPlace reprieves only when it assumed nothing).
    state_.Assume(c.tasks[t], c.placements[t]).IgnoreError();
  }
  evicted_[candidate] = 0;
  victims_.erase(std::find(victims_.begin(), victims_.end(), candidate));
  ApplyTotals(candidate, +1);
}

bool VictimSearch::PlaceAndAssume(int32_t task, bool* placed) {
  *placed = false;
  TaskAttempt attempt = framework_.PlaceTask(state_, tasks_[task], MatchMode::kAllocate);
  if (attempt.status.code() == SchedStatus::Code::kError) {
    failed_ = true;
    return false;
  }
  if (!attempt.placement.has_value()) return true;
  if (!state_.Assume(tasks_[task], *attempt.placement).ok()) {
    failed_ = true;
    return false;
  }
  changed_.push_back(attempt.placement->node_index);
  assumed_.emplace_back(task, *std::move(attempt.placement));
  *placed = true;
  return true;
}

bool VictimSearch::EvictAndPlace(int32_t task, std::span<const int32_t> set) {
  const size_t changes = changed_.size();
  for (int32_t c : set) Evict(c);
  bool placed = false;
  if (PlaceAndAssume(task, &placed) && placed) return true;
  for (size_t k = set.size(); k-- > 0;) Reprieve(set[k]);
  changed_.resize(changes);  // all as it was
  framework_refused_ = true;
  return false;
}

bool VictimSearch::SingleFits(const TaskRequest& task, int32_t candidate, int32_t node,
                              const RoomTotals& totals) const {
  static const NodeRoom kNothing;
  const Node& n = state_.node(node);
  if (!MayFitWithRoom(task, n, totals)) return false;
  NodeRoom room;
  Release(room, candidate, node, +1);
  // A node the task fits without evictions was refused by another filter: evictions cannot help.
  return FitsWithRoom(task, n, room) && !FitsWithRoom(task, n, kNothing);
}

bool VictimSearch::TrySingles(int32_t task, int32_t level) {
  const std::pair<std::string, int32_t> memo(TaskKey(task), level);
  if (std::find(singles_exhausted_.begin(), singles_exhausted_.end(), memo) !=
      singles_exhausted_.end()) {
    return false;
  }
  const TaskRequest& request = tasks_[task];
  int32_t checks = 0;
  // Tries candidate `c`, holding `held` milli-GPU over all its nodes; true when it was evicted
  // and the task placed.
  auto single = [&](int32_t c, int64_t held) {
    // What it holds on all its nodes bounds what it holds on one.
    if (request.NeedsGpu() && held < request.TotalGpuMilli()) return false;
    for (const auto& [node, totals] : TotalsOf(c)) {
      if (!Covers(request, totals)) continue;
      ++checks;
      if (!SingleFits(request, c, node, totals)) continue;
      if (EvictAndPlace(task, std::span<const int32_t>(&c, 1))) return true;
      break;  // evicting it did not let the task fit anywhere
    }
    return false;
  };
  auto more = [&](int32_t pops) {
    return pops < kMaxSinglePops && checks < kMaxSingleChecks && !failed_;
  };
  if (index_ != nullptr) {  // the index keeps the youngest-first order
    const VictimIndex::Level& candidates = *index_levels_[level];
    if (request.NeedsGpu() && candidates.MaxGpuMilli() < request.TotalGpuMilli()) {
      singles_exhausted_.push_back(memo);  // none holds enough: each would be passed over
      return false;
    }
    int32_t pops = 0;
    for (auto it = candidates.youngest.begin(); it != candidates.youngest.end() && more(pops);
         ++it) {
      if (evicted_[it->slot]) continue;
      ++pops;
      if (single(it->slot, it->gpu_milli)) return true;
    }
    singles_exhausted_.push_back(memo);
    return false;
  }
  std::vector<Ranked> heap;
  for (const Ranked& r : Level(level)) {
    if (!evicted_[r.index]) heap.push_back(r);
  }
  // The youngest first (lowest index on equal starts).
  auto older = [](const Ranked& a, const Ranked& b) {
    return a.start != b.start ? a.start < b.start : a.index > b.index;
  };
  std::make_heap(heap.begin(), heap.end(), older);
  for (int32_t pops = 0; !heap.empty() && more(pops); ++pops) {
    std::pop_heap(heap.begin(), heap.end(), older);
    const int32_t c = heap.back().index;
    heap.pop_back();
    int64_t held = 0;
    if (request.NeedsGpu()) {
      for (const Placement& p : candidates_[c].placements) {
        held += static_cast<int64_t>(p.gpus.size()) * p.gpu_milli;
      }
    }
    if (single(c, held)) return true;
  }
  singles_exhausted_.push_back(memo);
  return false;
}

SetKey VictimSearch::KeyOf(std::span<const int32_t> victims) const {
  SetKey key;
  for (int32_t c : victims) {
    const VictimCandidate& v = C(c);
    key.max_priority = key.count == 0 ? v.priority : std::max(key.max_priority, v.priority);
    ++key.count;
    key.priority_sum += v.priority;
    key.start_sum += StartMs(v);
  }
  return key;
}

std::vector<int32_t> VictimSearch::Reprieve(const TaskRequest& task, int32_t node, NodeRoom room,
                                            std::span<const int32_t> order) const {
  const Node& n = state_.node(node);
  std::vector<int32_t> victims;
  for (int32_t c : order) {
    Release(room, c, node, -1);
    if (FitsWithRoom(task, n, room)) continue;  // reprieved
    Release(room, c, node, +1);
    victims.push_back(c);
  }
  return victims;
}

bool VictimSearch::NodeVictims(const TaskRequest& task, int32_t node, std::vector<int32_t>& victims,
                               SetKey& key) {
  static const NodeRoom kNothing;
  if (index_ != nullptr) {  // the same test on the index's copy of what the node has free
    const VictimIndex::NodeFree& free = free_[node];
    const RoomTotals& totals = totals_[node];
    if (task.NeedsGpu() && free.gpu_milli + totals.gpu_milli < task.TotalGpuMilli()) return false;
    if (!gpu_totals_only_ && ((task.cpu > 0 && task.cpu > free.cpu + totals.cpu) ||
                              (task.memory > 0 && task.memory > free.memory + totals.memory))) {
      return false;
    }
  }
  const Node& n = state_.node(node);
  if (gpu_totals_only_ ? !MayFitGpusWithRoom(task, n, totals_[node].gpu_milli)
                       : !MayFitWithRoom(task, n, totals_[node])) {
    return false;
  }
  std::vector<int32_t> order;
  NodeRoom room;
  ForEachHolder(node, [&](int32_t c) {
    if (evicted_[c]) return;
    order.push_back(c);
    Release(room, c, node, +1);
  });
  // A node the task fits without evictions was refused by another filter: evictions cannot help.
  if (!FitsWithRoom(task, n, room) || FitsWithRoom(task, n, kNothing)) return false;
  // kube-scheduler's way: reprieve the most important first while the task still fits.
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return MoreImportant(a, b); });
  victims = Reprieve(task, node, room, order);
  key = KeyOf(victims);
  if (victims.size() <= 1) return true;
  // Fewer victims may do: the best single one, or reprieving the small holders of each priority
  // first, leaving the big ones to evict.
  for (int32_t c : order) {
    NodeRoom alone;
    Release(alone, c, node, +1);
    const int32_t single[] = {c};
    if (FitsWithRoom(task, n, alone) && Better(KeyOf(single), key)) {
      victims.assign({c});
      key = KeyOf(single);
    }
  }
  if (victims.size() == 1) return true;
  auto size = [&](int32_t c) {
    RoomTotals held;
    Release(held, c, node, +1);
    return std::tuple(held.gpu_milli, held.cpu, held.memory);
  };
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (C(a).priority != C(b).priority) return C(a).priority > C(b).priority;
    return size(a) < size(b);
  });
  std::vector<int32_t> big_first = Reprieve(task, node, room, order);
  if (const SetKey k = KeyOf(big_first); Better(k, key)) {
    victims = std::move(big_first);
    key = k;
  }
  return true;
}

bool VictimSearch::TryNodes(int32_t task, int32_t levels) {
  Accumulate(levels);
  IndexHolders();
  if (index_ != nullptr) free_ = index_->FreeOf(state_);
  const TaskRequest& request = tasks_[task];
  std::vector<int32_t> victims;
  SetKey key;
  auto rank = [&](int32_t node) {
    if (NodeVictims(request, node, victims, key)) ranking_.nodes.emplace_back(key, node);
  };
  if (ranking_.levels == accumulated_levels_ && ranking_.task_key == TaskKey(task)) {
    // The same class as the last search: rank again only the nodes that changed since.
    std::vector<int32_t> changed(changed_.begin() + static_cast<ptrdiff_t>(ranking_.changes_seen),
                                 changed_.end());
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    std::erase_if(ranking_.nodes, [&](const std::pair<SetKey, int32_t>& e) {
      return std::binary_search(changed.begin(), changed.end(), e.second);
    });
    for (int32_t node : changed) {
      if (HasHolders(node)) rank(node);
    }
  } else {
    ranking_.task_key = TaskKey(task);
    ranking_.levels = accumulated_levels_;
    ranking_.nodes.clear();
    for (int32_t node : touched_) rank(node);
  }
  ranking_.changes_seen = changed_.size();
  auto better = [](const std::pair<SetKey, int32_t>& a, const std::pair<SetKey, int32_t>& b) {
    if (Better(a.first, b.first)) return true;
    if (Better(b.first, a.first)) return false;
    return a.second < b.second;
  };
  // Usually the first node works: find the best, try it, and look again only on failure (a
  // node another filter refuses stays out of the ranking while it does not change).
  bool placed = false;
  while (!placed && !ranking_.nodes.empty() && !failed_) {
    auto best = std::min_element(ranking_.nodes.begin(), ranking_.nodes.end(), better);
    const int32_t node = best->second;
    ranking_.nodes.erase(best);
    // A failed attempt leaves the changes as they were; a successful one's are ranked next time.
    placed = NodeVictims(request, node, victims, key) && EvictAndPlace(task, victims);
  }
  return placed;
}

bool VictimSearch::MakeRoom(int32_t task) {
  // The levels already accumulated are ranked whole (their single victims included).
  if (accumulated_levels_ > 0 && TryNodes(task, accumulated_levels_)) return true;
  for (int32_t level = accumulated_levels_; !failed_; ++level) {
    if (level == LevelCount() && !AddLevel()) return false;
    if (TrySingles(task, level) || TryNodes(task, level + 1)) return true;
  }
  return false;
}

bool VictimSearch::Pass() {
  const auto n = static_cast<int32_t>(tasks_.size());
  int32_t placed = 0;
  for (int32_t i = 0; i < n && placed < min_available_ && !failed_; ++i) {
    bool fits = false;
    if (!PlaceAndAssume(i, &fits)) break;
    if (i == 0 && !fits && victims_.empty()) first_task_fitted_nowhere_ = true;
    if (fits || MakeRoom(i)) {
      ++placed;
    } else if (placed + (n - i - 1) < min_available_) {
      break;
    }
  }
  for (size_t k = assumed_.size(); k-- > 0;) {
    state_.Forget(tasks_[assumed_[k].first], assumed_[k].second);
    changed_.push_back(assumed_[k].second.node_index);
  }
  assumed_.clear();
  return !failed_ && placed >= min_available_;
}

bool VictimSearch::ScheduleGang() {
  GangAttempt attempt = framework_.ScheduleGang(state_, kPreemptor, tasks_, min_available_,
                                                MatchMode::kWithoutAllocating);
  if (attempt.status.code() == SchedStatus::Code::kError) failed_ = true;
  if (!attempt.status.ok()) return false;
  gang_ = std::move(attempt);
  return true;
}

bool VictimSearch::EvictEverythingUseful() {
  while (AddLevel()) {
  }
  Accumulate(LevelCount());
  IndexHolders();
  std::vector<const TaskRequest*> distinct;
  std::unordered_set<std::string> seen;
  for (const TaskRequest& t : tasks_) {
    if (seen.insert(t.EquivalenceKey()).second) distinct.push_back(&t);
  }
  for (int32_t node : touched_) {
    const Node& n = state_.node(node);
    NodeRoom room;
    ForEachHolder(node, [&](int32_t c) {
      if (!evicted_[c]) Release(room, c, node, +1);
    });
    const bool useful = std::any_of(distinct.begin(), distinct.end(), [&](const TaskRequest* t) {
      return FitsWithRoom(*t, n, room);
    });
    if (!useful) continue;
    ForEachHolder(node, [&](int32_t c) {
      if (!evicted_[c]) Evict(c);
    });
  }
  return ScheduleGang();
}

void VictimSearch::Prune() {
  std::vector<int32_t> order = victims_;
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return MoreImportant(a, b); });
  // Reprieve in blocks that double while they succeed and halve when they fail: as one by one
  // (a block fits only if each of its victims could be spared in turn), with fewer attempts.
  size_t block = 1;
  for (size_t i = 0; i < order.size() && !failed_;) {
    const size_t b = std::min(block, order.size() - i);
    for (size_t k = i; k < i + b; ++k) Reprieve(order[k]);
    if (!ShownUnfit() && ScheduleGang()) {
      i += b;
      block *= 2;
      continue;
    }
    for (size_t k = i; k < i + b; ++k) Evict(order[k]);
    if (b == 1) ++i;  // this victim is needed
    block = std::max<size_t>(1, b / 2);
  }
}

bool VictimSearch::ShownUnfit() {
  if (!first_task_fitted_nowhere_) return false;
  const std::string& key = TaskKey(0);
  for (int32_t t = 1; t < static_cast<int32_t>(tasks_.size()); ++t) {
    if (TaskKey(t) != key) return false;
  }
  // Nodes the search never changed are as they were: the task fitted none of them.
  std::vector<int32_t> nodes = changed_;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  int64_t copies = 0;
  for (int32_t node : nodes) {
    const std::optional<int64_t> most = MaxCopies(tasks_[0], state_.node(node));
    if (!most.has_value()) return false;
    copies += std::min<int64_t>(*most, min_available_);
    if (copies >= min_available_) return false;
  }
  return true;
}

void VictimSearch::Restore() {
  for (size_t k = assumed_.size(); k-- > 0;) {
    state_.Forget(tasks_[assumed_[k].first], assumed_[k].second);
  }
  assumed_.clear();
  while (!victims_.empty()) Reprieve(victims_.back());
}

std::optional<VictimChoice> VictimSearch::Run() {
  // The first pass evicts nothing when the gang fits already.
  bool fits = false;
  for (int32_t pass = 0; pass < kMaxPasses && !fits && !failed_; ++pass) {
    const size_t before = victims_.size();
    if (!Pass()) break;
    fits = ScheduleGang();
    if (victims_.size() == before) break;  // no progress: the passes disagree with the framework
  }
  // A single task whose search ran out of levels without the framework refusing any choice
  // fits no node even with every candidate gone: the arithmetic has shown it, no need to try.
  const bool shown_impossible = tasks_.size() == 1 && !framework_refused_;
  if (!fits && !failed_ && !shown_impossible) fits = EvictEverythingUseful();
  // A single victim of a single task needs no pruning: without it the state is the one where
  // the task found no node.
  if (fits && !failed_ && (victims_.size() > 1 || tasks_.size() > 1)) Prune();
  std::optional<VictimChoice> choice;
  if (fits && !failed_) {
    choice = VictimChoice{victims_, {}, gang_.placements, gang_.task_indices};
    if (index_ != nullptr) {
      for (int32_t c : victims_) choice->jobs.push_back(C(c).job);
      std::sort(choice->jobs.begin(), choice->jobs.end());
      choice->victims.clear();
    } else {
      std::sort(choice->victims.begin(), choice->victims.end());
      for (int32_t c : choice->victims) choice->jobs.push_back(C(c).job);
    }
  }
  Restore();
  return choice;
}

}  // namespace

std::optional<VictimChoice> FindVictims(ClusterState& state, Framework& framework,
                                        std::span<const TaskRequest> tasks, int32_t min_available,
                                        std::span<const VictimCandidate> candidates) {
  return VictimSearch(state, framework, tasks, min_available, candidates).Run();
}

std::optional<VictimChoice> FindVictims(ClusterState& state, Framework& framework,
                                        std::span<const TaskRequest> tasks, int32_t min_available,
                                        const VictimIndex& index, int32_t below_priority) {
  return VictimSearch(state, framework, tasks, min_available, index, below_priority).Run();
}

}  // namespace tessera

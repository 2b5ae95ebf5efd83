#include "sched/preemption/victim_search_internal.h"

namespace tessera::victim_search_internal {

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

}  // namespace tessera::victim_search_internal

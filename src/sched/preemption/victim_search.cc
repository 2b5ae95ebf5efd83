#include "sched/preemption/victim_search.h"

#include "sched/preemption/victim_search_internal.h"

namespace tessera::victim_search_internal {

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

}  // namespace tessera::victim_search_internal

namespace tessera {

using victim_search_internal::VictimSearch;

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

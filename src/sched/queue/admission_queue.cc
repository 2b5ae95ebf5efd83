#include "sched/queue/admission_queue.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace tessera {

AdmissionQueue::AdmissionQueue(QueueTree* tree, Duration priority_aging)
    : tree_(tree),
      aging_(std::max(priority_aging, Duration::zero())),
      leaves_(tree->size()),
      name_rank_(tree->size()),
      active_children_(tree->size() + 1),
      active_key_(tree->size() + 1),
      cursor_(tree->size()) {
  std::vector<int32_t> by_name(tree->size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(),
            [&](int32_t a, int32_t b) { return tree->spec(a).name < tree->spec(b).name; });
  for (size_t i = 0; i < by_name.size(); ++i) name_rank_[by_name[i]] = static_cast<int32_t>(i);
}

void AdmissionQueue::Add(JobId job, int32_t leaf, int32_t priority, int64_t sequence,
                         TimePoint submit_time) {
  assert(tree_->IsLeaf(leaf));
  // priority + (now - submit) / aging orders as priority * aging - submit (aging > 0).
  const absl::int128 rank = aging_ > Duration::zero() ? absl::int128(priority) * aging_.count() -
                                                            submit_time.time_since_epoch().count()
                                                      : absl::int128(priority);
  const JobKey key{.rank = rank, .sequence = sequence, .job = job, .added_in_cycle = cycle_};
  const bool added = jobs_.emplace(job, JobEntry{key, leaf}).second;
  assert(added && "a job queued twice");
  if (added) leaves_[leaf].insert(key);
}

void AdmissionQueue::Remove(JobId job) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  leaves_[it->second.leaf].erase(it->second.key);
  jobs_.erase(it);
}

int64_t AdmissionQueue::Position(JobId job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return -1;
  return static_cast<int64_t>(leaves_[it->second.leaf].order_of_key(it->second.key));
}

int32_t AdmissionQueue::LeafOf(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? -1 : it->second.leaf;
}

int32_t AdmissionQueue::Parent(int32_t q) const {
  const int32_t p = tree_->parent(q);
  return p < 0 ? tree_->size() : p;
}

AdmissionQueue::ChildKey AdmissionQueue::KeyOf(int32_t q) const {
  const double share = tree_->fair_share() == FairShareMode::kDrf ? tree_->Share(q) : 0.0;
  return ChildKey{.neg_priority = -int64_t{tree_->spec(q).priority},
                  .share = share,
                  .name_rank = name_rank_[q],
                  .queue = q};
}

AdmissionQueue::Cycle AdmissionQueue::StartCycle(TimePoint now) {
  tree_->AdvanceTime(now);
  ++cycle_;
  last_.reset();
  for (ChildOrder& order : active_children_) order.clear();
  std::fill(active_key_.begin(), active_key_.end(), std::nullopt);
  std::fill(cursor_.begin(), cursor_.end(), std::nullopt);
  for (int32_t q = 0; q < tree_->size(); ++q) {
    if (tree_->IsLeaf(q) && !leaves_[q].empty()) Activate(q);
  }
  return Cycle(this);
}

void AdmissionQueue::Activate(int32_t q) {
  // Inserts q and each ancestor not yet active; shares are read once per queue.
  for (int32_t a = q; a != tree_->size() && !active_key_[a]; a = Parent(a)) {
    active_key_[a] = KeyOf(a);
    active_children_[Parent(a)].insert(*active_key_[a]);
  }
}

void AdmissionQueue::Deactivate(int32_t q) {
  for (int32_t a = q; a != tree_->size() && active_key_[a]; a = Parent(a)) {
    ChildOrder& siblings = active_children_[Parent(a)];
    siblings.erase(*active_key_[a]);
    active_key_[a].reset();
    if (!siblings.empty()) break;
  }
}

void AdmissionQueue::Refresh(int32_t leaf) {
  if (tree_->fair_share() != FairShareMode::kDrf) return;
  for (int32_t a = leaf; a != tree_->size(); a = Parent(a)) {
    if (!active_key_[a]) continue;
    ChildOrder& siblings = active_children_[Parent(a)];
    siblings.erase(*active_key_[a]);
    active_key_[a] = KeyOf(a);
    siblings.insert(*active_key_[a]);
  }
}

std::optional<AdmissionQueue::JobId> AdmissionQueue::Next() {
  if (last_) Answer(false);
  const int32_t top = tree_->size();
  while (!active_children_[top].empty()) {
    int32_t q = top;
    while (q == top || !tree_->IsLeaf(q)) q = active_children_[q].begin()->queue;
    const LeafOrder& order = leaves_[q];
    auto it = cursor_[q] ? order.upper_bound(*cursor_[q]) : order.begin();
    // Jobs added during this cycle wait for the next one.
    while (it != order.end() && it->added_in_cycle == cycle_) ++it;
    if (it == order.end()) {
      Deactivate(q);
      continue;
    }
    cursor_[q] = *it;
    last_ = it->job;
    return it->job;
  }
  return std::nullopt;
}

void AdmissionQueue::Answer(bool admitted) {
  if (!last_) return;
  const JobId job = *last_;
  last_.reset();
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;  // removed meanwhile
  const int32_t leaf = it->second.leaf;
  if (admitted) {
    leaves_[leaf].erase(it->second.key);
    jobs_.erase(it);
  } else if (tree_->spec(leaf).ordering == QueueOrdering::kStrictFifo) {
    Deactivate(leaf);
  }
  Refresh(leaf);
}

}  // namespace tessera

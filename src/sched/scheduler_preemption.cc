// The Scheduler's preemption and reclaim: which jobs may be evicted for which job, and the
// eviction itself. The choice among eligible running gangs is preemption/victim_search.h.

#include <algorithm>
#include <utility>

#include "core/duration.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sched/preemption/victim_search.h"
#include "sched/scheduler.h"
#include "sched/scheduler_internal.h"

namespace tessera {
namespace {

// Whether the leaf queue's own use, with `charge` added, stays within its guarantee for every
// resource the tree limits: the condition for taking back what other queues borrowed (Kueue's
// reclaimWithinCohort). Its parents may be over theirs: what its siblings borrowed is reclaimed.
bool LeafWithinGuarantee(const QueueTree& tree, int32_t leaf, const ResourceList& charge) {
  const ResourceList guaranteed = tree.Guaranteed(leaf);
  const ResourceList& used = tree.Usage(leaf);
  for (const auto& [resource, limit] : guaranteed) {
    auto u = used.find(resource);
    auto c = charge.find(resource);
    const int64_t total =
        (u == used.end() ? 0 : u->second) + (c == charge.end() ? 0 : c->second);
    if (total > limit) return false;
  }
  return true;
}

}  // namespace
namespace {

constexpr std::string_view kReasonPreempted = "Preempted";

}  // namespace

bool Scheduler::Evictable(const Entry& victim, TimePoint now) const {
  if (!victim.spec.preemptible) return false;
  if (victim.state == Entry::State::kAdmitted) return true;
  return victim.state == Entry::State::kRunning &&
         now - victim.start_time >= victim.spec.min_runtime;
}

int32_t Scheduler::EvictionsLeft(int32_t leaf, TimePoint now) {
  std::vector<TimePoint>& times = evictions_[leaf];
  std::erase_if(times, [&](TimePoint t) { return t + policy_.preemption_rate_period <= now; });
  return std::max<int32_t>(policy_.preemption_rate_max - static_cast<int32_t>(times.size()), 0);
}

// Quota for a job its queue cannot admit now: lower-priority jobs of its own queue give theirs
// back, and, when its queue stays within its guarantee, jobs of queues above their guarantee
// give back what they borrowed.
bool Scheduler::Reclaim(CycleContext& cycle, Entry& entry, PendingReason& reason) {
  if (!policy_.preemption) return false;
  const bool reclaims = LeafWithinGuarantee(*tree_, entry.leaf, entry.charge);
  std::vector<Entry*> candidates;
  for (auto& [id, e] : by_id_) {
    if (e == &entry || !e->charged || !Evictable(*e, cycle.now)) continue;
    const bool lower_in_queue = e->leaf == entry.leaf && e->spec.priority < entry.spec.priority;
    const bool borrowed = reclaims && e->leaf != entry.leaf && tree_->IsBorrowing(e->leaf);
    if (lower_in_queue || borrowed) candidates.push_back(e);
  }
  if (candidates.empty()) return false;
  // Cheaper victims first: lower priority, then the most recently admitted or started.
  auto since = [](const Entry* e) {
    return e->state == Entry::State::kRunning ? e->start_time : e->admit_time;
  };
  std::sort(candidates.begin(), candidates.end(), [&](const Entry* a, const Entry* b) {
    if (a->spec.priority != b->spec.priority) return a->spec.priority < b->spec.priority;
    if (since(a) != since(b)) return since(a) > since(b);
    return a->id > b->id;
  });
  // Take back borrowed quota, cheapest first, while it still comes from a borrowing queue.
  std::vector<Entry*> taken;
  for (Entry* e : candidates) {
    if (tree_->CanAdmit(entry.leaf, entry.charge).fits) break;
    if (e->leaf != entry.leaf && !tree_->IsBorrowing(e->leaf)) continue;
    Uncharge(*e);
    taken.push_back(e);
  }
  auto restore = [&] {
    for (Entry* e : taken) Charge(*e);
  };
  if (!tree_->CanAdmit(entry.leaf, entry.charge).fits) {
    restore();
    return false;
  }
  // Keep every victim the admission does not need, dearest first.
  for (auto it = taken.rbegin(); it != taken.rend();) {
    Charge(**it);
    if (tree_->CanAdmit(entry.leaf, entry.charge).fits) {
      it = decltype(it)(taken.erase(std::next(it).base()));
    } else {
      Uncharge(**it);
      ++it;
    }
  }
  if (static_cast<int32_t>(taken.size()) > EvictionsLeft(entry.leaf, cycle.now)) {
    restore();
    reason.message += fmt::format("; reclaiming quota for it would pass queue {}'s preemption "
                                  "rate limit ({} per {})",
                                  entry.spec.queue, policy_.preemption_rate_max,
                                  FormatDuration(policy_.preemption_rate_period));
    return false;
  }
  for (Entry* e : taken) {
    Evict(cycle, *e, entry,
          e->leaf == entry.leaf ? "a higher-priority job of its queue needs its quota"
                                : "a queue below its guarantee reclaims its borrowed quota");
    if (e->state == Entry::State::kHeld) entry.awaited_victims.push_back(e->id);
  }
  return true;
}

bool Scheduler::Preempt(CycleContext& cycle, Entry& entry, PendingReason& reason) {
  std::erase_if(entry.awaited_victims, [&](int64_t id) {
    auto it = by_id_.find(id);
    return it == by_id_.end() || it->second->state != Entry::State::kHeld;
  });
  if (!entry.awaited_victims.empty()) {
    reason.message += fmt::format("; waiting for {} preempted jobs to release their resources",
                                  entry.awaited_victims.size());
    return true;
  }
  const bool reclaims = LeafWithinGuarantee(*tree_, entry.leaf, {});
  std::vector<Entry*> eligible;
  std::vector<VictimCandidate> candidates;
  for (auto& [id, e] : by_id_) {
    if (e == &entry || e->state != Entry::State::kRunning || !Evictable(*e, cycle.now)) continue;
    const bool lower_in_queue = e->leaf == entry.leaf && e->spec.priority < entry.spec.priority;
    const bool borrowed = reclaims && e->leaf != entry.leaf && tree_->IsBorrowing(e->leaf);
    if (!lower_in_queue && !borrowed) continue;
    VictimCandidate candidate{.job = id, .priority = e->spec.priority, .start_time = e->start_time};
    for (size_t t = 0; t < e->tasks.size(); ++t) {
      if (!e->placements[t]) continue;
      candidate.tasks.push_back(e->tasks[t]);
      candidate.placements.push_back(*e->placements[t]);
    }
    if (candidate.tasks.empty()) continue;
    eligible.push_back(e);
    candidates.push_back(std::move(candidate));
  }
  if (candidates.empty()) return false;
  const std::span<const TaskRequest> gang(entry.tasks.data(),
                                          static_cast<size_t>(entry.spec.GangSize()));
  std::optional<VictimChoice> choice =
      FindVictims(cycle.state, *framework_, gang, entry.spec.GangSize(), candidates);
  if (!choice || choice->victims.empty()) return false;
  if (static_cast<int32_t>(choice->victims.size()) > EvictionsLeft(entry.leaf, cycle.now)) {
    reason.message += fmt::format("; preempting for it would pass queue {}'s rate limit ({} per {})",
                                  entry.spec.queue, policy_.preemption_rate_max,
                                  FormatDuration(policy_.preemption_rate_period));
    return false;
  }
  std::vector<std::string> names;
  for (int32_t v : choice->victims) {
    Entry& victim = *eligible[v];
    names.push_back(victim.name);
    entry.awaited_victims.push_back(victim.id);
    Evict(cycle, victim, entry,
          victim.leaf == entry.leaf ? "a higher-priority job of its queue needs its resources"
                                    : "a queue below its guarantee reclaims its resources");
  }
  reason.message += fmt::format("; preempting {}", fmt::join(names, ", "));
  return true;
}

void Scheduler::Evict(CycleContext& cycle, Entry& victim, const Entry& preemptor,
                      std::string_view why) {
  evictions_[preemptor.leaf].push_back(cycle.now);
  const PendingReason reason{
      std::string(kReasonPreempted),
      fmt::format("preempted by job {} (queue {}, priority {}): {}", preemptor.name,
                  preemptor.spec.queue, preemptor.spec.priority, why)};
  Uncharge(victim);
  victim.announced = false;
  victim.awaited_victims.clear();
  if (victim.state == Entry::State::kAdmitted) {
    victim.state = Entry::State::kPending;
    victim.has_reason = false;
    Enqueue(victim);
    cycle.sink.OnAdmissionRevoked(victim.name, reason, /*preempted=*/true);
    return;
  }
  victim.state = Entry::State::kHeld;
  victim.held_at = cycle.now;
  victim.has_reason = false;
  cycle.sink.OnPreempted(victim.name, reason,
                         /*requeue=*/policy_.on_preemption == PreemptedAction::kRequeue);
}

}  // namespace tessera

// The Scheduler's preemption and reclaim: which jobs may be evicted for which job, and the
// eviction itself. The choice among eligible running gangs is preemption/victim_search.h.

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/duration.h"
#include "core/node.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sched/preemption/victim_search.h"
#include "sched/scheduler.h"
#include "sched/scheduler_internal.h"

namespace tessera {
namespace {

constexpr std::string_view kReasonPreempted = "Preempted";

// Reclaim is judged per resource, as Kueue (reclaimWithinCohort) and Volcano's capacity plugin
// do: a job may take a resource back from the queues that borrow it when its leaf queue, with
// the job, stays within its own guarantee for that resource, even while it borrows another.

// For quota: the resources of `charge` that do not fit `leaf` now, when the leaf stays within
// its guarantee for each of them; empty when one of them would take it above (no reclaim then).
std::vector<std::string> QuotaToReclaim(const QueueTree& tree, int32_t leaf,
                                        const ResourceList& charge) {
  std::vector<std::string> resources;
  for (const auto& [resource, amount] : charge) {
    if (tree.CanAdmit(leaf, ResourceList{{resource, amount}}).fits) continue;
    if (!tree.WithinOwnGuarantee(leaf, resource, amount)) return {};
    resources.push_back(resource);
  }
  return resources;
}

// What the nodes that take work have free of `resource` ("cpu", "memory", "gpu",
// "gpu:<MODEL>"; healthy devices only), in the units of the queue tree.
int64_t FreeCapacity(const ClusterState& state, std::string_view resource) {
  const bool gpu = resource == "gpu";
  const std::string_view model =
      resource.starts_with("gpu:") ? resource.substr(4) : std::string_view();
  int64_t free = 0;
  for (const Node& node : state.nodes()) {
    if (node.removed || node.unschedulable || node.condition != NodeCondition::kReady) continue;
    if (resource == "cpu") free += node.FreeCpu();
    if (resource == "memory") free += node.FreeMemory();
    for (const GpuDevice& device : node.gpus) {
      if (gpu || (!model.empty() && device.model == model)) free += device.FreeMilli();
    }
  }
  return free;
}

// For capacity: the managed resources the gang asks more of than the nodes have free (every
// managed resource it asks for when there is none: then how the free capacity is spread blocks
// it, not its amount), when the leaf stays within its guarantee for each of them (`charge` is
// counted in the leaf's use already when `charged`); empty when one would take it above. What
// the gang needs of a resource that is free in that amount needs no victims, whatever the
// guarantee.
std::vector<std::string> CapacityToReclaim(const QueueTree& tree, const ClusterState& state,
                                           int32_t leaf, const ResourceList& charge,
                                           bool charged, const ResourceList& gang) {
  std::vector<std::string> asked;
  std::vector<std::string> short_of;
  for (const auto& [resource, amount] : gang) {
    if (!tree.Manages(resource)) continue;
    asked.push_back(resource);
    if (amount > FreeCapacity(state, resource)) short_of.push_back(resource);
  }
  if (short_of.empty()) short_of = std::move(asked);
  for (const std::string& resource : short_of) {
    auto c = charge.find(resource);
    const int64_t added = charged || c == charge.end() ? 0 : c->second;
    if (!tree.WithinOwnGuarantee(leaf, resource, added)) return {};
  }
  return short_of;
}

// Whether a job of `leaf` charged `charge` holds some of one of `resources` that its queue
// borrows: a victim of reclaim for them.
bool HoldsBorrowed(const QueueTree& tree, int32_t leaf, const ResourceList& charge,
                   const std::vector<std::string>& resources) {
  return std::any_of(resources.begin(), resources.end(), [&](const std::string& resource) {
    auto held = charge.find(resource);
    return held != charge.end() && held->second > 0 && tree.IsBorrowing(leaf, resource);
  });
}

// Whether a leaf queue other than `leaf` borrows one of `resources`: only then may jobs of
// other queues be victims of reclaim.
bool OthersBorrow(const QueueTree& tree, int32_t leaf, const std::vector<std::string>& resources) {
  if (resources.empty()) return false;
  for (int32_t q : tree.TreeOrder()) {
    if (q == leaf || !tree.IsLeaf(q)) continue;
    for (const std::string& resource : resources) {
      if (tree.IsBorrowing(q, resource)) return true;
    }
  }
  return false;
}

// The candidate a running job makes: its placed tasks.
VictimCandidate CandidateOf(int64_t id, int32_t priority, TimePoint start,
                            const std::vector<TaskRequest>& tasks,
                            const std::vector<std::optional<Placement>>& placements) {
  VictimCandidate candidate{.job = id, .priority = priority, .start_time = start};
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (!placements[t]) continue;
    candidate.tasks.push_back(tasks[t]);
    candidate.placements.push_back(*placements[t]);
  }
  return candidate;
}

}  // namespace

void Scheduler::IndexVictim(Entry& entry) {
  if (!policy_.preemption) return;
  UnindexVictim(entry);
  if (entry.state != Entry::State::kRunning || !entry.spec.preemptible) return;
  entry.evictable_from = entry.start_time + entry.spec.min_runtime;
  if (entry.evictable_from > matured_at_) {
    maturing_.emplace(entry.evictable_from, entry.id);
    entry.victim_slot = Entry::VictimSlot::kMaturing;
    return;
  }
  victim_indexes_[entry.leaf].Add(
      CandidateOf(entry.id, entry.spec.priority, entry.start_time, entry.tasks, entry.placements));
  entry.victim_slot = Entry::VictimSlot::kIndexed;
}

void Scheduler::UnindexVictim(Entry& entry) {
  switch (entry.victim_slot) {
    case Entry::VictimSlot::kNone:
      return;
    case Entry::VictimSlot::kMaturing:
      maturing_.erase({entry.evictable_from, entry.id});
      break;
    case Entry::VictimSlot::kIndexed:
      if (auto it = victim_indexes_.find(entry.leaf); it != victim_indexes_.end()) {
        it->second.Remove(entry.id);
      }
      break;
  }
  entry.victim_slot = Entry::VictimSlot::kNone;
}

void Scheduler::MatureVictims(TimePoint now) {
  if (now < matured_at_) {  // the clock went back: what is evictable is judged afresh
    matured_at_ = now;
    ReindexVictims();
    return;
  }
  matured_at_ = now;
  while (!maturing_.empty() && maturing_.begin()->first <= now) {
    Entry& entry = *by_id_.at(maturing_.begin()->second);
    maturing_.erase(maturing_.begin());
    entry.victim_slot = Entry::VictimSlot::kNone;
    IndexVictim(entry);
  }
}

void Scheduler::ReindexVictims() {
  victim_indexes_.clear();
  maturing_.clear();
  for (auto& [id, entry] : by_id_) {
    entry->victim_slot = Entry::VictimSlot::kNone;
    IndexVictim(*entry);
  }
}

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
// back, and, for each resource it is short of while its queue stays within its guarantee for
// it, jobs of queues borrowing that resource give back what they borrowed.
bool Scheduler::Reclaim(CycleContext& cycle, Entry& entry, PendingReason& reason) {
  if (!policy_.preemption) return false;
  const std::vector<std::string> reclaim = QuotaToReclaim(*tree_, entry.leaf, entry.charge);
  auto borrower = [&](const Entry& e) {
    return e.leaf != entry.leaf && HoldsBorrowed(*tree_, e.leaf, e.charge, reclaim);
  };
  std::vector<Entry*> candidates;
  for (auto& [id, e] : by_id_) {
    if (e == &entry || !e->charged || !Evictable(*e, cycle.now)) continue;
    const bool lower_in_queue = e->leaf == entry.leaf && e->spec.priority < entry.spec.priority;
    if (lower_in_queue || borrower(*e)) candidates.push_back(e);
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
    if (e->leaf != entry.leaf && !borrower(*e)) continue;
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
  if (!GangFitsWithout(cycle, entry, taken)) {
    restore();
    reason.message += "; reclaiming quota would not make its gang fit the nodes";
    return false;
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

std::span<const TaskRequest> Scheduler::GangOf(const Entry& entry) {
  return {entry.tasks.data(), static_cast<size_t>(entry.spec.GangSize())};
}

std::vector<std::string> Scheduler::CapacityReclaim(const CycleContext& cycle,
                                                    const Entry& entry) const {
  return CapacityToReclaim(*tree_, cycle.state, entry.leaf, entry.charge, entry.charged,
                           JobCharge(GangOf(entry)));
}

std::vector<VictimCandidate> Scheduler::CapacityCandidates(CycleContext& cycle, const Entry& entry,
                                                           const std::vector<std::string>& reclaim,
                                                           const std::set<int64_t>& exclude,
                                                           std::vector<Entry*>& eligible) {
  std::vector<VictimCandidate> candidates;
  for (auto& [id, e] : by_id_) {
    if (e == &entry || e->state != Entry::State::kRunning || !Evictable(*e, cycle.now) ||
        exclude.contains(id)) {
      continue;
    }
    const bool lower_in_queue = e->leaf == entry.leaf && e->spec.priority < entry.spec.priority;
    const bool borrowed =
        e->leaf != entry.leaf && HoldsBorrowed(*tree_, e->leaf, e->charge, reclaim);
    if (!lower_in_queue && !borrowed) continue;
    VictimCandidate candidate =
        CandidateOf(id, e->spec.priority, e->start_time, e->tasks, e->placements);
    if (candidate.tasks.empty()) continue;
    eligible.push_back(e);
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

void Scheduler::ForgetPlacements(ClusterState& state, const Entry& entry,
                                 std::vector<std::pair<const TaskRequest*, Placement>>& gone) {
  for (size_t t = 0; t < entry.tasks.size(); ++t) {
    if (!entry.placements[t]) continue;
    state.Forget(entry.tasks[t], *entry.placements[t]);
    gone.emplace_back(&entry.tasks[t], *entry.placements[t]);
  }
}

void Scheduler::ForgetLeaving(ClusterState& state,
                              std::vector<std::pair<const TaskRequest*, Placement>>& gone) {
  for (int64_t id : held_) ForgetPlacements(state, *by_id_.at(id), gone);
}

// Whether the job's gang could be placed once `victims` and the jobs being torn down are gone,
// possibly after evicting further jobs for capacity: reclaiming quota for a gang that would
// still not fit would only start a loop of evictions. The jobs being torn down count as gone:
// a job that takes the quota of an admitted job waiting for their teardown (a higher-priority
// job of its queue, say) gets the capacity they free in its place.
bool Scheduler::GangFitsWithout(CycleContext& cycle, const Entry& entry,
                                const std::vector<Entry*>& victims) {
  std::vector<std::pair<const TaskRequest*, Placement>> gone;
  std::set<int64_t> exclude;
  for (const Entry* victim : victims) {
    exclude.insert(victim->id);
    ForgetPlacements(cycle.state, *victim, gone);
  }
  ForgetLeaving(cycle.state, gone);
  const GangAttempt now = framework_->ScheduleGang(cycle.state, entry.name, GangOf(entry),
                                                   entry.spec.GangSize(),
                                                   MatchMode::kWithoutAllocating);
  bool fits = now.status.ok() &&
              static_cast<int32_t>(now.placements.size()) >= entry.spec.GangSize();
  if (!fits) {
    std::vector<Entry*> eligible;
    std::vector<VictimCandidate> more =
        CapacityCandidates(cycle, entry, CapacityReclaim(cycle, entry), exclude, eligible);
    fits = !more.empty() && FindVictims(cycle.state, *framework_, GangOf(entry),
                                        entry.spec.GangSize(), more)
                                .has_value();
  }
  for (const auto& [task, placement] : gone) cycle.state.Reassume(*task, placement);
  return fits;
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
  // Jobs being torn down release their resources soon: evict only for what they leave short.
  std::vector<std::pair<const TaskRequest*, Placement>> leaving;
  ForgetLeaving(cycle.state, leaving);
  auto restore = [&] {
    for (const auto& [task, placement] : leaving) cycle.state.Reassume(*task, placement);
  };
  if (!leaving.empty()) {
    const GangAttempt soon = framework_->ScheduleGang(cycle.state, entry.name, GangOf(entry),
                                                      entry.spec.GangSize(),
                                                      MatchMode::kWithoutAllocating);
    if (soon.status.ok() &&
        static_cast<int32_t>(soon.placements.size()) >= entry.spec.GangSize()) {
      restore();
      reason.message += "; waiting for jobs being torn down to release their resources";
      return true;
    }
  }
  // Without jobs of other queues to reclaim from, the candidates are the lower-priority jobs
  // of its queue's index; otherwise they are gathered (in id order, as the index keeps them).
  const std::vector<std::string> reclaim = CapacityReclaim(cycle, entry);
  std::optional<VictimChoice> choice;
  std::vector<Entry*> victims;
  if (!OthersBorrow(*tree_, entry.leaf, reclaim)) {
    MatureVictims(cycle.now);
    auto index = victim_indexes_.find(entry.leaf);
    if (index != victim_indexes_.end() && index->second.AnyBelow(entry.spec.priority)) {
      choice = FindVictims(cycle.state, *framework_, GangOf(entry), entry.spec.GangSize(),
                           index->second, entry.spec.priority);
    }
    if (choice) {
      for (int64_t id : choice->jobs) victims.push_back(by_id_.at(id));
    }
  } else {
    std::vector<Entry*> eligible;
    std::vector<VictimCandidate> candidates =
        CapacityCandidates(cycle, entry, reclaim, {}, eligible);
    if (!candidates.empty()) {
      choice =
          FindVictims(cycle.state, *framework_, GangOf(entry), entry.spec.GangSize(), candidates);
    }
    if (choice) {
      for (int32_t v : choice->victims) victims.push_back(eligible[v]);
    }
  }
  restore();
  if (victims.empty()) return false;
  if (static_cast<int32_t>(victims.size()) > EvictionsLeft(entry.leaf, cycle.now)) {
    reason.message += fmt::format("; preempting for it would pass queue {}'s rate limit ({} per {})",
                                  entry.spec.queue, policy_.preemption_rate_max,
                                  FormatDuration(policy_.preemption_rate_period));
    return false;
  }
  std::vector<std::string> names;
  for (Entry* v : victims) {
    Entry& victim = *v;
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
  UnindexVictim(victim);
  held_.insert(victim.id);
  victim.state = Entry::State::kHeld;
  victim.held_at = cycle.now;
  victim.has_reason = false;
  ScheduleRelease(victim);
  cycle.sink.OnPreempted(victim.name, reason,
                         /*requeue=*/policy_.on_preemption == PreemptedAction::kRequeue);
}

}  // namespace tessera

#include "sched/scheduler.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sched/scheduler_internal.h"
#include "tessera/sched/decision_sink.h"

namespace tessera {
namespace {

constexpr std::string_view kDefaultQueue = "default";
constexpr std::string_view kReasonGangTimeout = "GangTimeout";

// The longest back-off after a gang timeout; it doubles from the timeout itself.
constexpr Duration kMaxGangBackoff = std::chrono::hours(1);

// Cluster totals for fair shares: allocatable of nodes that take work.
ResourceList Capacity(const ClusterState& state) {
  ResourceList total;
  for (const Node& node : state.nodes()) {
    if (node.removed || node.condition != NodeCondition::kReady) continue;
    total["cpu"] += node.allocatable.cpu;
    total["memory"] += node.allocatable.memory;
    total["gpu"] += node.allocatable.gpu;
    for (const GpuDevice& device : node.gpus) total["gpu:" + device.model] += kMilliGpuPerDevice;
  }
  return total;
}

}  // namespace

// The framework's bind plugins bind through a DecisionSink. The Scheduler reports bindings to
// its own SchedulerSink once a whole attempt succeeded, so this one accepts every binding.
class Scheduler::BindRecorder final : public DecisionSink {
 public:
  absl::Status Bind(std::string_view job, int32_t task_index, const Placement& placement) override {
    return absl::OkStatus();
  }
};

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const Profile& profile,
                                                             const Registry& registry,
                                                             const SchedulerEnv& env,
                                                             const SchedulingPolicy& policy) {
  if (env.rng == nullptr || env.clock == nullptr) {
    return absl::InvalidArgumentError("scheduler: an Rng and a Clock are required");
  }
  std::unique_ptr<Scheduler> scheduler(new Scheduler());
  scheduler->env_ = env;
  scheduler->policy_ = policy;
  scheduler->recorder_ = std::make_unique<BindRecorder>();
  Handle handle{.rng = env.rng,
                .clock = env.clock,
                .target_workload = env.target_workload,
                .sink = scheduler->recorder_.get()};
  absl::StatusOr<std::unique_ptr<Framework>> framework =
      Framework::Create(profile, registry, handle);
  if (!framework.ok()) return framework.status();
  scheduler->framework_ = *std::move(framework);
  // Gang satisfiability runs on a copy of the nodes, emptied: a framework of its own, so that the
  // live one keeps its per-state caches.
  framework = Framework::Create(profile, registry, handle);
  if (!framework.ok()) return framework.status();
  scheduler->satisfiability_ = *std::move(framework);
  scheduler->planner_ = std::make_unique<BackfillPlanner>(scheduler->framework_.get());
  const QueueSpec root{.name = std::string(kDefaultQueue)};
  if (absl::Status s = scheduler->SetQueues({&root, 1}); !s.ok()) return s;
  return scheduler;
}

Scheduler::~Scheduler() = default;

absl::Status Scheduler::SetTargetWorkload(const TargetWorkload& workload) {
  return framework_->SetTargetWorkload(workload);
}

absl::Status Scheduler::SetQueues(std::span<const QueueSpec> queues) {
  absl::StatusOr<QueueTree> tree = QueueTree::Create(queues);
  if (!tree.ok()) return tree.status();
  for (const auto& [name, entry] : jobs_) {
    const int32_t leaf = tree->Find(entry->spec.queue);
    if (leaf < 0 || !tree->IsLeaf(leaf)) {
      return absl::FailedPreconditionError(
          fmt::format("queue {} has jobs (job {} among them): it must stay a leaf queue",
                      entry->spec.queue, name));
    }
  }
  auto next = std::make_unique<QueueTree>(*std::move(tree));
  next->Configure(policy_.fair_share, policy_.fair_share_half_life);
  auto admission = std::make_unique<AdmissionQueue>(next.get(), policy_.priority_aging);
  for (auto& [name, entry] : jobs_) {
    entry->leaf = next->Find(entry->spec.queue);
    if (entry->charged) next->Admit(entry->leaf, entry->charge);
  }
  ReindexVictims();  // leaf numbers may have changed
  tree_ = std::move(next);
  admission_ = std::move(admission);
  for (auto& [id, entry] : by_id_) {
    if (entry->state == Entry::State::kPending) Enqueue(*entry);
  }
  return absl::OkStatus();
}

std::vector<QueueStatus> Scheduler::QueueStatuses() const {
  std::vector<QueueStatus> out;
  std::map<int32_t, size_t> slot;
  for (int32_t q : tree_->TreeOrder()) {
    slot[q] = out.size();
    out.push_back(QueueStatus{.spec = tree_->spec(q),
                              .usage = tree_->Usage(q),
                              .borrowing = tree_->IsBorrowing(q),
                              .share = tree_->Share(q)});
  }
  for (const auto& [name, entry] : jobs_) {
    for (int32_t q = entry->leaf; q >= 0; q = tree_->parent(q)) {
      QueueStatus& status = out[slot[q]];
      switch (entry->state) {
        case Entry::State::kPending:
          ++status.pending;
          break;
        case Entry::State::kAdmitted:
          ++status.admitted;
          break;
        case Entry::State::kRunning:
        case Entry::State::kHeld:
          ++status.running;
          break;
      }
    }
  }
  return out;
}

Scheduler::Entry* Scheduler::Find(std::string_view job) {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : it->second.get();
}

const Scheduler::Entry* Scheduler::Find(std::string_view job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : it->second.get();
}

void Scheduler::Charge(Entry& entry) {
  if (entry.charged) return;
  tree_->AdvanceTime(env_.clock->Now());  // the usage so far counts in the history first
  tree_->Admit(entry.leaf, entry.charge);
  entry.charged = true;
}

void Scheduler::Uncharge(Entry& entry) {
  if (!entry.charged) return;
  tree_->AdvanceTime(env_.clock->Now());
  tree_->Release(entry.leaf, entry.charge);
  entry.charged = false;
}

void Scheduler::Enqueue(Entry& entry) {
  admission_->Add(entry.id, entry.leaf, entry.spec.priority, entry.id, entry.submit_time);
}

absl::Status Scheduler::Submit(std::string_view job, JobSpec spec) {
  const auto at = jobs_.lower_bound(job);  // where the job goes (nothing is added before)
  if (at != jobs_.end() && at->first == job) {
    return absl::AlreadyExistsError(fmt::format("job {} is already queued", job));
  }
  if (absl::Status s = spec.Validate("spec"); !s.ok()) return s;
  const int32_t leaf = tree_->Find(spec.queue);
  if (leaf < 0) {
    return absl::InvalidArgumentError(fmt::format("spec.queue: unknown queue \"{}\"", spec.queue));
  }
  if (!tree_->IsLeaf(leaf)) {
    return absl::InvalidArgumentError(
        fmt::format("spec.queue: \"{}\" is not a leaf queue", spec.queue));
  }
  auto entry = std::make_unique<Entry>();
  entry->id = next_sequence_++;
  entry->name = std::string(job);
  entry->leaf = leaf;
  for (const TaskGroup& group : spec.tasks) {
    // The job's cluster constraints hold for each of its tasks (the cluster plugins read them).
    TaskRequest request = group.request;
    request.cluster_selector = spec.cluster_selector;
    request.cluster_affinity = spec.cluster_affinity;
    request.cluster_anti_affinity = spec.cluster_anti_affinity;
    for (int32_t r = 0; r < group.replicas; ++r) {
      entry->task_names.push_back(absl::StrCat(group.name, "-", r));
    }
    entry->tasks.insert(entry->tasks.end(), group.replicas - 1, request);
    entry->tasks.push_back(std::move(request));  // replicas >= 1 (Validate)
  }
  entry->spec = std::move(spec);
  entry->charge = JobCharge(entry->tasks);
  entry->placed.assign(entry->tasks.size(), false);
  entry->placements.resize(entry->tasks.size());
  entry->submit_time = env_.clock->Now();
  Entry& added = *entry;
  by_id_.emplace_hint(by_id_.end(), added.id, &added);  // ids only grow
  jobs_.emplace_hint(at, added.name, std::move(entry));
  Enqueue(added);
  untried_.push_back(added.id);
  return absl::OkStatus();
}

absl::Status Scheduler::Restore(std::string_view job, JobSpec spec,
                                std::span<const TaskBinding> placed, TimePoint started) {
  if (absl::Status s = Submit(job, std::move(spec)); !s.ok()) return s;
  if (placed.empty()) return absl::OkStatus();
  Entry& entry = *by_id_.rbegin()->second;  // the one Submit added: the highest sequence
  for (const TaskBinding& binding : placed) {
    if (binding.task < 0 || binding.task >= static_cast<int32_t>(entry.placed.size())) {
      Forget(entry);
      return absl::InvalidArgumentError(fmt::format("job {}: no task {}", job, binding.task));
    }
  }
  admission_->Remove(entry.id);
  for (const TaskBinding& binding : placed) {
    entry.placed[binding.task] = true;
    if (binding.placement.node_index >= 0) entry.placements[binding.task] = binding.placement;
  }
  entry.state = Entry::State::kRunning;
  entry.start_time = started;
  entry.admit_time = started;
  entry.satisfiability_checked = true;
  Charge(entry);
  IndexVictim(entry);
  ScheduleRelease(entry);
  return absl::OkStatus();
}

absl::Status Scheduler::Hold(std::string_view job) {
  Entry* entry = Find(job);
  if (entry == nullptr) return absl::NotFoundError(fmt::format("job {} is not queued", job));
  if (entry->state == Entry::State::kPending) admission_->Remove(entry->id);
  UnindexVictim(*entry);
  held_.insert(entry->id);
  entry->announced = false;
  entry->state = Entry::State::kHeld;
  entry->held_at = env_.clock->Now();
  entry->has_reason = false;
  ScheduleRelease(*entry);
  return absl::OkStatus();
}

absl::Status Scheduler::Requeue(std::string_view job, TimePoint not_before) {
  Entry* entry = Find(job);
  if (entry == nullptr) return absl::NotFoundError(fmt::format("job {} is not queued", job));
  Entry& e = *entry;
  Uncharge(e);
  admission_->Remove(e.id);
  UnindexVictim(e);
  held_.erase(e.id);
  e.announced = false;
  e.awaited_victims.clear();
  e.state = Entry::State::kPending;
  e.placed.assign(e.tasks.size(), false);
  std::fill(e.placements.begin(), e.placements.end(), std::nullopt);
  e.not_before = not_before;
  e.has_reason = false;
  ScheduleRelease(e);
  Enqueue(e);
  untried_.push_back(e.id);
  return absl::OkStatus();
}

void Scheduler::Remove(std::string_view job) {
  if (Entry* entry = Find(job)) Forget(*entry);
}

void Scheduler::Forget(Entry& entry) {
  Uncharge(entry);
  admission_->Remove(entry.id);
  UnindexVictim(entry);
  releases_.Remove(entry.id);
  held_.erase(entry.id);
  by_id_.erase(entry.id);
  jobs_.erase(entry.name);  // `entry` is gone from here on
}

const PendingReason* Scheduler::Reason(std::string_view job) const {
  const Entry* e = Find(job);
  if (e == nullptr) return nullptr;
  const bool waiting = e->state == Entry::State::kPending || e->state == Entry::State::kAdmitted;
  return waiting && e->has_reason ? &e->reason : nullptr;
}

const std::vector<TaskRequest>* Scheduler::Tasks(std::string_view job) const {
  const Entry* e = Find(job);
  return e == nullptr ? nullptr : &e->tasks;
}

void Scheduler::RunCycle(ClusterState& state, SchedulerSink& sink) {
  CycleContext cycle{
      .state = state, .sink = sink, .now = env_.clock->Now(), .number = ++cycles_};
  tree_->SetCapacity(Capacity(state));
  tree_->AdvanceTime(cycle.now);
  ExpireGangTimeouts(cycle);
  TryAdmitted(cycle);
  TryPending(cycle);
  MarkBehindStrictHeads(cycle);
  for (auto& [id, entry] : by_id_) {
    if (entry->state == Entry::State::kRunning) PlaceRemaining(cycle, *entry);
  }
  SettleAdmissions(cycle);
  MarkUntried(cycle);
}

std::optional<TimePoint> Scheduler::NextWakeup() const {
  const TimePoint now = env_.clock->Now();
  std::optional<TimePoint> next;
  auto consider = [&](TimePoint t) {
    if (t > now && (!next || t < *next)) next = t;
  };
  bool waiting = false;
  for (const auto& [id, e] : by_id_) {
    switch (e->state) {
      case Entry::State::kPending:
        waiting = true;
        consider(e->not_before);
        break;
      case Entry::State::kAdmitted:
        waiting = true;
        if (e->announced && policy_.gang_timeout > Duration::zero()) {
          consider(e->announced_at + policy_.gang_timeout);
        }
        break;
      case Entry::State::kRunning:
      case Entry::State::kHeld:
        break;
    }
  }
  if (!policy_.preemption || !waiting) return next;
  for (const auto& [id, e] : by_id_) {
    if (e->state == Entry::State::kRunning && e->spec.preemptible) {
      consider(e->start_time + e->spec.min_runtime);
    }
  }
  for (const auto& [leaf, times] : evictions_) {
    for (TimePoint t : times) consider(t + policy_.preemption_rate_period);
  }
  return next;
}

// Jobs told they hold their admission that lost it in this cycle hear so.
void Scheduler::SettleAdmissions(CycleContext& cycle) {
  for (auto& [id, entry] : by_id_) {
    if (!entry->announced || entry->state != Entry::State::kPending) continue;
    entry->announced = false;
    cycle.sink.OnAdmissionRevoked(entry->name, entry->reason, /*preempted=*/false);
  }
}

void Scheduler::ExpireGangTimeouts(CycleContext& cycle) {
  if (policy_.gang_timeout <= Duration::zero()) return;
  for (auto& [id, entry] : by_id_) {
    Entry& e = *entry;
    if (e.state != Entry::State::kAdmitted || !e.announced) continue;
    if (e.waits_for_teardown) {
      e.announced_at = cycle.now;  // the timeout counts once nothing it waits for is leaving
      continue;
    }
    if (cycle.now < e.announced_at + policy_.gang_timeout) continue;
    ++e.gang_timeouts;
    Duration backoff = policy_.gang_timeout;
    for (int32_t i = 1; i < e.gang_timeouts && backoff < kMaxGangBackoff; ++i) backoff *= 2;
    backoff = std::min(backoff, std::max(kMaxGangBackoff, policy_.gang_timeout));
    Unadmit(e);
    e.announced = false;
    e.awaited_victims.clear();
    e.not_before = cycle.now + backoff;
    e.has_reason = false;
    Enqueue(e);
    cycle.sink.OnAdmissionRevoked(
        e.name,
        {std::string(kReasonGangTimeout),
         fmt::format("admitted {} ago and not placed (gang timeout {}); next attempt in {}",
                     FormatDuration(cycle.now - e.announced_at),
                     FormatDuration(policy_.gang_timeout), FormatDuration(backoff))},
        /*preempted=*/false);
  }
}

std::vector<Scheduler::Entry*> Scheduler::AdmittedInOrder() {
  std::vector<Entry*> order;
  for (auto& [id, entry] : by_id_) {
    if (entry->state == Entry::State::kAdmitted) order.push_back(entry);
  }
  auto info = [](const Entry* e) { return QueuedJobInfo{&e->spec, e->id, e->submit_time}; };
  std::stable_sort(order.begin(), order.end(), [&](const Entry* a, const Entry* b) {
    return framework_->Less(info(a), info(b));
  });
  return order;
}

void Scheduler::TryAdmitted(CycleContext& cycle) {
  for (Entry* entry : AdmittedInOrder()) {
    if (cycle.blocked_leaves.contains(entry->leaf)) {
      SetPending(*entry,
                 {std::string(kReasonPriority),
                  fmt::format("behind an earlier job of strict-FIFO queue {}", entry->spec.queue)},
                 cycle.sink);
      continue;
    }
    const PlaceOutcome outcome = TryPlace(cycle, *entry);
    if (outcome == PlaceOutcome::kPlaced) continue;
    if (outcome == PlaceOutcome::kNotPlaced) {
      Unadmit(*entry);
      Enqueue(*entry);
      entry->tried_in_cycle = cycle.number;  // not again in this cycle's admission walk
    }
    if (tree_->spec(entry->leaf).ordering == QueueOrdering::kStrictFifo) {
      cycle.blocked_leaves.insert(entry->leaf);
    }
  }
}

void Scheduler::Unadmit(Entry& entry) {
  Uncharge(entry);
  entry.state = Entry::State::kPending;
}

// Two walks in admission order: first the jobs whose queue stays within its guarantee, then
// those that would borrow (Kueue admits within nominal quota before borrowing), so that a
// queue's guarantee is not lent out in the cycle its owner needs it.
void Scheduler::TryPending(CycleContext& cycle) {
  if (WalkPending(cycle, /*borrowing=*/false)) WalkPending(cycle, /*borrowing=*/true);
}

bool Scheduler::WalkPending(CycleContext& cycle, bool borrowing) {
  bool deferred = false;
  cycle.order.emplace(admission_->StartCycle(cycle.now));
  for (int32_t leaf : cycle.blocked_leaves) cycle.order->BlockQueue(leaf);
  while (std::optional<AdmissionQueue::JobId> next = cycle.order->Next()) {
    Entry& entry = *by_id_.at(*next);
    if (entry.tried_in_cycle == cycle.number) {
      cycle.order->Blocked();
      continue;
    }
    if (!borrowing && !LeafWithinGuarantee(*tree_, entry.leaf, entry.charge)) {
      deferred = true;
      cycle.order->Blocked();
      continue;
    }
    entry.tried_in_cycle = cycle.number;
    if (!entry.satisfiability_checked && RefuseIfUnsatisfiable(cycle, entry)) continue;
    if (cycle.now < entry.not_before) {
      SetPending(entry,
                 {std::string(kReasonBackoff),
                  fmt::format("requeued; next attempt in {}",
                              FormatDuration(entry.not_before - cycle.now))},
                 cycle.sink);
      if (tree_->spec(entry.leaf).ordering == QueueOrdering::kStrictFifo) {
        cycle.blocked_leaves.insert(entry.leaf);
      }
      cycle.order->Blocked();
      continue;
    }
    const bool strict = tree_->spec(entry.leaf).ordering == QueueOrdering::kStrictFifo;
    if (!Admit(cycle, entry)) {
      if (strict) cycle.blocked_leaves.insert(entry.leaf);
      cycle.order->Blocked();
      continue;
    }
    const PlaceOutcome outcome = TryPlace(cycle, entry);
    if (outcome == PlaceOutcome::kNotPlaced) {
      Unadmit(entry);
      if (strict) cycle.blocked_leaves.insert(entry.leaf);
      cycle.order->Blocked();
      continue;
    }
    cycle.order->Admitted();
    if (outcome == PlaceOutcome::kWaiting && !entry.announced) {
      entry.announced = true;
      entry.announced_at = cycle.now;
      cycle.sink.OnAdmitted(entry.name);
    }
    if (outcome == PlaceOutcome::kWaiting && strict) {
      cycle.blocked_leaves.insert(entry.leaf);
      cycle.order->BlockQueue(entry.leaf);
    }
  }
  return deferred;
}

// Jobs of a strict-FIFO queue that the cycle did not reach wait behind its blocked head. The
// message holds no position, so that it changes only when the job's situation does: the
// position is the estimate's (Kueue serves it the same way, on request).
void Scheduler::MarkBehindStrictHeads(CycleContext& cycle) {
  if (cycle.blocked_leaves.empty()) return;
  std::map<int32_t, PendingReason> behind;  // per blocked leaf, written once
  for (int32_t leaf : cycle.blocked_leaves) {
    behind[leaf] = {
        std::string(kReasonPriority),
        fmt::format("behind an earlier job of strict-FIFO queue {}", tree_->spec(leaf).name)};
  }
  for (auto& [id, entry] : by_id_) {
    if (entry->state != Entry::State::kPending || entry->tried_in_cycle == cycle.number) continue;
    auto it = behind.find(entry->leaf);
    if (it == behind.end() || (entry->has_reason && entry->reason == it->second)) continue;
    SetPending(*entry, it->second, cycle.sink);
  }
}

// Jobs that the cycle did not reach (behind a blocked head of a strict-FIFO queue) wait in
// their queue's order.
void Scheduler::MarkUntried(CycleContext& cycle) {
  std::vector<int64_t> untried = std::move(untried_);
  untried_.clear();
  for (int64_t id : untried) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) continue;
    Entry* entry = it->second;
    if (entry->state != Entry::State::kPending || entry->has_reason) continue;
    SetPending(*entry,
               {std::string(kReasonPriority),
                fmt::format("position {} in queue {}", admission_->Position(entry->id),
                            entry->spec.queue)},
               cycle.sink);
  }
}

bool Scheduler::RefuseIfUnsatisfiable(CycleContext& cycle, Entry& entry) {
  // No node at all (no cluster has registered yet): nothing can be judged, so the job waits and
  // is checked at the first cycle that has a node.
  const std::span<const Node> nodes = cycle.state.nodes();
  if (policy_.refuse_unfit &&
      std::none_of(nodes.begin(), nodes.end(), [](const Node& n) { return !n.removed; })) {
    return false;
  }
  entry.satisfiability_checked = true;
  std::optional<PendingReason> refusal;
  if (QueueTree::Verdict verdict = tree_->CanEverAdmit(entry.leaf, entry.charge); !verdict.fits) {
    refusal = PendingReason{std::string(kReasonRefused),
                            fmt::format("the job can never fit its queue: {}", verdict.message)};
  }
  if (!refusal && policy_.refuse_unfit) {
    std::optional<std::string> unfit = NeverFits(cycle.state, entry, &cycle.satisfiable);
    if (!unfit) unfit = GangNeverFits(cycle.state, entry);
    if (unfit) refusal = PendingReason{std::string(kReasonRefused), *std::move(unfit)};
  }
  if (!refusal) return false;
  const std::string name = entry.name;
  cycle.order->Admitted();  // it leaves the queue
  Forget(entry);
  cycle.sink.OnRefused(name, *refusal);
  return true;
}

bool Scheduler::Admit(CycleContext& cycle, Entry& entry) {
  QueueTree::Verdict verdict = tree_->CanAdmit(entry.leaf, entry.charge);
  if (!verdict.fits) {
    PendingReason reason{std::string(kReasonQuotaExceeded), verdict.message};
    if (!Reclaim(cycle, entry, reason)) {
      SetPending(entry, std::move(reason), cycle.sink);
      return false;
    }
  }
  Charge(entry);
  entry.state = Entry::State::kAdmitted;
  entry.admit_time = cycle.now;
  return true;
}

Scheduler::PlaceOutcome Scheduler::TryPlace(CycleContext& cycle, Entry& entry) {
  std::vector<int32_t> all(entry.tasks.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
  PendingReason failure;
  std::vector<TaskBinding> bound =
      Attempt(cycle.state, entry, all, entry.spec.GangSize(), &failure);
  const TimePoint end =
      entry.spec.time_limit ? cycle.now + *entry.spec.time_limit : TimePoint::max();
  if (!bound.empty() && DelaysReservations(cycle, entry, bound, end)) {
    SetPending(entry, {std::string(kReasonReservation), ReservationsText(cycle)}, cycle.sink);
    return PlaceOutcome::kNotPlaced;
  }
  if (!bound.empty()) {
    Started(entry, std::move(bound), cycle.sink);
    return PlaceOutcome::kPlaced;
  }
  const bool preempting = policy_.preemption && Preempt(cycle, entry, failure);
  entry.waits_for_teardown = preempting;
  if (!preempting && policy_.backfill != BackfillMode::kNone) Reserve(cycle, entry, failure);
  SetPending(entry, std::move(failure), cycle.sink);
  if (preempting) return PlaceOutcome::kWaiting;
  // A job admitted for its victims keeps its admission while it waits for capacity, up to its
  // gang timeout (ExpireGangTimeouts), as Kueue's waitForPodsReady does.
  if (entry.announced && policy_.gang_timeout > Duration::zero()) return PlaceOutcome::kWaiting;
  return PlaceOutcome::kNotPlaced;
}

void Scheduler::Started(Entry& entry, std::vector<TaskBinding> bound, SchedulerSink& sink) {
  for (const TaskBinding& b : bound) entry.placements[b.task] = b.placement;
  entry.state = Entry::State::kRunning;
  entry.start_time = env_.clock->Now();
  entry.has_reason = false;
  entry.announced = false;
  entry.gang_timeouts = 0;
  entry.awaited_victims.clear();
  IndexVictim(entry);
  ScheduleRelease(entry);
  sink.OnPlaced(entry.name, /*gang=*/true, bound);
}

// Tasks beyond the gang take capacity left after every waiting job was tried, and never the
// capacity a reservation needs.
void Scheduler::PlaceRemaining(CycleContext& cycle, Entry& entry) {
  std::vector<int32_t> remaining;
  for (size_t i = 0; i < entry.placed.size(); ++i) {
    if (!entry.placed[i]) remaining.push_back(static_cast<int32_t>(i));
  }
  if (remaining.empty()) return;
  // They join the gang's cluster.
  std::string_view cluster;
  for (const std::optional<Placement>& p : entry.placements) {
    if (p.has_value()) {
      cluster = cycle.state.node(p->node_index).cluster;
      break;
    }
  }
  PendingReason ignored;
  std::vector<TaskBinding> bound = Attempt(cycle.state, entry, remaining, 1, &ignored, cluster);
  if (bound.empty()) return;
  const TimePoint end =
      entry.spec.time_limit ? entry.start_time + *entry.spec.time_limit : TimePoint::max();
  if (DelaysReservations(cycle, entry, bound, end)) return;
  for (const TaskBinding& b : bound) entry.placements[b.task] = b.placement;
  IndexVictim(entry);
  ScheduleRelease(entry);
  cycle.sink.OnPlaced(entry.name, /*gang=*/false, bound);
}

std::string Scheduler::ReservationsText(const CycleContext& cycle) const {
  std::vector<std::string> reserved;
  for (const Reservation& r : cycle.reservations) {
    if (r.start == TimePoint::max()) continue;
    reserved.push_back(fmt::format("{} in {}", by_id_.at(r.job)->name,
                                   FormatDuration(r.start - cycle.now)));
  }
  return fmt::format("it fits now but would delay a reserved job (reserved: {})",
                     fmt::join(reserved, ", "));
}

bool Scheduler::DelaysReservations(CycleContext& cycle, Entry& entry,
                                   const std::vector<TaskBinding>& bound, TimePoint end) {
  std::vector<Reservation> planned;
  for (const Reservation& r : cycle.reservations) {
    if (r.start != TimePoint::max()) planned.push_back(r);
  }
  if (planned.empty()) return false;
  std::vector<TaskRequest> tasks;
  std::vector<Placement> placements;
  for (const TaskBinding& b : bound) {
    tasks.push_back(entry.tasks[b.task]);
    placements.push_back(b.placement);
  }
  // The attempt's placements are assumed: take them back while the planner looks.
  for (const TaskBinding& b : bound) cycle.state.Forget(entry.tasks[b.task], b.placement);
  // Jobs started since the plan are in releases_ too: released at their ends.
  const bool delays =
      planner_->Delays(cycle.state, cycle.now, releases_, planned, tasks, placements, end);
  if (delays) {
    for (const TaskBinding& b : bound) entry.placed[b.task] = false;
  } else {
    for (const TaskBinding& b : bound) cycle.state.Reassume(entry.tasks[b.task], b.placement);
  }
  return delays;
}

std::vector<TaskBinding> Scheduler::Attempt(ClusterState& state, Entry& entry,
                                            const std::vector<int32_t>& indices,
                                            int32_t min_available, PendingReason* failure,
                                            std::string_view cluster) {
  std::vector<TaskRequest> tasks;
  tasks.reserve(indices.size());
  for (int32_t i : indices) tasks.push_back(entry.tasks[i]);
  GangAttempt gang = framework_->ScheduleGang(state, entry.name, tasks, min_available,
                                              MatchMode::kAllocate, cluster);
  if (gang.status.ok() && static_cast<int32_t>(gang.placements.size()) < min_available) {
    // A profile without a Gang permit plugin binds partial gangs; the job contract does not.
    for (size_t k = 0; k < gang.placements.size(); ++k) {
      state.Forget(tasks[gang.task_indices[k]], gang.placements[k]);
    }
    *failure = {std::string(kReasonGangIncomplete),
                fmt::format("{} of {} gang tasks fit", gang.placements.size(), min_available)};
    return {};
  }
  if (!gang.status.ok()) {
    if (gang.status.code() == SchedStatus::Code::kError) {
      *failure = {std::string(kReasonSchedulingError), gang.status.message()};
    } else if (gang.failed_task >= 0) {
      std::string_view code = gang.diagnosis.TopCode();
      if (code.empty() && gang.status.reason() != nullptr) code = gang.status.reason()->code;
      *failure = {std::string(code.empty() ? kReasonGangIncomplete : code),
                  fmt::format("task {}: {}", entry.task_names[indices[gang.failed_task]],
                              gang.diagnosis.ToString())};
      if (!gang.note.empty()) failure->message += "; " + gang.note;
      failure->total_nodes = gang.diagnosis.total_nodes();
      for (const ReasonCount& count : gang.diagnosis.Counts()) {
        // (An empty inventory's reason counts no node: the message says it.)
        if (count.nodes > 0) failure->rejections.emplace_back(count.reason->detail, count.nodes);
      }
    } else {
      const tessera::Reason* reason = gang.status.reason();
      *failure = {std::string(reason != nullptr ? reason->code : kReasonGangIncomplete),
                  std::string(reason != nullptr ? reason->detail : "gang not permitted")};
    }
    return {};
  }
  std::vector<TaskBinding> bound;
  bound.reserve(gang.placements.size());
  for (size_t k = 0; k < gang.placements.size(); ++k) {
    const int32_t task = indices[gang.task_indices[k]];
    entry.placed[task] = true;
    bound.push_back(TaskBinding{task, std::move(gang.placements[k])});
  }
  return bound;
}

void Scheduler::SetPending(Entry& entry, PendingReason reason, SchedulerSink& sink) {
  if (entry.has_reason && entry.reason == reason) return;
  entry.reason = std::move(reason);
  entry.has_reason = true;
  sink.OnPending(entry.name, entry.reason);
}

TimePoint Scheduler::EndOf(const Entry& entry) const {
  // A job being torn down ends within its grace; a running one at its time limit.
  if (entry.state == Entry::State::kHeld) return entry.held_at + entry.spec.termination_grace;
  return entry.spec.time_limit ? entry.start_time + *entry.spec.time_limit : TimePoint::max();
}

void Scheduler::ScheduleRelease(const Entry& entry) {
  const bool holds = entry.state == Entry::State::kRunning || entry.state == Entry::State::kHeld;
  PlannedRelease release{.job = entry.id, .end = EndOf(entry)};
  for (size_t t = 0; holds && t < entry.tasks.size(); ++t) {
    if (!entry.placements[t]) continue;
    release.tasks.push_back(entry.tasks[t]);
    release.placements.push_back(*entry.placements[t]);
  }
  if (release.tasks.empty()) {
    releases_.Remove(entry.id);
  } else {
    releases_.Set(std::move(release));
  }
}

BlockedJob Scheduler::AsBlocked(const Entry& entry) const {
  return BlockedJob{.job = entry.id,
                    .tasks = entry.tasks,
                    .min_available = entry.spec.GangSize(),
                    .time_limit = entry.spec.time_limit};
}

bool Scheduler::Reserve(CycleContext& cycle, Entry& entry, PendingReason& reason) {
  const size_t depth = policy_.backfill == BackfillMode::kEasy
                           ? 1
                           : static_cast<size_t>(std::max(policy_.backfill_depth, 1));
  if (cycle.reservations.size() >= depth) return false;
  // The reservations made earlier in the cycle stand: a job started since passed Delays.
  cycle.reservations.push_back(planner_->PlanNext(cycle.state, cycle.now, releases_,
                                                  cycle.reservations, AsBlocked(entry)));
  const Reservation& mine = cycle.reservations.back();
  reason.message += mine.start == TimePoint::max()
                        ? "; next in line (no start can be planned from the running jobs' time "
                          "limits)"
                        : fmt::format("; reserved to start in {}",
                                      FormatDuration(mine.start - cycle.now));
  return true;
}

}  // namespace tessera

#include "sched/scheduler.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/duration.h"
#include "fmt/format.h"
#include "tessera/sched/decision_sink.h"

namespace tessera {

struct Scheduler::Entry {
  enum class State { kPending, kRunning, kHeld };

  std::string name;
  JobSpec spec;
  std::vector<TaskRequest> tasks;       // task-group order
  std::vector<std::string> task_names;  // "worker-0"
  std::vector<bool> placed;
  int64_t sequence = 0;
  TimePoint submit_time{};
  State state = State::kPending;
  TimePoint not_before{};
  bool satisfiability_checked = false;
  bool has_reason = false;
  PendingReason reason;
};

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
  scheduler->recorder_ = std::make_unique<BindRecorder>();
  Handle handle{.rng = env.rng,
                .clock = env.clock,
                .target_workload = env.target_workload,
                .sink = scheduler->recorder_.get()};
  absl::StatusOr<std::unique_ptr<Framework>> framework =
      Framework::Create(profile, registry, handle);
  if (!framework.ok()) return framework.status();
  scheduler->framework_ = *std::move(framework);
  return scheduler;
}

Scheduler::~Scheduler() = default;

absl::Status Scheduler::SetQueues(std::span<const QueueSpec> queues) {
  return absl::UnimplementedError("queues: not wired yet");
}

std::vector<QueueStatus> Scheduler::QueueStatuses() const { return {}; }

absl::StatusOr<StartEstimate> Scheduler::Estimate(std::string_view job, ClusterState& state) {
  return absl::UnimplementedError("estimates: not wired yet");
}

absl::Status Scheduler::Submit(std::string_view job, const JobSpec& spec) {
  if (jobs_.contains(job)) {
    return absl::AlreadyExistsError(fmt::format("job {} is already queued", job));
  }
  if (absl::Status s = spec.Validate("spec"); !s.ok()) return s;
  auto entry = std::make_unique<Entry>();
  entry->name = std::string(job);
  entry->spec = spec;
  for (const TaskGroup& group : spec.tasks) {
    for (int32_t r = 0; r < group.replicas; ++r) {
      entry->tasks.push_back(group.request);
      entry->task_names.push_back(fmt::format("{}-{}", group.name, r));
    }
  }
  entry->placed.assign(entry->tasks.size(), false);
  entry->sequence = next_sequence_++;
  entry->submit_time = env_.clock->Now();
  jobs_.emplace(entry->name, std::move(entry));
  return absl::OkStatus();
}

absl::Status Scheduler::Restore(std::string_view job, const JobSpec& spec,
                                std::span<const TaskBinding> placed, TimePoint started) {
  if (absl::Status s = Submit(job, spec); !s.ok()) return s;
  if (placed.empty()) return absl::OkStatus();
  Entry& entry = *jobs_.find(job)->second;
  for (const TaskBinding& binding : placed) {
    if (binding.task < 0 || binding.task >= static_cast<int32_t>(entry.placed.size())) {
      jobs_.erase(entry.name);
      return absl::InvalidArgumentError(fmt::format("job {}: no task {}", job, binding.task));
    }
    entry.placed[binding.task] = true;
  }
  entry.state = Entry::State::kRunning;
  entry.satisfiability_checked = true;
  return absl::OkStatus();
}

absl::Status Scheduler::Hold(std::string_view job) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return absl::NotFoundError(fmt::format("job {} is not queued", job));
  it->second->state = Entry::State::kHeld;
  it->second->has_reason = false;
  return absl::OkStatus();
}

absl::Status Scheduler::Requeue(std::string_view job, TimePoint not_before) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return absl::NotFoundError(fmt::format("job {} is not queued", job));
  Entry& e = *it->second;
  e.state = Entry::State::kPending;
  e.placed.assign(e.tasks.size(), false);
  e.not_before = not_before;
  e.has_reason = false;
  return absl::OkStatus();
}

void Scheduler::Remove(std::string_view job) {
  auto it = jobs_.find(job);
  if (it != jobs_.end()) jobs_.erase(it);
}

const PendingReason* Scheduler::Reason(std::string_view job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return nullptr;
  const Entry& e = *it->second;
  return e.state == Entry::State::kPending && e.has_reason ? &e.reason : nullptr;
}

const std::vector<TaskRequest>* Scheduler::Tasks(std::string_view job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : &it->second->tasks;
}

std::vector<Scheduler::Entry*> Scheduler::QueueOrder() {
  std::vector<Entry*> order;
  order.reserve(jobs_.size());
  for (auto& [name, entry] : jobs_) order.push_back(entry.get());
  auto info = [](const Entry* e) { return QueuedJobInfo{&e->spec, e->sequence, e->submit_time}; };
  std::sort(order.begin(), order.end(),
            [&](const Entry* a, const Entry* b) { return framework_->Less(info(a), info(b)); });
  return order;
}

void Scheduler::RunCycle(ClusterState& state, SchedulerSink& sink) {
  const TimePoint now = env_.clock->Now();
  for (Entry* entry : QueueOrder()) {
    switch (entry->state) {
      case Entry::State::kHeld:
        break;
      case Entry::State::kRunning:
        PlaceRemaining(state, *entry, sink);
        break;
      case Entry::State::kPending:
        if (!entry->satisfiability_checked && RefuseIfUnsatisfiable(state, *entry, sink)) break;
        if (now < entry->not_before) {
          SetPending(*entry,
                     {std::string(kReasonBackoff),
                      fmt::format("requeued; next attempt in {}",
                                  FormatDuration(entry->not_before - now))},
                     sink);
          break;
        }
        TryGang(state, *entry, sink);
        break;
    }
  }
}

bool Scheduler::RefuseIfUnsatisfiable(ClusterState& state, Entry& entry, SchedulerSink& sink) {
  entry.satisfiability_checked = true;
  std::set<std::string> seen;
  for (size_t i = 0; i < entry.tasks.size(); ++i) {
    if (!seen.insert(entry.tasks[i].EquivalenceKey()).second) continue;
    TaskAttempt attempt = framework_->PlaceTask(state, entry.tasks[i], MatchMode::kSatisfiability);
    if (attempt.placement.has_value() || attempt.status.code() == SchedStatus::Code::kError) {
      continue;
    }
    const PendingReason reason{std::string(kReasonRefused),
                               fmt::format("task {} fits no node even on an empty cluster: {}",
                                           entry.task_names[i], attempt.diagnosis.ToString())};
    const std::string name = entry.name;
    jobs_.erase(name);  // `entry` is gone from here on
    sink.OnRefused(name, reason);
    return true;
  }
  return false;
}

void Scheduler::TryGang(ClusterState& state, Entry& entry, SchedulerSink& sink) {
  std::vector<int32_t> all(entry.tasks.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
  PendingReason failure;
  std::vector<TaskBinding> bound = Attempt(state, entry, all, entry.spec.GangSize(), &failure);
  if (bound.empty()) {
    SetPending(entry, std::move(failure), sink);
    return;
  }
  entry.state = Entry::State::kRunning;
  entry.has_reason = false;
  sink.OnPlaced(entry.name, /*gang=*/true, bound);
}

void Scheduler::PlaceRemaining(ClusterState& state, Entry& entry, SchedulerSink& sink) {
  std::vector<int32_t> remaining;
  for (size_t i = 0; i < entry.placed.size(); ++i) {
    if (!entry.placed[i]) remaining.push_back(static_cast<int32_t>(i));
  }
  if (remaining.empty()) return;
  PendingReason ignored;
  std::vector<TaskBinding> bound = Attempt(state, entry, remaining, 1, &ignored);
  if (!bound.empty()) sink.OnPlaced(entry.name, /*gang=*/false, bound);
}

std::vector<TaskBinding> Scheduler::Attempt(ClusterState& state, Entry& entry,
                                            const std::vector<int32_t>& indices,
                                            int32_t min_available, PendingReason* failure) {
  std::vector<TaskRequest> tasks;
  tasks.reserve(indices.size());
  for (int32_t i : indices) tasks.push_back(entry.tasks[i]);
  GangAttempt gang = framework_->ScheduleGang(state, entry.name, tasks, min_available);
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
      failure->total_nodes = gang.diagnosis.total_nodes();
      for (const ReasonCount& count : gang.diagnosis.Counts()) {
        failure->rejections.emplace_back(count.reason->detail, count.nodes);
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

}  // namespace tessera

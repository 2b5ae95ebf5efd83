// JobManager: the Scheduler's decisions and the job lifecycle they drive — placement,
// admission, preemption, task ends, restart, requeue and the end of a job (job_manager.h).
#include "server/job_manager.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <future>
#include <utility>

#include "control/attempt.h"
#include "control/attempt_tally.h"
#include "control/restart_rules.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "server/job_manager_internal.h"

namespace tessera::server {

// ---------------------------------------------------------------------------------------------
// Scheduler decisions

void JobManager::OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  std::vector<JobEvent> events;
  std::vector<std::string> placed;
  for (const TaskBinding& binding : tasks) {
    TaskRuntime& task = record.tasks[binding.task];
    task.placement = binding.placement;
    task.cluster = ClusterOf(task.placement.node)->name();
    task.launch_id = LaunchId(record.id, task.name, record.attempt);
    task.phase = TaskPhase::kPending;
    record.TaskChanged(binding.task);
    launches_[task.launch_id] = {.job = record.id, .task = binding.task};
    placed.push_back(DescribePlacement(task));
  }
  if (gang) {
    ObservePlacementLatency(record);
    if (record.status().phase == JobPhase::kPending) {
      MarkAdmitted(record, events, fmt::format("gang of {} placed", tasks.size()));
    }
    record.status().reason.clear();
    record.status().message.clear();
    record.status().cluster = record.tasks[tasks.front().task].cluster;
    explanations_.erase(record.id);
  }
  AddEvent(record, events, "Placed", "", fmt::format("{}", fmt::join(placed, ", ")));
  record.SyncTaskStatus();
  metrics_->Placed(1);
  const int64_t id = record.id;
  const int32_t attempt = record.attempt;
  PersistLocked(record, std::move(events),
                [this, id, attempt] { Post(BindingsCommitted{id, attempt}); });
}

void JobManager::ObservePlacementLatency(const JobRecord& record) {
  const std::optional<TimePoint> since =
      record.attempt == 0 ? record.status().submit_time : record.requeued_at;
  if (!since.has_value()) return;  // a requeued attempt read back from the store
  metrics_->PlacementLatency(std::chrono::duration<double>(options_.clock->Now() - *since).count());
}

void JobManager::OnRefused(std::string_view job, const PendingReason& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  std::vector<JobEvent> events;
  metrics_->Refused();
  Finish(record, events, JobPhase::kFailed, reason.code, reason.message);
  PersistLocked(record, std::move(events));
}

void JobManager::OnPending(std::string_view job, const PendingReason& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (record.status().reason != reason.code || record.status().message != reason.message) {
    record.status().reason = reason.code;
    record.status().message = reason.message;
    MarkChangedLocked(record.id);
  }
  JobExplanation& explanation = explanations_[record.id];
  explanation = {.phase = record.status().phase,
                 .reason = reason.code,
                 .message = reason.message,
                 .total_nodes = reason.total_nodes};
  for (const auto& [text, nodes] : reason.rejections) {
    explanation.rejections.push_back({.reason = text, .nodes = nodes});
  }
}

void JobManager::OnAdmitted(std::string_view job) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (record.status().phase != JobPhase::kPending) return;
  std::vector<JobEvent> events;
  MarkAdmitted(record, events,
               fmt::format("quota reserved in queue {}", record.document.spec.queue));
  PersistLocked(record, std::move(events));
}

void JobManager::MarkAdmitted(JobRecord& record, std::vector<JobEvent>& events,
                              std::string message) {
  record.status().phase = JobPhase::kAdmitted;
  record.status().reason.clear();
  record.status().message.clear();
  record.status().estimated_start_time.reset();
  explanations_.erase(record.id);
  AddEvent(record, events, "Admitted", "", std::move(message));
}

void JobManager::OnAdmissionRevoked(std::string_view job, const PendingReason& reason,
                                    bool preempted) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (record.status().phase != JobPhase::kAdmitted) return;
  std::vector<JobEvent> events;
  record.status().phase = JobPhase::kPending;
  record.status().reason = reason.code;
  record.status().message = reason.message;
  if (preempted) ++record.status().preemptions;
  // Reclaimed: a queue below its guarantee took the quota back (a preemption); GangTimeout: not
  // placed in time; otherwise the capacity it waited for went to another job.
  const char* type = preempted                       ? "Reclaimed"
                     : reason.code == "GangTimeout" ? "GangTimeout"
                                                    : "AdmissionRevoked";
  AddEvent(record, events, type, reason.code, reason.message);
  PersistLocked(record, std::move(events));
}

void JobManager::OnPreempted(std::string_view job, const PendingReason& reason, bool requeue) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (IsTerminal(record.status().phase) || record.preemption != control::Eviction::kNone) return;
  record.preemption =
      requeue ? control::Eviction::kPreemptRequeue : control::Eviction::kPreemptCancel;
  ++record.status().preemptions;
  std::vector<JobEvent> events;
  AddEvent(record, events, "Preempted", reason.code.empty() ? "Preempted" : reason.code,
           reason.message);
  // The teardown calls the Scheduler (Hold, Requeue), which a sink must not: it runs as the
  // loop's next event.
  const int64_t id = record.id;
  PersistLocked(record, std::move(events));
  Post(PreemptionStarted{id});
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

void JobManager::EndTask(JobRecord& record, int32_t index, TaskPhase phase,
                         std::optional<int32_t> exit_code, std::string reason,
                         std::string message) {
  TaskRuntime& task = record.tasks[index];
  task.ended = true;
  task.phase = phase;
  task.exit_code = exit_code;
  task.reason = std::move(reason);
  task.message = std::move(message);
  record.TaskChanged(index);
  launches_.erase(task.launch_id);
  if (task.placement.node_index < 0) return;
  const TaskRequest request = TaskRequestOf(record.document.spec, index);
  std::lock_guard<std::mutex> lock(state_mu_);
  state_.Forget(request, task.placement);
  task.placement.node_index = -1;
}

namespace {

control::TaskState StateOf(const TaskRuntime& task) {
  return {.active = IsActive(task), .phase = task.phase, .reason = task.reason};
}

// control::Assess over every task of the record, for the check below.
[[maybe_unused]] bool TallyMatchesTasks(const JobRecord& record, bool stopping,
                                        const control::AttemptState& state) {
  std::vector<control::TaskState> tasks;
  for (const TaskRuntime& task : record.tasks) tasks.push_back(StateOf(task));
  const control::AttemptState whole = control::Assess(tasks, stopping);
  return whole.step == state.step && whole.failed == state.failed;
}

// Where the record's attempt stands: its tally, brought up to date with the tasks changed since
// it last looked (all of them the first time), so that a task's end costs O(1) whatever the
// job's width.
control::AttemptState AssessAttempt(JobRecord& record) {
  const auto size = static_cast<int32_t>(record.tasks.size());
  if (record.tally.size() != size) {
    record.tally = control::AttemptTally(size);
    record.untallied_tasks.MarkAll(size);
  }
  for (int32_t i : record.untallied_tasks.Take()) record.tally.Set(i, StateOf(record.tasks[i]));
  control::AttemptState state = record.tally.Assess(Stopping(record));
  if (state.failed) state.failure = control::FailureOf(record.tasks[*state.failed].reason);
  assert(TallyMatchesTasks(record, Stopping(record), state));
  return state;
}

}  // namespace

void JobManager::Resolve(JobRecord& record, std::vector<JobEvent>& events) {
  if (IsTerminal(record.status().phase)) return;
  const control::AttemptState state = AssessAttempt(record);
  switch (state.step) {
    case control::AttemptStep::kRunning:
      return;
    case control::AttemptStep::kTearDown:
      scheduler_->Hold(FormatJobId(record.id)).IgnoreError();  // no more placements meanwhile
      for (const TaskRuntime& task : record.tasks) {
        if (IsActive(task) && task.launched) {
          ClusterOf(task.placement.node)
              ->Cancel(task.launch_id,
                       record.eviction_grace.value_or(record.document.spec.termination_grace));
        }
      }
      return;
    case control::AttemptStep::kOver:
      break;
  }
  const TaskRuntime* failed = state.failed ? &record.tasks[*state.failed] : nullptr;
  const control::AttemptOutcome outcome =
      control::AfterAttempt(record.document.spec.restart_policy, record.restarts,
                            {.cancel_requested = record.cancel_requested,
                             .eviction = record.preemption,
                             .failure = state.failure},
                            options_.requeue_backoff);
  const control::Eviction eviction = record.preemption;
  record.preemption = control::Eviction::kNone;
  record.eviction_grace.reset();
  EndAttempt(record, events, outcome, eviction, failed, state.failure);
}

void JobManager::EndAttempt(JobRecord& record, std::vector<JobEvent>& events,
                            const control::AttemptOutcome& outcome, control::Eviction eviction,
                            const TaskRuntime* failed, std::string_view failure) {
  const TimePoint now = options_.clock->Now();
  switch (outcome.verdict) {
    case control::Verdict::kCancelled:
      if (record.cancel_requested) {
        Finish(record, events, JobPhase::kCancelled, "Cancelled", "cancelled on request");
      } else {
        Finish(record, events, JobPhase::kCancelled, "Preempted",
               "preempted; the scheduling policy cancels preempted jobs");
      }
      return;
    case control::Verdict::kFailed:
      Finish(record, events, JobPhase::kFailed, std::string(failure), DescribeEnd(*failed));
      return;
    case control::Verdict::kSucceeded:
      Finish(record, events, JobPhase::kSucceeded, "", "every task exited 0");
      return;
    case control::Verdict::kRequeue:
      break;
  }
  switch (eviction) {
    case control::Eviction::kDrain:
      Restart(record, events, "NodeDrained", "evicted by a node drain; waits again", now);
      return;
    case control::Eviction::kTaint:
      Restart(record, events, "NoExecuteTaint", "evicted by a NoExecute taint; waits again", now);
      return;
    case control::Eviction::kPreemptRequeue:
    case control::Eviction::kPreemptCancel:
      Restart(record, events, "Preempted",
              fmt::format("preempted {} time(s); waits again", record.status().preemptions),
              now + outcome.backoff);
      return;
    case control::Eviction::kNone:
      break;
  }
  std::string message = fmt::format(
      "{}; restart {} of {} after a back-off of {}", DescribeEnd(*failed), outcome.restarts,
      record.document.spec.restart_policy.max_restarts, FormatDuration(outcome.backoff));
  record.restarts = outcome.restarts;
  Restart(record, events, std::string(failure), std::move(message), now + outcome.backoff);
}

void JobManager::Restart(JobRecord& record, std::vector<JobEvent>& events, std::string reason,
                         std::string message, TimePoint not_before) {
  ++record.attempt;
  record.requeued_at = options_.clock->Now();
  for (TaskRuntime& task : record.tasks) task = TaskRuntime{.name = task.name};
  record.AllTasksChanged();
  record.status().phase = JobPhase::kPending;
  record.status().reason = "Requeued";
  record.status().message = message;
  record.status().cluster.clear();
  record.status().start_time.reset();
  record.SyncTaskStatus();
  AddEvent(record, events, "Requeued", std::move(reason), std::move(message));
  if (not_before > options_.clock->Now()) wake_ups_.At(not_before);  // a cycle when it ends
  if (!scheduler_->Requeue(FormatJobId(record.id), not_before).ok()) {
    scheduler_->Submit(FormatJobId(record.id), SchedulingSpec(record.document.spec)).IgnoreError();
  }
}

void JobManager::Finish(JobRecord& record, std::vector<JobEvent>& events, JobPhase phase,
                        std::string reason, std::string message) {
  scheduler_->Remove(FormatJobId(record.id));
  explanations_.erase(record.id);
  record.status().estimated_start_time.reset();
  active_names_.erase(IndexKey(record.tenant, record.document.spec.name));
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    if (record.tasks[i].phase == TaskPhase::kPending) {
      record.tasks[i].phase = TaskPhase::kCancelled;  // never ran
      record.TaskChanged(static_cast<int32_t>(i));
    }
  }
  record.status().phase = phase;
  record.status().reason = reason;
  record.status().message = message;
  record.status().end_time = options_.clock->Now();
  record.SyncTaskStatus();
  metrics_->Finished(phase);
  AddEvent(record, events, std::string(JobPhaseName(phase)), std::move(reason),
           std::move(message));
}

TaskLaunchSpec JobManager::LaunchSpec(const JobRecord& record, int32_t index,
                                      const PeerNodes& peers) const {
  const JobSpec& spec = record.document.spec;
  const TaskGroup* group = GroupOf(spec, index);  // a task of the record: never nullptr
  const TaskRuntime& task = record.tasks[index];
  TaskLaunchSpec launch{.launch_id = task.launch_id,
                        .job_id = FormatJobId(record.id),
                        .task_name = task.name,
                        .placement = task.placement,
                        .cpu = group->request.cpu,
                        .memory = group->request.memory,
                        .command = group->command,
                        .args = group->args,
                        .env = group->env,
                        .working_dir = group->working_dir,
                        .time_limit = spec.time_limit,
                        .termination_grace = spec.termination_grace,
                        .duration = spec.duration,
                        .peer_nodes = peers,
                        .rank = index};
  launch.env["TESSERA_JOB_ID"] = launch.job_id;
  launch.env["TESSERA_TASK_NAME"] = task.name;
  return launch;
}

Cluster* JobManager::ClusterOf(std::string_view node) const {
  std::lock_guard<std::mutex> lock(clusters_mu_);
  auto it = node_cluster_.find(node);
  return it == node_cluster_.end() ? nullptr : it->second;
}

}  // namespace tessera::server

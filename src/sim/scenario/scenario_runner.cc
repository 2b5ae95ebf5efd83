#include "sim/scenario/scenario_runner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "control/attempt.h"
#include "control/restart_rules.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sched/plugins/builtin.h"
#include "sched/scheduler.h"
#include "sim/engine/event_queue.h"
#include "sim/scenario/expectation_checker.h"
#include "sim/scenario/expectation_judge.h"
#include "sim/scenario/scenario_workload.h"
#include "sim/scenario/sim_state.h"

namespace tessera::sim {
namespace {

// A run that has not ended after this many instants is stopped (a scenario that restarts a
// failing job billions of times): the report says so.
constexpr int64_t kMaxInstants = 1'000'000;

TimePoint At(Duration d) { return TimePoint{} + d; }

std::string DescribePlacement(const JobRun& job, const TaskBinding& b) {
  std::string out = fmt::format("{}->{}", job.task_names[b.task], b.placement.node);
  if (!b.placement.gpus.empty())
    out += fmt::format("[{}]", fmt::format("{}", fmt::join(b.placement.gpus, ",")));
  return out;
}

// The job is being stopped whatever its tasks do: an eviction, or a cancel or a time limit that
// already decided its phase.
bool Stopping(const JobRun& job) {
  return job.eviction != control::Eviction::kNone || (job.phase && IsTerminal(*job.phase));
}

class Runner final : public SchedulerSink {
 public:
  Runner(const Scenario& scenario, uint64_t seed, std::ostream& out)
      : scenario_(scenario), rng_(seed), out_(out) {}

  absl::Status Setup();
  RunReport Run();

  void OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) override;
  void OnRefused(std::string_view job, const PendingReason& reason) override;
  void OnPending(std::string_view job, const PendingReason& reason) override;
  void OnAdmitted(std::string_view job) override;
  void OnAdmissionRevoked(std::string_view job, const PendingReason& reason,
                          bool preempted) override;
  void OnPreempted(std::string_view job, const PendingReason& reason, bool requeue) override;

 private:
  TimePoint Now() const { return queue_.Now(); }
  void Log(std::string_view kind, std::string_view text) { LogAt(Now(), kind, text); }
  void LogAt(TimePoint t, std::string_view kind, std::string_view text);
  void ApplyEvent(const ScenarioEvent& event);
  void ApplyNodeEvent(const ScenarioEvent& event, int32_t index);
  void Submit(JobRun& job);
  void Cancel(JobRun& job);
  void JobEnds(JobRun& job, int64_t attempt);
  void TimeLimitReached(JobRun& job, int64_t attempt);
  // Tasks on node `index` (and on its device `device`, when given) are lost at once.
  void LoseTasksOn(int32_t index, std::optional<int32_t> device, const std::string& why);
  // Signals every job with a task on node `index` (not tolerating `taint`, when given).
  void EvictTasksOn(int32_t index, const Taint* taint, const std::string& why);
  // Task `task` of the current attempt ended with `phase` (`reason`: why it failed); its
  // resources are free again.
  void EndTask(JobRun& job, size_t task, TaskPhase phase, std::string reason);
  // Where the job's attempt stands now that its tasks changed (control::Assess): a failed task
  // tears down the others at once; an attempt with no active task left ends (EndAttempt).
  void Resolve(JobRun& job);
  // Signals every task of the job; they end after `grace` (at once when zero): StopTasks.
  void Teardown(JobRun& job, Duration grace, std::string code, std::string message);
  // A teardown's grace ended: the tasks still held end cancelled and are released; Resolve.
  void StopTasks(JobRun& job);
  // The attempt is over: the job is requeued or ended as control::AfterAttempt says, unless a
  // cancel or a time limit already ended it.
  void EndAttempt(JobRun& job, const control::AttemptState& state);
  // Makes the job Pending again for a new attempt after `outcome`'s back-off.
  void Requeue(JobRun& job, const control::AttemptOutcome& outcome, control::Eviction eviction);
  // Runs the events of instant `t` and a scheduling cycle after them, again while the cycle's
  // decisions add events at `t` (an eviction without grace); false when nothing happened.
  bool RunInstant(TimePoint t);
  void Release(JobRun& job, size_t task);
  void ReleaseAll(JobRun& job);
  void End(JobRun& job, JobPhase phase, std::string reason, std::string message);

  const Scenario& scenario_;
  Rng rng_;
  std::ostream& out_;
  EventQueue queue_;
  SimState state_;
  TargetWorkload workload_;
  std::unique_ptr<Scheduler> scheduler_;
  std::optional<ExpectationJudge> judge_;
  bool acted_ = false;  // something happened at the instant being run (not only stale timers)
  std::set<TimePoint> wakeups_;  // instants already scheduled for NextWakeup
};

absl::Status Runner::Setup() {
  state_.scenario = &scenario_;
  for (const ScenarioNode& sn : scenario_.nodes) {
    Node node = sn.node;
    node.condition =
        sn.state == InitialNodeState::kDown ? NodeCondition::kDown : NodeCondition::kReady;
    node.unschedulable = sn.state == InitialNodeState::kCordoned;
    absl::StatusOr<int32_t> added = state_.cluster.AddNode(std::move(node));
    if (!added.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}:{}: nodes: {}", scenario_.file, sn.line,
                                                    std::string(added.status().message())));
    }
  }
  std::map<std::string, std::string> parent;
  for (const ScenarioQueue& q : scenario_.queues) parent[q.name()] = q.spec.parent;
  for (const ScenarioQueue& q : scenario_.queues) {
    state_.queue_leaves[q.name()];
    if (!q.leaf) continue;
    for (std::string at = q.name(); !at.empty(); at = parent[at])
      state_.queue_leaves[at].insert(q.name());
  }
  state_.jobs.reserve(scenario_.jobs.size());
  for (const ScenarioJob& sj : scenario_.jobs) {
    JobRun job;
    job.def = &sj;
    for (const TaskGroup& group : sj.spec.tasks) {
      for (int32_t r = 0; r < group.replicas; ++r) {
        job.tasks.push_back(group.request);
        job.task_names.push_back(fmt::format("{}-{}", group.name, r));
      }
    }
    job.held.resize(job.tasks.size());
    job.last.resize(job.tasks.size());
    job.ended.resize(job.tasks.size());
    state_.job_index.emplace(sj.spec.name, static_cast<int32_t>(state_.jobs.size()));
    state_.jobs.push_back(std::move(job));
  }
  workload_ = ScenarioWorkload(scenario_);
  const Registry registry = BuiltinPlugins();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(
      scenario_.config.profile, registry,
      SchedulerEnv{.rng = &rng_, .clock = &queue_.clock(), .target_workload = &workload_},
      scenario_.config.policy);
  if (!scheduler.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}:{}: config.profile: {}", scenario_.file,
                                                  std::max(scenario_.config.profile_line, 1),
                                                  std::string(scheduler.status().message())));
  }
  scheduler_ = *std::move(scheduler);
  std::vector<QueueSpec> queues;
  for (const ScenarioQueue& q : scenario_.queues) queues.push_back(q.spec);
  if (absl::Status s = scheduler_->SetQueues(queues); !s.ok()) {
    const int line = scenario_.queues.empty() ? 1 : scenario_.queues.front().line;
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: queues: {}", scenario_.file, line, std::string(s.message())));
  }

  for (const ScenarioEvent& event : scenario_.events) {
    queue_.Push(At(event.at), EventClass::kClusterEvent, [this, &event] { ApplyEvent(event); });
  }
  for (JobRun& job : state_.jobs) {
    queue_.Push(At(job.def->at), EventClass::kSubmission, [this, &job] { Submit(job); });
  }
  // Every `at` and `by` time is an instant of the run, even when nothing else happens then.
  for (const Expectation& e : scenario_.expectations) {
    if (e.timing == Timing::kAt || e.timing == Timing::kBy) {
      queue_.Push(At(e.time), EventClass::kObserve, [this] { acted_ = true; });
    }
  }
  if (scenario_.until) {
    queue_.Push(At(*scenario_.until), EventClass::kObserve, [this] { acted_ = true; });
  }
  judge_.emplace(scenario_, state_, [this](size_t i, const ExpectationResult& result) {
    LogAt(result.at, "FAILED",
          fmt::format("expect[{}] {}: {}", i, result.expectation->text, result.seen));
  });
  return absl::OkStatus();
}

RunReport Runner::Run() {
  Log("scenario", fmt::format("{} ({}): {} nodes, {} jobs, profile {}, seed {}", scenario_.name,
                              scenario_.file, scenario_.nodes.size(), scenario_.jobs.size(),
                              scenario_.config.profile.name, rng_.seed()));
  TimePoint last{};
  int64_t instants = 0;
  bool truncated = false;
  while (!queue_.empty()) {
    const TimePoint t = queue_.NextTime();
    if (scenario_.until && t > At(*scenario_.until)) break;
    if (++instants > kMaxInstants) {
      LogAt(last, "stop", fmt::format("the run was stopped after {} instants", kMaxInstants));
      truncated = true;
      break;
    }
    if (!RunInstant(t)) continue;  // only stale timers (a job that ended early): not an instant
    judge_->Observe(t);
    for (JobRun& job : state_.jobs) {
      if (job.preempted && !job.terminating) job.preempted = false;  // requeued: Pending now
    }
    last = t;
  }
  RunReport report;
  if (truncated) {
    judge_->ObserveCut(last, kMaxInstants);
    report.truncated_after = kMaxInstants;
  } else {
    LogAt(last, "end", "the run ends");
    judge_->ObserveEnd(last);
  }
  report.results = judge_->TakeResults();
  for (const JobRun& job : state_.jobs) {
    std::set<std::string> clusters;
    for (const std::optional<Placement>& p : job.last) {
      if (p) clusters.insert(state_.cluster.node(p->node_index).cluster);
    }
    report.jobs.push_back(JobOutcome{.name = job.name(),
                                     .submit = At(job.def->at),
                                     .first_start = job.first_start,
                                     .end = job.end,
                                     .phase = std::string(PhaseName(job.phase)),
                                     .preemptions = job.preemptions,
                                     .restarts = job.restarts,
                                     .clusters = {clusters.begin(), clusters.end()}});
  }
  report.end = last;
  report.seed = rng_.seed();
  return report;
}

bool Runner::RunInstant(TimePoint t) {
  // A cycle's evictions without grace add events at `t`; each pass frees resources for the
  // next, so a few passes settle every instant (more would mean evictions feeding each other).
  constexpr int kMaxPasses = 16;
  bool any = false;
  for (int pass = 0; pass < kMaxPasses && !queue_.empty() && queue_.NextTime() == t; ++pass) {
    acted_ = false;
    while (!queue_.empty() && queue_.NextTime() == t) queue_.RunNext();
    if (!acted_) continue;
    any = true;
    scheduler_->RunCycle(state_.cluster, *this);
  }
  // A job that waits on time alone (a back-off, a gang timeout, a victim's min_runtime, a
  // preemption rate limit) is tried again when that time comes.
  if (std::optional<TimePoint> wakeup = scheduler_->NextWakeup();
      any && wakeup && wakeups_.insert(*wakeup).second) {
    queue_.Push(*wakeup, EventClass::kObserve, [this] { acted_ = true; });
  }
  return any;
}

void Runner::LogAt(TimePoint t, std::string_view kind, std::string_view text) {
  out_ << fmt::format("{:>9}  {:<9} {}\n", FormatTime(t), kind, text);
}

void Runner::ApplyEvent(const ScenarioEvent& event) {
  acted_ = true;
  if (event.action == EventAction::kCancel) {
    Cancel(state_.job(event.job));
    return;
  }
  const int32_t index = *state_.cluster.FindNode(event.node);
  if (state_.cluster.node(index).removed) {
    Log("node",
        fmt::format("{} {}: ignored, the node was removed", event.node, ToString(event.action)));
    return;
  }
  ApplyNodeEvent(event, index);
}

void Runner::ApplyNodeEvent(const ScenarioEvent& event, int32_t index) {
  const std::string why = fmt::format("node {} {}", event.node, ToString(event.action));
  std::string detail;
  if (event.action == EventAction::kGpuUnhealthy || event.action == EventAction::kGpuHealthy) {
    detail = fmt::format(" (GPU {})", event.gpu);
  } else if (event.action == EventAction::kTaint || event.action == EventAction::kUntaint) {
    detail = fmt::format(" ({}={})", event.taint.key, event.taint.value);
  }
  Log("node", why + detail);
  switch (event.action) {
    case EventAction::kDown:
      LoseTasksOn(index, std::nullopt, why);
      state_.cluster.MutableNode(index).condition = NodeCondition::kDown;
      break;
    case EventAction::kUp:
      state_.cluster.MutableNode(index).condition = NodeCondition::kReady;
      break;
    case EventAction::kCordon:
      state_.cluster.MutableNode(index).unschedulable = true;
      break;
    case EventAction::kUncordon:
      state_.cluster.MutableNode(index).unschedulable = false;
      break;
    case EventAction::kDrain:
      state_.cluster.MutableNode(index).unschedulable = true;
      EvictTasksOn(index, nullptr, fmt::format("node {} drained", event.node));
      break;
    case EventAction::kRemove:
      LoseTasksOn(index, std::nullopt, why);
      state_.cluster.MutableNode(index).removed = true;
      break;
    case EventAction::kGpuUnhealthy:
      LoseTasksOn(index, event.gpu,
                  fmt::format("GPU {} of node {} unhealthy", event.gpu, event.node));
      state_.cluster.MutableNode(index).gpus[event.gpu].healthy = false;
      break;
    case EventAction::kGpuHealthy:
      state_.cluster.MutableNode(index).gpus[event.gpu].healthy = true;
      break;
    case EventAction::kTaint: {
      std::vector<Taint>& taints = state_.cluster.MutableNode(index).taints;
      std::erase_if(taints, [&](const Taint& t) {
        return t.key == event.taint.key && t.effect == event.taint.effect;
      });
      taints.push_back(event.taint);
      if (event.taint.effect == TaintEffect::kNoExecute) {
        EvictTasksOn(index, &event.taint,
                     fmt::format("NoExecute taint {} on node {}", event.taint.key, event.node));
      }
      break;
    }
    case EventAction::kUntaint:
      std::erase_if(state_.cluster.MutableNode(index).taints, [&](const Taint& t) {
        return t.key == event.taint.key && (!event.has_effect || t.effect == event.taint.effect);
      });
      break;
    case EventAction::kCancel:
      break;
  }
}

void Runner::Submit(JobRun& job) {
  acted_ = true;
  if (job.cancel_before_submit) {
    Log("submit", fmt::format("{}: cancelled before submission", job.name()));
    End(job, JobPhase::kCancelled, "Cancelled", "cancelled on request");
    return;
  }
  absl::Status submitted = scheduler_->Submit(job.name(), job.def->spec);
  if (!submitted.ok()) {
    Log("submit", fmt::format("{}: rejected: {}", job.name(), std::string(submitted.message())));
    End(job, JobPhase::kFailed, "Refused", std::string(submitted.message()));
    return;
  }
  job.phase = JobPhase::kPending;
  Log("submit",
      fmt::format("{}: {} tasks, gang {}, queue {}, priority {}", job.name(), job.tasks.size(),
                  job.def->spec.GangSize(), job.def->spec.queue, job.def->spec.priority));
}

void Runner::Cancel(JobRun& job) {
  if (!job.phase.has_value()) {
    job.cancel_before_submit = true;
    Log("cancel", fmt::format("{}: not submitted yet; cancelled on arrival", job.name()));
    return;
  }
  switch (*job.phase) {
    case JobPhase::kPending:
    case JobPhase::kAdmitted:
      Log("cancel", job.name());
      scheduler_->Remove(job.name());
      job.charged = false;
      End(job, JobPhase::kCancelled, "Cancelled", "cancelled on request");
      return;
    case JobPhase::kRunning:
      Log("cancel", fmt::format("{}: signalling {} tasks, grace {}", job.name(), job.HeldTasks(),
                                FormatDuration(job.def->spec.termination_grace)));
      scheduler_->Remove(job.name());
      job.charged = false;
      job.phase = JobPhase::kCancelled;
      job.reason = "Cancelled";
      job.message = "cancelled on request";
      if (!job.terminating) Teardown(job, job.def->spec.termination_grace, "", "");
      return;
    default:
      Log("cancel", fmt::format("{}: already {}; nothing to do", job.name(), PhaseName(job.phase)));
  }
}

void Runner::OnPlaced(std::string_view name, bool gang, std::span<const TaskBinding> tasks) {
  JobRun& job = state_.job(name);
  std::vector<std::string> where;
  for (const TaskBinding& b : tasks) {
    job.held[b.task] = b.placement;
    job.last[b.task] = b.placement;
    where.push_back(DescribePlacement(job, b));
  }
  if (!gang) {
    Log("scale", fmt::format("{}: {}", job.name(), fmt::format("{}", fmt::join(where, " "))));
    return;
  }
  job.phase = JobPhase::kRunning;
  job.charged = true;
  job.reason.clear();
  job.message.clear();
  if (!job.first_start) job.first_start = Now();
  ++job.starts;
  Log("start", fmt::format("{}: {}", job.name(), fmt::format("{}", fmt::join(where, " "))));
  const int64_t attempt = job.attempt;
  queue_.Push(Now() + job.def->duration, EventClass::kTaskCompletion,
              [this, &job, attempt] { JobEnds(job, attempt); });
  // The time limit counts from the latest start, and holds through a termination grace.
  if (job.def->spec.time_limit) {
    const int64_t start = job.starts;
    queue_.Push(Now() + *job.def->spec.time_limit, EventClass::kTaskCompletion,
                [this, &job, start] { TimeLimitReached(job, start); });
  }
}

void Runner::OnAdmitted(std::string_view name) {
  JobRun& job = state_.job(name);
  job.charged = true;
  job.phase = JobPhase::kAdmitted;
  Log("admit", fmt::format("{}: quota held in queue {} while its victims terminate", job.name(),
                           job.def->spec.queue));
}

void Runner::OnAdmissionRevoked(std::string_view name, const PendingReason& reason,
                                bool preempted) {
  JobRun& job = state_.job(name);
  job.charged = false;
  job.phase = JobPhase::kPending;
  job.reason = reason.code;
  job.message = reason.message;
  if (preempted) {
    ++job.preemptions;
    job.preempted = true;
  }
  Log(preempted ? "reclaim" : "unadmit", fmt::format("{}: {}", job.name(), reason.message));
}

void Runner::OnPreempted(std::string_view name, const PendingReason& reason, bool requeue) {
  JobRun& job = state_.job(name);
  job.charged = false;
  job.preempted = true;
  ++job.preemptions;
  job.phase = JobPhase::kPending;  // reads "Preempted" until it is requeued
  job.reason = reason.code;
  job.message = reason.message;
  const Duration grace = job.def->spec.termination_grace;
  Log("preempt", fmt::format("{}: {}; signalling {} tasks, grace {}", job.name(), reason.message,
                             job.HeldTasks(), FormatDuration(grace)));
  job.terminating = true;
  job.eviction = requeue ? control::Eviction::kPreemptRequeue : control::Eviction::kPreemptCancel;
  job.teardown_code = reason.code;
  job.teardown_message = reason.message;
  ++job.attempt;
  const int64_t attempt = job.attempt;
  queue_.Push(Now() + grace, EventClass::kTaskCompletion, [this, &job, attempt] {
    if (job.attempt != attempt || !job.terminating) return;
    acted_ = true;
    StopTasks(job);
  });
}

void Runner::OnRefused(std::string_view name, const PendingReason& reason) {
  JobRun& job = state_.job(name);
  Log("refuse", fmt::format("{}: {}", job.name(), reason.message));
  End(job, JobPhase::kFailed, reason.code, reason.message);
}

void Runner::OnPending(std::string_view name, const PendingReason& reason) {
  JobRun& job = state_.job(name);
  job.reason = reason.code;
  job.message = reason.message;
  Log("pending", fmt::format("{}: {}: {}", job.name(), reason.code, reason.message));
}

void Runner::JobEnds(JobRun& job, int64_t attempt) {
  if (attempt != job.attempt || job.phase != JobPhase::kRunning || job.terminating) return;
  acted_ = true;
  if (job.def->fails) {
    Log("fail", fmt::format("{}: every task exited with failure", job.name()));
    job.teardown_code = "Error";
    job.teardown_message =
        fmt::format("every task exited with failure after {}", FormatDuration(job.def->duration));
    for (size_t t = 0; t < job.held.size(); ++t) {
      if (job.held[t]) EndTask(job, t, TaskPhase::kFailed, "Error");
    }
    Resolve(job);
    return;
  }
  // The job's work is done `duration` after its gang started, as a whole: the tasks of an
  // elastic job that were never placed end with it.
  ReleaseAll(job);
  scheduler_->Remove(job.name());
  job.charged = false;
  Log("finish", fmt::format("{}: Succeeded", job.name()));
  End(job, JobPhase::kSucceeded, "", "");
}

void Runner::TimeLimitReached(JobRun& job, int64_t start) {
  if (start != job.starts || job.phase != JobPhase::kRunning) return;
  acted_ = true;
  const std::string message =
      fmt::format("ran past its time limit of {}", FormatDuration(*job.def->spec.time_limit));
  scheduler_->Remove(job.name());
  job.charged = false;
  job.phase = JobPhase::kFailed;
  job.reason = "TimeLimitExceeded";
  job.message = message;
  if (job.terminating) {
    // Already signalled (a drain, an eviction): the grace goes on; no restart follows.
    Log("timeout", fmt::format("{}: {}; its tasks are already terminating", job.name(), message));
    return;
  }
  Log("timeout", fmt::format("{}: {}; signalling {} tasks, grace {}", job.name(), message,
                             job.HeldTasks(), FormatDuration(job.def->spec.termination_grace)));
  Teardown(job, job.def->spec.termination_grace, "", "");
}

void Runner::LoseTasksOn(int32_t index, std::optional<int32_t> device, const std::string& why) {
  for (JobRun& job : state_.jobs) {
    std::vector<size_t> lost;
    for (size_t t = 0; t < job.held.size(); ++t) {
      const std::optional<Placement>& p = job.held[t];
      if (!p || p->node_index != index) continue;
      if (device && std::find(p->gpus.begin(), p->gpus.end(), *device) == p->gpus.end()) continue;
      lost.push_back(t);
    }
    if (lost.empty()) continue;
    std::vector<std::string> names;
    for (size_t t : lost) {
      names.push_back(job.task_names[t]);
      EndTask(job, t, TaskPhase::kFailed, "TaskLost");
    }
    Log("lost",
        fmt::format("{}: {} ({})", job.name(), fmt::format("{}", fmt::join(names, " ")), why));
    if (!job.terminating) {
      job.teardown_code = "TaskLost";
      job.teardown_message = fmt::format("task {} lost: {}", names.front(), why);
    }
    Resolve(job);
  }
}

void Runner::EvictTasksOn(int32_t index, const Taint* taint, const std::string& why) {
  for (JobRun& job : state_.jobs) {
    if (job.terminating) continue;
    bool hit = false;
    for (size_t t = 0; t < job.held.size() && !hit; ++t) {
      if (!job.held[t] || job.held[t]->node_index != index) continue;
      hit = taint == nullptr ||
            std::none_of(job.tasks[t].tolerations.begin(), job.tasks[t].tolerations.end(),
                         [&](const Toleration& tol) { return tol.Tolerates(*taint); });
    }
    if (!hit) continue;
    Log("evict", fmt::format("{}: {}; signalling {} tasks, grace {}", job.name(), why,
                             job.HeldTasks(), FormatDuration(job.def->spec.termination_grace)));
    job.eviction = taint == nullptr ? control::Eviction::kDrain : control::Eviction::kTaint;
    Teardown(job, job.def->spec.termination_grace, "Evicted", why);
  }
}

void Runner::EndTask(JobRun& job, size_t task, TaskPhase phase, std::string reason) {
  Release(job, task);
  job.ended[task] = {.phase = phase, .reason = std::move(reason)};
}

void Runner::Resolve(JobRun& job) {
  std::vector<control::TaskState> tasks;
  tasks.reserve(job.held.size());
  for (size_t t = 0; t < job.held.size(); ++t) {
    tasks.push_back({.active = job.held[t].has_value(),
                     .phase = job.ended[t].phase,
                     .reason = job.ended[t].reason});
  }
  const control::AttemptState state = control::Assess(tasks, Stopping(job));
  switch (state.step) {
    case control::AttemptStep::kRunning:
      return;
    case control::AttemptStep::kTearDown:
      // A failed task takes its gang down at once; a teardown under way lets the others go with
      // it (they were going anyway).
      if (job.terminating) {
        StopTasks(job);
      } else {
        Teardown(job, Duration::zero(), job.teardown_code, job.teardown_message);
      }
      return;
    case control::AttemptStep::kOver:
      EndAttempt(job, state);
      return;
  }
}

void Runner::Teardown(JobRun& job, Duration grace, std::string code, std::string message) {
  job.terminating = true;
  job.teardown_code = std::move(code);
  job.teardown_message = std::move(message);
  ++job.attempt;
  if (!job.phase || !IsTerminal(*job.phase)) scheduler_->Hold(job.name()).IgnoreError();
  if (grace <= Duration::zero()) {
    StopTasks(job);
    return;
  }
  const int64_t attempt = job.attempt;
  queue_.Push(Now() + grace, EventClass::kTaskCompletion, [this, &job, attempt] {
    if (job.attempt != attempt || !job.terminating) return;
    acted_ = true;
    StopTasks(job);
  });
}

void Runner::StopTasks(JobRun& job) {
  const int32_t held = job.HeldTasks();
  for (size_t t = 0; t < job.held.size(); ++t) {
    if (job.held[t]) EndTask(job, t, TaskPhase::kCancelled, "");
  }
  ++job.attempt;
  if (held > 0) Log("release", fmt::format("{}: {} tasks released", job.name(), held));
  Resolve(job);
}

void Runner::EndAttempt(JobRun& job, const control::AttemptState& state) {
  // An attempt that ends without a teardown (its tasks all failed at once) is held first, as
  // Teardown holds the others.
  if (!job.terminating && !Stopping(job)) scheduler_->Hold(job.name()).IgnoreError();
  job.terminating = false;
  ++job.attempt;
  const control::Eviction eviction = std::exchange(job.eviction, control::Eviction::kNone);
  // A cancel or a time limit ended the job at its own instant; the grace only let it go.
  const bool decided = job.phase && IsTerminal(*job.phase);
  const RestartPolicy& policy = job.def->spec.restart_policy;
  const control::AttemptOutcome outcome = control::AfterAttempt(
      policy, job.restarts,
      {.cancel_requested = job.phase == JobPhase::kCancelled,
       .eviction = eviction,
       .failure = job.phase == JobPhase::kFailed ? std::string_view(job.reason) : state.failure},
      scenario_.config.requeue_backoff);
  if (outcome.verdict == control::Verdict::kRequeue) {
    Requeue(job, outcome, eviction);
    return;
  }
  if (decided) {
    job.end = Now();
    return;
  }
  const JobPhase phase = outcome.verdict == control::Verdict::kCancelled ? JobPhase::kCancelled
                         : outcome.verdict == control::Verdict::kFailed  ? JobPhase::kFailed
                                                                         : JobPhase::kSucceeded;
  scheduler_->Remove(job.name());
  job.charged = false;
  Log("finish", fmt::format("{}: {}: {}: {}", job.name(), PhaseName(phase), job.teardown_code,
                            job.teardown_message));
  End(job, phase, job.teardown_code, job.teardown_message);
}

void Runner::Requeue(JobRun& job, const control::AttemptOutcome& outcome,
                     control::Eviction eviction) {
  const std::string cause =
      eviction == control::Eviction::kNone
          ? fmt::format("restart {} of {} after {}", outcome.restarts,
                        job.def->spec.restart_policy.max_restarts, job.teardown_code)
      : eviction == control::Eviction::kPreemptRequeue ? std::string("after preemption")
                                                       : std::string("after eviction");
  job.restarts = outcome.restarts;
  std::fill(job.ended.begin(), job.ended.end(), TaskResult{});
  scheduler_->Requeue(job.name(), Now() + outcome.backoff).IgnoreError();
  job.charged = false;
  if (outcome.backoff > Duration::zero()) {
    queue_.Push(Now() + outcome.backoff, EventClass::kObserve, [this] { acted_ = true; });
  }
  job.phase = JobPhase::kPending;
  job.reason.clear();
  job.message.clear();
  Log("requeue", fmt::format("{}: {}: {}", job.name(), cause, job.teardown_message));
}

void Runner::Release(JobRun& job, size_t task) {
  if (!job.held[task]) return;
  state_.cluster.Forget(job.tasks[task], *job.held[task]);
  job.held[task].reset();
}

void Runner::ReleaseAll(JobRun& job) {
  for (size_t t = 0; t < job.held.size(); ++t) Release(job, t);
}

void Runner::End(JobRun& job, JobPhase phase, std::string reason, std::string message) {
  job.phase = phase;
  job.reason = std::move(reason);
  job.message = std::move(message);
  job.end = Now();
}

}  // namespace

int RunReport::Failures() const {
  return static_cast<int>(
      std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.passed; }));
}

absl::StatusOr<RunReport> RunScenario(const Scenario& scenario, const RunOptions& options,
                                      std::ostream& timeline) {
  Runner runner(scenario, options.seed.value_or(scenario.config.seed), timeline);
  if (absl::Status s = runner.Setup(); !s.ok()) return s;
  return runner.Run();
}

std::string FormatFailure(const Scenario& scenario, const ExpectationResult& result) {
  const Expectation& e = *result.expectation;
  return fmt::format("{}:{}: expect[{}] {}: failed at {}: {}", scenario.file, e.line, e.index,
                     e.text, FormatTime(result.at), result.seen);
}

}  // namespace tessera::sim

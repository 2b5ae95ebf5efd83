// SimState: what a scenario run knows at one instant — the cluster and every job's life so far.
//
// The runner (scenario_runner.cc) mutates it as events, completions, submissions and scheduling
// decisions happen; the expectation checker (expectation_checker.h) only reads it. A job holds
// a task's placement from the moment it is bound until the task ends, is lost, or the
// termination grace of its eviction ends; `HeldTasks()` is what `running_tasks` counts.
// Not thread-safe: one run, one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "control/restart_rules.h"
#include "core/job.h"
#include "core/job_phase.h"
#include "core/placement.h"
#include "core/resources.h"
#include "sched/cluster_state.h"
#include "sim/scenario/scenario.h"
#include "tessera/common/clock.h"

namespace tessera::sim {

// The job's phase as a check names it: "Pending", "Running", … and "NotSubmitted" before the
// job's `at` (phase is nullopt then).
std::string_view PhaseName(const std::optional<JobPhase>& phase);

// How a task of the current attempt ended: phase kPending while it has not.
struct TaskResult {
  TaskPhase phase = TaskPhase::kPending;
  std::string reason;  // why it failed: "Error", "TaskLost"; empty otherwise
};

struct JobRun {
  const ScenarioJob* def = nullptr;
  std::vector<TaskRequest> tasks;              // task-group order, as the Scheduler indexes them
  std::vector<std::string> task_names;         // "worker-0"
  // Placements holding resources now: what `running_tasks` counts and the placement checks
  // (`nodes_in`, `node_model`, `cluster`, `pool`) look at.
  std::vector<std::optional<Placement>> held;
  // The latest placement of each task, ever: the clusters a job ran on, for the run's report.
  std::vector<std::optional<Placement>> last;
  // How each task of the current attempt ended; all kPending again at each requeue.
  std::vector<TaskResult> ended;
  std::optional<JobPhase> phase;               // nullopt until submitted
  std::string reason;                          // a pending reason code, or why the job failed
  std::string message;                         // its detail
  bool terminating = false;   // signalled; tasks keep their resources until the grace ends
  bool charged = false;       // its quota charge is admitted in its queue (Admitted or later)
  // Evicted by preemption or reclaim at this instant, or still in the termination grace of
  // that eviction: its phase reads "Preempted".
  bool preempted = false;
  // What tore the job down, when it did not fail: a preemption, a drain, a NoExecute taint.
  control::Eviction eviction = control::Eviction::kNone;
  std::string teardown_code;  // why the current teardown happened ("TaskLost", a preemption's)
  std::string teardown_message;
  bool cancel_before_submit = false;
  int64_t attempt = 0;  // bumped at each teardown; stale timers carry an older one
  int64_t starts = 0;   // gang starts so far; a time limit counts from the latest
  int32_t restarts = 0;
  int32_t preemptions = 0;
  std::optional<TimePoint> first_start;
  std::optional<TimePoint> end;

  const std::string& name() const { return def->spec.name; }
  // The phase as checks name it: "Preempted" while `preempted`, else PhaseName(phase).
  std::string_view Phase() const { return preempted ? "Preempted" : PhaseName(phase); }
  int32_t HeldTasks() const;
  // Resources held now: cpu, memory, milli-GPU and GPU memory summed over held tasks.
  Resources HeldResources() const;
  // The admitted charge: every task's request while `charged`, nothing otherwise.
  Resources AdmittedResources() const;
};

struct SimState {
  const Scenario* scenario = nullptr;
  ClusterState cluster;
  std::vector<JobRun> jobs;  // scenario order
  std::map<std::string, int32_t, std::less<>> job_index;
  // queue -> the leaf queues of its subtree (itself for a leaf)
  std::map<std::string, std::set<std::string>, std::less<>> queue_leaves;

  const JobRun& job(std::string_view name) const { return jobs[job_index.find(name)->second]; }
  JobRun& job(std::string_view name) { return jobs[job_index.find(name)->second]; }
};

}  // namespace tessera::sim

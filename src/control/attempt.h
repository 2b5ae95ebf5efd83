// Attempt: where one attempt of a job stands as its tasks end, written once for the server's
// job manager and the simulator's scenario runner.
//
// An attempt is one placement of the job's tasks, until every one of them is gone. The wiring
// keeps the tasks (a stored record, a simulated run) and, each time one ends or the job is told
// to stop, asks Assess what follows:
//   * kRunning: nothing to do; the tasks run, or wait to be placed or to start.
//   * kTearDown: the attempt is stopping and some of its tasks are still active. It stops when
//     the job is being stopped (a cancel, a preemption, a drain, a time limit that passed) or
//     when a task failed: the wiring holds the job (no new placements) and stops its active
//     tasks (a signal, then a kill once the grace ends), then asks again as they end.
//   * kOver: no task is active, and the attempt was stopping or every task succeeded: the
//     wiring ends the attempt with control::AfterAttempt (restart_rules.h), whose AttemptEnd
//     takes `failure` from here.
// The attempt's failure is named by its first failed task in task order: that task's reason, or
// "Error" when it gave none (a non-zero exit). A task cancelled on its cluster (scancel, a
// deleted pod) while nothing was stopping the job counts as a failed task: the job follows its
// restart policy, as for a crash.
//
// Pure functions of their arguments: no clock, no I/O, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/job_phase.h"

namespace tessera::control {

// One task of the attempt as its wiring knows it.
struct TaskState {
  // Placed in this attempt and not ended: it holds resources, runs, or is about to start.
  bool active = false;
  // kSucceeded, kFailed or kCancelled once it ended; kPending or kRunning before that (a task
  // never placed stays kPending).
  TaskPhase phase = TaskPhase::kPending;
  // Why it ended when it failed ("Lost", "TimeLimitExceeded", ...); may be empty. Viewed only
  // for the call to Assess, and by AttemptState::failure after it.
  std::string_view reason;
};

enum class AttemptStep { kRunning, kTearDown, kOver };

struct AttemptState {
  AttemptStep step = AttemptStep::kRunning;
  // The first failed task (an index into Assess's `tasks`), when one failed.
  std::optional<int32_t> failed;
  // That task's reason, "Error" when it gave none; empty when no task failed. A view into the
  // `reason` Assess was given.
  std::string_view failure;
};

// Where an attempt stands. `stopping`: the job is being stopped whatever its tasks do — a cancel
// was requested, an eviction (preemption, drain, NoExecute taint) or a time limit tears it down.
AttemptState Assess(std::span<const TaskState> tasks, bool stopping);

}  // namespace tessera::control

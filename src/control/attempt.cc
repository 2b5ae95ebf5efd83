#include "control/attempt.h"

namespace tessera::control {
namespace {

bool Ended(const TaskState& task) {
  return !task.active && (task.phase == TaskPhase::kSucceeded || task.phase == TaskPhase::kFailed ||
                          task.phase == TaskPhase::kCancelled);
}

// The first task that ended with `phase`.
std::optional<int32_t> FirstEnded(std::span<const TaskState> tasks, TaskPhase phase) {
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (Ended(tasks[i]) && tasks[i].phase == phase) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

}  // namespace

AttemptState Assess(std::span<const TaskState> tasks, bool stopping) {
  AttemptState state;
  state.failed = FirstEnded(tasks, TaskPhase::kFailed);
  // Cancelled on its cluster with nothing stopping the job: a failure like any other.
  if (!state.failed && !stopping) state.failed = FirstEnded(tasks, TaskPhase::kCancelled);
  if (state.failed) {
    const std::string_view reason = tasks[*state.failed].reason;
    state.failure = reason.empty() ? std::string_view("Error") : reason;
  }
  bool active = false;
  bool all_succeeded = true;
  for (const TaskState& task : tasks) {
    active = active || task.active;
    all_succeeded = all_succeeded && Ended(task) && task.phase == TaskPhase::kSucceeded;
  }
  const bool tearing_down = stopping || state.failed.has_value();
  if (tearing_down && active) {
    state.step = AttemptStep::kTearDown;
  } else if (tearing_down || all_succeeded) {
    state.step = AttemptStep::kOver;
  }
  return state;
}

}  // namespace tessera::control

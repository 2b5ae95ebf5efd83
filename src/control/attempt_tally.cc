#include "control/attempt_tally.h"

namespace tessera::control {
namespace {

bool Ended(bool active, TaskPhase phase) {
  return !active && (phase == TaskPhase::kSucceeded || phase == TaskPhase::kFailed ||
                     phase == TaskPhase::kCancelled);
}

}  // namespace

AttemptTally::AttemptTally(int32_t tasks) : tasks_(static_cast<size_t>(tasks)) {}

void AttemptTally::Count(int32_t index, const Counted& task, int delta) {
  if (task.active) active_ += delta;
  if (!Ended(task.active, task.phase)) return;
  if (task.phase == TaskPhase::kSucceeded) {
    succeeded_ += delta;
    return;
  }
  std::set<int32_t>& ended = task.phase == TaskPhase::kFailed ? failed_ : cancelled_;
  if (delta > 0) {
    ended.insert(index);
  } else {
    ended.erase(index);
  }
}

void AttemptTally::Set(int32_t index, const TaskState& task) {
  Counted& counted = tasks_[static_cast<size_t>(index)];
  Count(index, counted, -1);
  counted = {.active = task.active, .phase = task.phase};
  Count(index, counted, +1);
}

AttemptState AttemptTally::Assess(bool stopping) const {
  AttemptState state;
  if (!failed_.empty()) {
    state.failed = *failed_.begin();
  } else if (!stopping && !cancelled_.empty()) {
    // Cancelled on its cluster with nothing stopping the job: a failure like any other.
    state.failed = *cancelled_.begin();
  }
  const bool tearing_down = stopping || state.failed.has_value();
  if (tearing_down && active_ > 0) {
    state.step = AttemptStep::kTearDown;
  } else if (tearing_down || succeeded_ == size()) {
    state.step = AttemptStep::kOver;
  }
  return state;
}

std::string_view FailureOf(std::string_view reason) {
  return reason.empty() ? std::string_view("Error") : reason;
}

}  // namespace tessera::control

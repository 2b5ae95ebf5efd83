// AttemptTally: where an attempt stands (control::Assess, attempt.h), kept up to date as its
// tasks change, so that a job of thousands of tasks is assessed at each task's end without
// reading every task. The wiring Sets each task whose state changed; Assess then answers what
// control::Assess would for the tasks as last Set.
//
// Costs: Set O(log n) for a task that ends failed or cancelled (kept ordered, so that the first
// one in task order names the failure), O(1) otherwise; Assess O(1). Value type; not
// thread-safe.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "control/attempt.h"

namespace tessera::control {

class AttemptTally {
 public:
  // `tasks` tasks (>= 0), each as TaskState's defaults make it: not active, pending.
  explicit AttemptTally(int32_t tasks = 0);

  // Task `index` is now `task`; its reason is not kept. REQUIRES: 0 <= index < size().
  void Set(int32_t index, const TaskState& task);

  // control::Assess(tasks, stopping) for the tasks as last Set, except that `failure` is empty:
  // the wiring names it from the failed task's reason (FailureOf).
  AttemptState Assess(bool stopping) const;

  int32_t size() const { return static_cast<int32_t>(tasks_.size()); }

 private:
  struct Counted {
    bool active = false;
    TaskPhase phase = TaskPhase::kPending;
  };
  void Count(int32_t index, const Counted& task, int delta);

  std::vector<Counted> tasks_;
  int32_t active_ = 0;
  int32_t succeeded_ = 0;        // ended (not active) with kSucceeded
  std::set<int32_t> failed_;     // ended with kFailed
  std::set<int32_t> cancelled_;  // ended with kCancelled
};

// How an attempt's failure is named from its failed task's reason: the reason, or "Error" when
// the task gave none (a non-zero exit).
std::string_view FailureOf(std::string_view reason);

}  // namespace tessera::control

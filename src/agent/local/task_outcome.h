// TaskOutcome: how one task of the local executor ended.
//
//   kSucceeded          exited with status 0
//   kFailed             exited with a non-zero status (exit_code)
//   kKilled             ended by a signal nobody in Tessera sent (signal: OOM killer, a crash)
//   kCancelled          ended after Cancel(); exit_code or signal tell how it went down
//   kTimeLimitExceeded  ended after its time limit sent it SIGTERM (then SIGKILL)
//   kStartFailed        never ran: command not found or not executable, bad working directory,
//                       unwritable log files; `message` says which
//   kLost               the executor cannot say how it ended: its process was gone when a
//                       restarted executor looked for it, or it ended while the executor was not
//                       its parent (adopted tasks), so its exit status was reaped elsewhere
// `message` is a sentence for people ("exited with status 3", "killed by signal 9 (SIGKILL)").
// A value type.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tessera/common/clock.h"

namespace tessera::agent {

enum class TaskEnd {
  kSucceeded,
  kFailed,
  kKilled,
  kCancelled,
  kTimeLimitExceeded,
  kStartFailed,
  kLost,
};

std::string_view TaskEndName(TaskEnd end);

struct TaskOutcome {
  std::string task_id;
  TaskEnd end = TaskEnd::kLost;
  std::optional<int> exit_code;  // set when the process exited
  std::optional<int> signal;     // set when a signal ended it
  std::string message;
  TimePoint finished_at{};  // by the executor's clock

  bool succeeded() const { return end == TaskEnd::kSucceeded; }
};

}  // namespace tessera::agent

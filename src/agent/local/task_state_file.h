// TaskStateFile: the small file that lets a restarted executor find a task again.
//
// One JSON file per task, "<task_id>.state.json" in the executor's log directory, written when
// the task starts and rewritten when it ends:
//   {"task_id", "pid", "start_ticks", "boot_id", "started_at_ms", "deadline_ms"?, "grace_ms",
//    "stdout", "stderr", "outcome"?: {"end", "exit_code"?, "signal"?, "message",
//    "finished_at_ms"}}
// (pid, start_ticks, boot_id) identify the process (see proc_stat.h); times are milliseconds of
// the executor's clock. Writes go to a temporary file that is synced and renamed over the old
// one, so a reader sees the old or the new record, never a torn one.
//
// Thread-safe as long as two callers do not write the same task's file at once (the executor
// serialises per task). Errors: NotFound (no file), DataLoss (a file that does not parse, with
// the field), or the I/O error with the path.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/local/task_outcome.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

struct TaskStateRecord {
  std::string task_id;
  pid_t pid = 0;
  uint64_t start_ticks = 0;
  std::string boot_id;
  TimePoint started_at{};
  std::optional<TimePoint> deadline;  // when the time limit sends SIGTERM
  Duration grace{0};                  // between that SIGTERM and SIGKILL
  std::string stdout_path;
  std::string stderr_path;
  std::optional<TaskOutcome> outcome;  // set once the task has ended
};

inline constexpr std::string_view kStateFileSuffix = ".state.json";

std::string StateFilePath(std::string_view dir, std::string_view task_id);

std::string TaskStateToJson(const TaskStateRecord& record);
absl::StatusOr<TaskStateRecord> TaskStateFromJson(std::string_view text);

absl::Status WriteTaskState(const std::string& path, const TaskStateRecord& record);
absl::StatusOr<TaskStateRecord> ReadTaskState(const std::string& path);

// Maps TaskEndName() back; nullopt for an unknown name.
std::optional<TaskEnd> ParseTaskEnd(std::string_view name);

}  // namespace tessera::agent

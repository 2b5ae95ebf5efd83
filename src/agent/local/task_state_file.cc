#include "agent/local/task_state_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

using nlohmann::json;

constexpr TaskEnd kAllEnds[] = {
    TaskEnd::kSucceeded,         TaskEnd::kFailed,      TaskEnd::kKilled, TaskEnd::kCancelled,
    TaskEnd::kTimeLimitExceeded, TaskEnd::kStartFailed, TaskEnd::kLost};

int64_t Millis(TimePoint t) { return t.time_since_epoch().count(); }
TimePoint FromMillis(int64_t ms) { return TimePoint(Duration(ms)); }

json OutcomeToJson(const TaskOutcome& outcome) {
  json out = {{"end", TaskEndName(outcome.end)},
              {"message", outcome.message},
              {"finished_at_ms", Millis(outcome.finished_at)}};
  if (outcome.exit_code.has_value()) out["exit_code"] = *outcome.exit_code;
  if (outcome.signal.has_value()) out["signal"] = *outcome.signal;
  return out;
}

TaskOutcome OutcomeFromJson(const json& in, const std::string& task_id) {
  TaskOutcome outcome;
  outcome.task_id = task_id;
  const std::string end = in.at("end").get<std::string>();
  std::optional<TaskEnd> parsed = ParseTaskEnd(end);
  if (!parsed.has_value())
    throw std::invalid_argument("outcome.end: unknown value \"" + end + "\"");
  outcome.end = *parsed;
  outcome.message = in.at("message").get<std::string>();
  outcome.finished_at = FromMillis(in.at("finished_at_ms").get<int64_t>());
  if (in.contains("exit_code")) outcome.exit_code = in.at("exit_code").get<int>();
  if (in.contains("signal")) outcome.signal = in.at("signal").get<int>();
  return outcome;
}

absl::Status ErrnoError(std::string_view what, const std::string& path) {
  return absl::UnavailableError(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

std::optional<TaskEnd> ParseTaskEnd(std::string_view name) {
  for (TaskEnd end : kAllEnds) {
    if (TaskEndName(end) == name) return end;
  }
  return std::nullopt;
}

std::string StateFilePath(std::string_view dir, std::string_view task_id) {
  return fmt::format("{}/{}{}", dir, task_id, kStateFileSuffix);
}

std::string TaskStateToJson(const TaskStateRecord& record) {
  json out = {{"task_id", record.task_id},
              {"pid", record.pid},
              {"start_ticks", record.start_ticks},
              {"boot_id", record.boot_id},
              {"started_at_ms", Millis(record.started_at)},
              {"grace_ms", record.grace.count()},
              {"stdout", record.stdout_path},
              {"stderr", record.stderr_path}};
  if (record.deadline.has_value()) out["deadline_ms"] = Millis(*record.deadline);
  if (record.outcome.has_value()) out["outcome"] = OutcomeToJson(*record.outcome);
  return out.dump(2) + "\n";
}

absl::StatusOr<TaskStateRecord> TaskStateFromJson(std::string_view text) {
  try {
    const json in = json::parse(text);
    TaskStateRecord record;
    record.task_id = in.at("task_id").get<std::string>();
    record.pid = in.at("pid").get<pid_t>();
    record.start_ticks = in.at("start_ticks").get<uint64_t>();
    record.boot_id = in.at("boot_id").get<std::string>();
    record.started_at = FromMillis(in.at("started_at_ms").get<int64_t>());
    record.grace = Duration(in.at("grace_ms").get<int64_t>());
    record.stdout_path = in.at("stdout").get<std::string>();
    record.stderr_path = in.at("stderr").get<std::string>();
    if (in.contains("deadline_ms"))
      record.deadline = FromMillis(in.at("deadline_ms").get<int64_t>());
    if (in.contains("outcome")) record.outcome = OutcomeFromJson(in.at("outcome"), record.task_id);
    return record;
  } catch (const std::exception& e) {
    return absl::DataLossError(fmt::format("task state: {}", e.what()));
  }
}

absl::Status WriteTaskState(const std::string& path, const TaskStateRecord& record) {
  const std::string tmp = path + ".tmp";
  const std::string text = TaskStateToJson(record);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return ErrnoError("cannot create", tmp);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = ErrnoError("cannot write", tmp);
      ::close(fd);
      return status;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status status = ErrnoError("cannot sync", tmp);
    ::close(fd);
    return status;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return ErrnoError("cannot rename onto", path);
  return absl::OkStatus();
}

absl::StatusOr<TaskStateRecord> ReadTaskState(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(fmt::format("{}: no such file", path));
    return ErrnoError("cannot read", path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  absl::StatusOr<TaskStateRecord> record = TaskStateFromJson(text.str());
  if (!record.ok())
    return absl::DataLossError(fmt::format("{}: {}", path, std::string(record.status().message())));
  return record;
}

}  // namespace tessera::agent

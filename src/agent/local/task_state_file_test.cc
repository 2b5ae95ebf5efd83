#include "agent/local/task_state_file.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  std::string dir =
      (std::filesystem::path(::testing::TempDir()) / "state_file_XXXXXX").lexically_normal();
  return ::mkdtemp(dir.data());
}

TaskStateRecord Running() {
  return {.task_id = "job-1.w-0",
          .pid = 4242,
          .start_ticks = 123456789,
          .boot_id = "9305a3e8-3f4f-423b-a71d-3cfb95c48254",
          .started_at = TimePoint(Duration(1'700'000'000'000)),
          .deadline = TimePoint(Duration(1'700'000'090'000)),
          .grace = Duration(30'000),
          .stdout_path = "/logs/job-1.w-0.stdout.log",
          .stderr_path = "/logs/job-1.w-0.stderr.log"};
}

void ExpectSame(const TaskStateRecord& a, const TaskStateRecord& b) {
  EXPECT_EQ(a.task_id, b.task_id);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.start_ticks, b.start_ticks);
  EXPECT_EQ(a.boot_id, b.boot_id);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.deadline, b.deadline);
  EXPECT_EQ(a.grace, b.grace);
  EXPECT_EQ(a.stdout_path, b.stdout_path);
  EXPECT_EQ(a.stderr_path, b.stderr_path);
  ASSERT_EQ(a.outcome.has_value(), b.outcome.has_value());
  if (!a.outcome.has_value()) return;
  EXPECT_EQ(a.outcome->task_id, b.outcome->task_id);
  EXPECT_EQ(a.outcome->end, b.outcome->end);
  EXPECT_EQ(a.outcome->exit_code, b.outcome->exit_code);
  EXPECT_EQ(a.outcome->signal, b.outcome->signal);
  EXPECT_EQ(a.outcome->message, b.outcome->message);
  EXPECT_EQ(a.outcome->finished_at, b.outcome->finished_at);
}

TEST(TaskStateFileTest, RoundTripsRunningAndEndedRecords) {
  const std::string dir = TempDir();
  const std::string path = StateFilePath(dir, "job-1.w-0");
  EXPECT_EQ(path, dir + "/job-1.w-0.state.json");

  TaskStateRecord record = Running();
  ASSERT_TRUE(WriteTaskState(path, record).ok());
  absl::StatusOr<TaskStateRecord> read = ReadTaskState(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSame(*read, record);

  record.deadline.reset();
  record.outcome = TaskOutcome{.task_id = "job-1.w-0",
                               .end = TaskEnd::kKilled,
                               .signal = 9,
                               .message = "killed by signal 9 (SIGKILL)",
                               .finished_at = TimePoint(Duration(1'700'000'005'000))};
  ASSERT_TRUE(WriteTaskState(path, record).ok());
  read = ReadTaskState(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSame(*read, record);
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
}

TEST(TaskStateFileTest, EveryEndRoundTripsByName) {
  for (TaskEnd end : {TaskEnd::kSucceeded, TaskEnd::kFailed, TaskEnd::kKilled, TaskEnd::kCancelled,
                      TaskEnd::kTimeLimitExceeded, TaskEnd::kStartFailed, TaskEnd::kLost}) {
    EXPECT_EQ(ParseTaskEnd(TaskEndName(end)), end);
  }
  EXPECT_EQ(ParseTaskEnd("Exploded"), std::nullopt);
}

TEST(TaskStateFileTest, BadFilesAreDataLossNamingTheProblem) {
  EXPECT_EQ(TaskStateFromJson("{").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(TaskStateFromJson(R"({"task_id":"t"})").status().message()),
              HasSubstr("pid"));
  std::string text = TaskStateToJson(Running());
  text.replace(text.find("\"grace_ms\""), 10, "\"grace_xx\"");
  EXPECT_EQ(TaskStateFromJson(text).status().code(), absl::StatusCode::kDataLoss);
  TaskStateRecord record = Running();
  record.outcome = TaskOutcome{.end = TaskEnd::kLost};
  text = TaskStateToJson(record);
  text.replace(text.find("\"Lost\""), 6, "\"Gone\"");
  EXPECT_THAT(std::string(TaskStateFromJson(text).status().message()), HasSubstr("Gone"));
}

TEST(TaskStateFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadTaskState(TempDir() + "/none.state.json").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera::agent

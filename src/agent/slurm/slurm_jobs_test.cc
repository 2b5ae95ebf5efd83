#include "agent/slurm/slurm_jobs.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr TimePoint kNow = TimePoint(Duration(5'000'000));

json Job(std::string state, int64_t exit_code = 0, std::string reason = "None") {
  return {{"job_id", 12},
          {"name", "j1-w-0-a1"},
          {"comment", "tessera:j1-w-0-a1"},
          {"job_state", std::move(state)},
          {"state_reason", std::move(reason)},
          {"nodes", "node3"},
          {"partition", "gpu"},
          {"exit_code", exit_code},
          {"start_time", 1000},
          {"end_time", 1010}};
}

SlurmJob ParseOne(const json& job) {
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(json{{"jobs", json::array({job})}}.dump());
  EXPECT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  return list->jobs.at(0);
}

TEST(SlurmJobsTest, ParsesAJob) {
  const SlurmJob job = ParseOne(Job("running"));
  EXPECT_EQ(job.id, 12);
  EXPECT_EQ(job.name, "j1-w-0-a1");
  EXPECT_EQ(job.state, "RUNNING");
  EXPECT_EQ(job.nodes, "node3");
  EXPECT_EQ(job.partition, "gpu");
  EXPECT_EQ(job.start_time, TimePoint(Duration(1'000'000)));
  EXPECT_EQ(job.end_time, TimePoint(Duration(1'010'000)));
  EXPECT_EQ(LaunchIdOf(job), "j1-w-0-a1");
}

TEST(SlurmJobsTest, OnlyTheCommentMakesATesseraJob) {
  json job = Job("RUNNING");
  job["comment"] = "";
  EXPECT_EQ(LaunchIdOf(ParseOne(job)), "");
  job["comment"] = nullptr;
  EXPECT_EQ(LaunchIdOf(ParseOne(job)), "");
}

TEST(SlurmJobsTest, StateListOfLaterVersions) {
  json job = Job("");
  job["job_state"] = {"COMPLETED"};
  EXPECT_EQ(ParseOne(job).state, "COMPLETED");
}

TEST(SlurmJobsTest, StateFlagsAreReadAsTheWordOfV38) {
  json job = Job("");
  job["job_state"] = {"PENDING", "REQUEUED"};
  EXPECT_EQ(ParseOne(job).state, "REQUEUED");
  job["job_state"] = {"completed", "COMPLETING"};
  EXPECT_EQ(ParseOne(job).state, "COMPLETING");
  job["job_state"] = {"FAILED", "LAUNCH_FAILED"};
  EXPECT_EQ(ParseOne(job).state, "FAILED");
}

json Flagged(int64_t number) { return {{"set", true}, {"infinite", false}, {"number", number}}; }

TEST(SlurmJobsTest, FlaggedNumbersOfLaterVersions) {
  json job = Job("COMPLETED");
  job["start_time"] = Flagged(1000);
  job["end_time"] = {{"set", false}, {"infinite", false}, {"number", 0}};
  job["exit_code"] = Flagged(768);  // v0.0.39: the raw wait status, flagged
  SlurmJob parsed = ParseOne(job);
  EXPECT_EQ(parsed.start_time, TimePoint(Duration(1'000'000)));
  EXPECT_EQ(parsed.end_time, std::nullopt);
  EXPECT_EQ(parsed.exit_code, 768);
  job["end_time"] = {{"set", true}, {"infinite", true}, {"number", 0}};
  EXPECT_EQ(ParseOne(job).end_time, std::nullopt);
}

TEST(SlurmJobsTest, VerboseExitCodesOfLaterVersions) {
  json job = Job("FAILED");
  job["exit_code"] = {
      {"status", {"ERROR"}},
      {"return_code", Flagged(7)},
      {"signal", {{"id", {{"set", false}, {"infinite", false}, {"number", 0}}}, {"name", ""}}}};
  EXPECT_EQ(ParseOne(job).exit_code, 7 << 8);
  job["exit_code"] = {{"status", {"SIGNALED"}},
                      {"return_code", Flagged(0)},
                      {"signal", {{"id", Flagged(9)}, {"name", "KILL"}}}};
  EXPECT_EQ(ParseOne(job).exit_code, 9);
  std::optional<TaskEnd> end = TaskEndOf(ParseOne(job), "l1", false, kNow);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "Killed");
  EXPECT_EQ(end->exit_code, 128 + 9);
  job["exit_code"] = {{"status", {"PENDING"}}};
  EXPECT_EQ(ParseOne(job).exit_code, std::nullopt);
}

TEST(SlurmJobsTest, MalformedFieldsOfLaterVersionsAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"start_time": {"set": true, "number": "x"}})",
       R"(slurm jobs[0]: start_time.number: must be an integer, got "x")"},
      {R"({"start_time": {"set": "yes", "number": 1}})",
       R"(slurm jobs[0]: start_time.set: must be true or false, got "yes")"},
      {R"({"end_time": {"set": true}})", "slurm jobs[0]: end_time.number: missing"},
      {R"({"exit_code": {"return_code": {"set": true, "number": -1}}})",
       "slurm jobs[0]: exit_code.return_code: must be a non-negative integer, got -1"},
      {R"({"exit_code": {"signal": 9}})", "slurm jobs[0]: exit_code.signal: must be an object"},
      {R"({"exit_code": {"signal": {"id": {"number": true}}}})",
       "slurm jobs[0]: exit_code.signal.id.number: must be an integer, got true"},
      {R"({"job_state": ["RUNNING", 3]})", "slurm jobs[0]: job_state[1]: must be a string, got 3"},
      {R"({"job_state": []})", "slurm jobs[0]: job_state: missing"},
  };
  for (const auto& [change, error] : cases) {
    json job = Job("RUNNING");
    job.update(json::parse(change));
    absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(json{{"jobs", {job}}}.dump());
    ASSERT_TRUE(list.ok()) << list.status();
    EXPECT_THAT(list->jobs, IsEmpty()) << change;
    EXPECT_THAT(list->errors, ElementsAre(error));
  }
}

// slurmrestd from v0.0.39 on answers an incremental read with nothing new as HTTP 200, no jobs
// and a warning, where 22.05 answers 304.
TEST(SlurmJobsTest, AnUnchangedListOfLaterVersions) {
  const std::string unchanged = R"({"jobs": [], "last_backfill": {"set": false},
      "warnings": [{"description": "No job changes since update_time=1796015364",
                    "source": "_op_handler_jobs"}], "errors": []})";
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(unchanged);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->unchanged);
  // The list may be missing from such a reply.
  EXPECT_TRUE(
      ParseSlurmJobs(R"({"warnings": [{"description": "No job changes since update_time=1"}]})")
          ->unchanged);
  // No jobs without that warning is a list that is empty; a warning beside jobs is news.
  EXPECT_FALSE(ParseSlurmJobs(R"({"jobs": [], "warnings": []})")->unchanged);
  json with_job = json::parse(unchanged);
  with_job["jobs"].push_back(Job("RUNNING"));
  EXPECT_FALSE(ParseSlurmJobs(with_job.dump())->unchanged);
}

TEST(SlurmJobsTest, MalformedEntriesAreSkipped) {
  json no_id = Job("RUNNING");
  no_id.erase("job_id");
  json bad_state = Job("RUNNING");
  bad_state["job_state"] = 3;
  json bad_time = Job("RUNNING");
  bad_time["start_time"] = int64_t{1} << 40;
  json negative = Job("RUNNING");
  negative["exit_code"] = -1;
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(json{
      {"jobs", json::array({no_id, bad_state, "x", bad_time, negative,
                            Job("PENDING")})}}.dump());
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->jobs.size(), 1u);
  EXPECT_THAT(list->errors,
              ElementsAre("slurm jobs[0]: job_id: missing",
                          "slurm jobs[1]: job_state: must be a string, got 3",
                          "slurm jobs[2]: must be an object",
                          "slurm jobs[3]: start_time: 1099511627776 is out of range",
                          "slurm jobs[4]: exit_code: must be a non-negative integer, got -1"));
  EXPECT_THAT(ParseSlurmJobs("nope").status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseSlurmJobs("{}").status().message(), HasSubstr("no \"jobs\" list"));
}

TEST(SlurmJobsTest, Phases) {
  EXPECT_EQ(PhaseOf("PENDING"), SlurmJobPhase::kWaiting);
  EXPECT_EQ(PhaseOf("CONFIGURING"), SlurmJobPhase::kWaiting);
  EXPECT_EQ(PhaseOf("REQUEUED"), SlurmJobPhase::kWaiting);
  EXPECT_EQ(PhaseOf("RUNNING"), SlurmJobPhase::kRunning);
  EXPECT_EQ(PhaseOf("COMPLETING"), SlurmJobPhase::kRunning);
  EXPECT_EQ(PhaseOf("SUSPENDED"), SlurmJobPhase::kRunning);
  for (const char* ended : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "BOOT_FAIL",
                            "PREEMPTED", "OUT_OF_MEMORY", "DEADLINE"}) {
    EXPECT_EQ(PhaseOf(ended), SlurmJobPhase::kEnded) << ended;
  }
}

TEST(SlurmJobsTest, Outcomes) {
  struct Case {
    json job;
    bool cancel_requested;
    TaskPhase phase;
    std::string reason;
    std::optional<int32_t> exit_code;
  };
  const std::vector<Case> cases = {
      {Job("COMPLETED"), false, TaskPhase::kSucceeded, "", 0},
      {Job("FAILED", 3 << 8, "NonZeroExitCode"), false, TaskPhase::kFailed, "Error", 3},
      {Job("FAILED", 9), false, TaskPhase::kFailed, "Killed", 137},
      {Job("FAILED", 0, "JobLaunchFailure"), false, TaskPhase::kFailed, "StartFailed",
       std::nullopt},
      {Job("CANCELLED", 15), false, TaskPhase::kCancelled, "", std::nullopt},
      {Job("TIMEOUT", 15), false, TaskPhase::kFailed, "TimeLimitExceeded", std::nullopt},
      {Job("NODE_FAIL"), false, TaskPhase::kFailed, "Lost", std::nullopt},
      {Job("BOOT_FAIL"), false, TaskPhase::kFailed, "Lost", std::nullopt},
      {Job("OUT_OF_MEMORY"), false, TaskPhase::kFailed, "Killed", std::nullopt},
      {Job("FAILED", 7 << 8), true, TaskPhase::kCancelled, "", std::nullopt},
      {Job("COMPLETED"), true, TaskPhase::kCancelled, "", std::nullopt},
  };
  for (const Case& c : cases) {
    const SlurmJob job = ParseOne(c.job);
    std::optional<TaskEnd> end = TaskEndOf(job, "l1", c.cancel_requested, kNow);
    ASSERT_TRUE(end.has_value()) << c.job;
    EXPECT_EQ(end->launch_id, "l1");
    EXPECT_EQ(end->phase, c.phase) << c.job;
    EXPECT_EQ(end->reason, c.reason) << c.job;
    EXPECT_EQ(end->exit_code, c.exit_code) << c.job;
    EXPECT_EQ(end->time, TimePoint(Duration(1'010'000)));
    EXPECT_THAT(end->message, HasSubstr("Slurm job 12"));
  }
  EXPECT_FALSE(TaskEndOf(ParseOne(Job("RUNNING")), "l1", true, kNow).has_value());
  EXPECT_FALSE(TaskEndOf(ParseOne(Job("PENDING")), "l1", false, kNow).has_value());
  json no_end = Job("COMPLETED");
  no_end["end_time"] = 0;
  EXPECT_EQ(TaskEndOf(ParseOne(no_end), "l1", false, kNow)->time, kNow);
}

TEST(SlurmJobsTest, RealSlurmReply) {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  std::ifstream file(std::string(root != nullptr ? root : ".") +
                     "/src/agent/slurm/testdata/jobs-v0.0.38.json");
  std::stringstream text;
  text << file.rdbuf();
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(text.str());
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->jobs.size(), 2u);
  EXPECT_EQ(list->jobs[0].state, "COMPLETED");
  EXPECT_EQ(list->jobs[0].nodes, "node3");
  EXPECT_EQ(list->jobs[1].state, "FAILED");
  EXPECT_EQ(LaunchIdOf(list->jobs[1]), "t4");
  std::optional<TaskEnd> end = TaskEndOf(list->jobs[1], "t4", false, kNow);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "Error");
  EXPECT_EQ(end->exit_code, 7);
}

}  // namespace
}  // namespace tessera::agent

#include "sim/scenario/scenario_runner.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/scenario/expectation_checker.h"
#include "sim/scenario/scenario_command.h"
#include "sim/scenario/scenario_parser.h"

namespace tessera::sim {
namespace {

using ::testing::HasSubstr;

// Two 8-GPU nodes; job `a` takes both for 100s, job `b` (one node) waits for it.
constexpr char kBase[] = R"(
nodes:
  - {name: "n{0..1}", cpu: 16, memory: 64Gi, gpus: {model: A100, count: 8, memory: 80Gi}}
jobs:
  - {name: a, tasks: [{name: w, replicas: 2, gpu: 8}], duration: 100s}
  - {name: b, at: 10s, tasks: [{name: w, gpu: 8}], duration: 50s}
)";

struct Outcome {
  RunReport report;
  std::string timeline;
};

Outcome RunText(const std::string& expectations, std::optional<uint64_t> seed = std::nullopt) {
  absl::StatusOr<Scenario> scenario = ParseScenario(std::string(kBase) + expectations, "t.yaml");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  std::ostringstream timeline;
  absl::StatusOr<RunReport> report = RunScenario(*scenario, RunOptions{seed}, timeline);
  EXPECT_TRUE(report.ok()) << report.status();
  // The report points into the scenario: keep only what outlives it.
  Outcome run{*std::move(report), timeline.str()};
  for (ExpectationResult& r : run.report.results) r.expectation = nullptr;
  return run;
}

TEST(ScenarioRunnerTest, HoldingExpectationsPass) {
  Outcome run = RunText(R"(expect:
  - {at: 0s, job: a, phase: Running, running_tasks: 2}
  - {at: 10s, job: b, phase: Pending, reason: InsufficientResources}
  - {at: 10s, job: b, reason_contains: "insufficient gpu"}
  - {by: 100s, job: b, phase: Running}
  - {end: true, job: b, started_after_end_of: a, start_time: 100s, end_time: {max: 150s}}
  - {end: true, job: a, phase: Succeeded, restarts: 0, preemptions: {max: 0}}
  - {end: true, job: b, started_after: a}
  - {at: 100s, job: b, node_model: A100, cluster: default, pool: default}
  - {end: true, job: a, started_before: b}
  - {at: 0s, job: a, nodes_in: ["n{0..1}"]}
  - {end: true, job: a, nodes_in: [n0]}
  - {always: true, queue: default, allocated: {max: {gpu: 16}}}
  - {always: true, job: a, running_tasks_in: [0, 2]}
  - {invariant: no_overcommit}
  - {invariant: gang_atomic}
  - {invariant: quota_respected}
  - {invariant: pending_has_reason}
)");
  EXPECT_EQ(run.report.Failures(), 0) << run.timeline;
  EXPECT_EQ(run.report.end, TimePoint{} + std::chrono::seconds(150));
  EXPECT_THAT(run.timeline, HasSubstr("100s  start     b: w-0->n"));
}

TEST(ScenarioRunnerTest, EveryCheckCanFail) {
  struct Case {
    std::string expectation;
    std::string seen;
  };
  const Case cases[] = {
      {"{at: 0s, job: a, phase: Pending}", "phase: phase is Running"},
      {"{at: 10s, job: b, reason: Untolerated}", "reason: phase is Pending (InsufficientResources"},
      {"{at: 10s, job: b, reason_contains: cordoned}", "reason_contains: phase is Pending"},
      {"{at: 0s, job: a, running_tasks: 1}", "running_tasks: 2 running tasks"},
      {"{always: true, job: a, running_tasks_in: [0, 1]}", "running_tasks_in: 2 running tasks"},
      {"{at: 0s, job: a, nodes_in: [n0]}", "nodes_in: a task is on node n1"},
      {"{at: 0s, job: a, node_model: H100}", "node_model: a task is on node"},
      {"{end: true, job: a, node_model: A100}", "node_model: no task is placed now"},
      {"{at: 10s, job: b, pool: default}", "pool: no task is placed now (phase is Pending"},
      {"{by: 50s, job: b, phase: Running}", "phase: phase is Pending"},
      {"{end: true, job: a, restarts: {min: 1}}", "restarts: 0 restarts (expected >= 1)"},
      {"{end: true, job: a, preemptions: 1}", "preemptions: 0 preemptions (expected 1)"},
      {"{end: true, job: b, start_time: {max: 99s}}", "start_time: started at 100s"},
      {"{end: true, job: a, end_time: {min: 101s}}", "end_time: ended at 100s"},
      {"{end: true, job: a, started_after: b}", "a started at 0s, b at 100s"},
      {"{end: true, job: b, started_before: a}", "b started at 100s, a at 0s"},
      {"{end: true, job: a, started_after_end_of: b}", "a started at 0s, before b ended at 150s"},
      {"{always: true, queue: default, allocated: {max: {gpu: 15}}}",
       "allocated gpu is 16 (max 15)"},
      {"{end: true, queue: default, allocated: {min: {cpu: 1}}}", "allocated cpu is 0 (min 1)"},
      {"{by: 1000s, job: b, phase: Failed}", "phase: phase is Succeeded"},
  };
  for (const Case& c : cases) {
    Outcome run = RunText("expect:\n  - " + c.expectation + "\n");
    ASSERT_EQ(run.report.Failures(), 1) << c.expectation << "\n" << run.timeline;
    EXPECT_THAT(run.report.results[0].seen, HasSubstr(c.seen)) << c.expectation;
  }
}

TEST(ScenarioRunnerTest, UntilEndsTheRun) {
  Outcome run = RunText(R"(until: 120s
expect:
  - {end: true, job: b, phase: Running, running_tasks: 1}
  - {at: 200s, job: a, phase: Succeeded}
)");
  EXPECT_EQ(run.report.end, TimePoint{} + std::chrono::seconds(120));
  EXPECT_TRUE(run.report.results[0].passed) << run.report.results[0].seen;
  EXPECT_FALSE(run.report.results[1].passed);
  EXPECT_EQ(run.report.results[1].seen, "the run ended at 120s, before 200s");
}

TEST(ScenarioRunnerTest, RunsAreDeterministicForASeed) {
  const std::string expect = "expect:\n  - {end: true, job: b, phase: Succeeded}\n";
  EXPECT_EQ(RunText(expect, 3).timeline, RunText(expect, 3).timeline);
  EXPECT_THAT(RunText(expect, 11).timeline, HasSubstr("seed 11"));
}

TEST(ScenarioRunnerTest, ANodeGoingDownRequeuesTheGang) {
  Outcome run = RunText(R"(events:
  - {at: 50s, node: n1, action: down}
  - {at: 60s, node: n1, action: up}
expect:
  - {at: 50s, job: a, phase: Pending, running_tasks: 0, restarts: 1}
  - {at: 50s, job: b, phase: Running}
  - {end: true, job: a, phase: Succeeded, start_time: 0s, end_time: 200s}
  - {invariant: gang_atomic}
)");
  EXPECT_EQ(run.report.Failures(), 0) << run.timeline;
  EXPECT_THAT(run.timeline, HasSubstr("lost      a: w-"));
  EXPECT_THAT(run.timeline, HasSubstr("requeue   a: restart 1 of 3 after TaskLost"));
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(ScenarioCommandTest, ExitStatusesFollowTheContract) {
  struct Case {
    std::string name;
    std::string text;
    int status;
    std::string err;
  };
  const Case cases[] = {
      {"pass.yaml", std::string(kBase) + "expect: [{end: true, job: b, phase: Succeeded}]\n", 0,
       ""},
      {"fail.yaml", std::string(kBase) + "expect: [{end: true, job: b, phase: Failed}]\n", 1,
       "fail.yaml:7: expect[0] {end: true, job: b, phase: Failed}: failed at 150s: phase: phase "
       "is Succeeded"},
      {"invalid.yaml", std::string(kBase) + "expect: [{end: true, job: c, phase: Failed}]\n", 2,
       "invalid.yaml:7: expect[0].job: job 'c' does not exist"},
      {"badprofile.yaml",
       std::string(kBase) + "config:\n  profile: {queueSort: NoSuchSort, bind: [DefaultBinder]}\n",
       2, "badprofile.yaml:8: config.profile:"},
  };
  for (const Case& c : cases) {
    const std::string path = WriteTemp("tessera-scenario-" + c.name, c.text);
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(RunScenarioCommand(path, std::nullopt, out, err), c.status) << err.str();
    EXPECT_THAT(err.str(), HasSubstr(c.err));
    std::remove(path.c_str());
  }
}

TEST(ScenarioRunnerTest, FormatsTimesWithIntegerMilliseconds) {
  const struct {
    int64_t ms;
    const char* want;
  } cases[] = {
      {0, "0s"},
      {1500, "1.5s"},
      {766'000, "766s"},
      {766'001, "766.001s"},
      {9'223'372'036'854'775'807, "9223372036854775.807s"},
      {-2'250, "-2.25s"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(FormatTime(TimePoint{} + Duration(c.ms)), c.want) << c.ms;
  }
}

TEST(ScenarioRunnerTest, RunsWithoutJobsUnderFgd) {
  absl::StatusOr<Scenario> scenario = ParseScenario(
      "config: {profile: fgd}\nnodes: [{name: n0, gpus: {model: A100, count: 1, memory: 8Gi}}]\n",
      "t.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  std::ostringstream timeline;
  absl::StatusOr<RunReport> report = RunScenario(*scenario, RunOptions{}, timeline);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->truncated_after, 0);
}

}  // namespace
}  // namespace tessera::sim

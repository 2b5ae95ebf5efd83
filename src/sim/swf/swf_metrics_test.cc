#include "sim/swf/swf_metrics.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sim::swf {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TimePoint T(int64_t s) { return TimePoint{} + seconds(s); }

JobTimes Job(int64_t submit, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t processors) {
  JobTimes j{.submit = T(submit), .processors = processors};
  if (start) j.start = T(*start);
  if (end) j.end = T(*end);
  return j;
}

struct Case {
  std::string name;
  std::vector<JobTimes> jobs;
  int64_t total_processors;
  SwfMetrics want;
};

TEST(SwfMetricsTest, HandComputedWorkloads) {
  const std::vector<Case> cases = {
      {"empty", {}, 4, {}},
      {"one job, half the machine",
       {Job(0, 0, 100, 2)},
       4,
       {.jobs = 1,
        .completed = 1,
        .mean_bounded_slowdown = 1,
        .utilisation = 0.5,
        .makespan_s = 100}},
      // Two 5 s jobs back to back on one processor: the second waits 5 s; both slowdowns are
      // bounded by 10 s: max(1, 5/10) = 1 and (5 + 5)/10 = 1.
      {"back to back, short runs bounded",
       {Job(0, 0, 5, 1), Job(0, 5, 10, 1)},
       1,
       {.jobs = 2,
        .completed = 2,
        .mean_wait_s = 2.5,
        .max_wait_s = 5,
        .mean_bounded_slowdown = 1,
        .utilisation = 1,
        .makespan_s = 10}},
      // Waits 20 and 0; slowdowns (20+100)/100 = 1.2 and max(1, 2/10) = 1; work 200 + 2 over
      // 4 processors x (130 - 10) s; the third job never started.
      {"a job never started",
       {Job(10, 30, 130, 2), Job(20, 20, 22, 1), Job(40, std::nullopt, std::nullopt, 4)},
       4,
       {.jobs = 3,
        .completed = 2,
        .never_started = 1,
        .mean_wait_s = 10,
        .max_wait_s = 20,
        .mean_bounded_slowdown = 1.1,
        .utilisation = 202.0 / 480.0,
        .makespan_s = 120}},
      // The running job's wait counts; its work and end do not.
      {"a job still running",
       {Job(0, 10, std::nullopt, 1), Job(0, 0, 50, 1)},
       1,
       {.jobs = 2,
        .completed = 1,
        .unfinished = 1,
        .mean_wait_s = 5,
        .max_wait_s = 10,
        .mean_bounded_slowdown = 1,
        .utilisation = 1,
        .makespan_s = 50}},
      // A long wait for a short job: (30 + 1)/10.
      {"short job waiting long",
       {Job(0, 30, 31, 1)},
       2,
       {.jobs = 1,
        .completed = 1,
        .mean_wait_s = 30,
        .max_wait_s = 30,
        .mean_bounded_slowdown = 3.1,
        .utilisation = 1.0 / 62.0,
        .makespan_s = 31}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const SwfMetrics m = ComputeSwfMetrics(c.jobs, c.total_processors);
    EXPECT_EQ(m.jobs, c.want.jobs);
    EXPECT_EQ(m.completed, c.want.completed);
    EXPECT_EQ(m.never_started, c.want.never_started);
    EXPECT_EQ(m.unfinished, c.want.unfinished);
    EXPECT_DOUBLE_EQ(m.mean_wait_s, c.want.mean_wait_s);
    EXPECT_DOUBLE_EQ(m.max_wait_s, c.want.max_wait_s);
    EXPECT_DOUBLE_EQ(m.mean_bounded_slowdown, c.want.mean_bounded_slowdown);
    EXPECT_DOUBLE_EQ(m.utilisation, c.want.utilisation);
    EXPECT_DOUBLE_EQ(m.makespan_s, c.want.makespan_s);
  }
}

TEST(SwfMetricsTest, BoundIsAParameterAndMillisecondsCount) {
  JobTimes j{.submit = TimePoint{},
             .start = TimePoint{} + milliseconds(1500),
             .end = TimePoint{} + milliseconds(2000),
             .processors = 1};
  // wait 1.5 s, run 0.5 s: bound 1 s gives 2/1 = 2; the default 10 s bound gives 1.
  EXPECT_DOUBLE_EQ(ComputeSwfMetrics({&j, 1}, 1, seconds(1)).mean_bounded_slowdown, 2);
  EXPECT_DOUBLE_EQ(ComputeSwfMetrics({&j, 1}, 1).mean_bounded_slowdown, 1);
  EXPECT_DOUBLE_EQ(ComputeSwfMetrics({&j, 1}, 1).mean_wait_s, 1.5);
}

TEST(SwfMetricsTest, JobTimesOfMatchesReportToWorkload) {
  SwfWorkload w;
  w.scenario.file = "t.swf";
  w.scenario.jobs.resize(3);
  w.scenario.jobs[0].spec.name = "job-1";
  w.scenario.jobs[1].spec.name = "job-2";
  w.scenario.jobs[2].spec.name = "job-3";
  w.processors = {4, 2, 1};
  RunReport report;
  report.jobs = {
      JobOutcome{
          .name = "job-1", .submit = T(0), .first_start = T(1), .end = T(5), .phase = "Succeeded"},
      JobOutcome{.name = "job-2", .submit = T(2), .first_start = T(3), .phase = "Running"},
      JobOutcome{.name = "job-3", .submit = T(2), .end = T(2), .phase = "Failed"},  // refused
  };
  absl::StatusOr<std::vector<JobTimes>> jobs = JobTimesOf(report, w);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].end, T(5));
  EXPECT_EQ((*jobs)[0].processors, 4);
  EXPECT_EQ((*jobs)[1].start, T(3));
  EXPECT_EQ((*jobs)[1].end, std::nullopt);
  EXPECT_EQ((*jobs)[2].start, std::nullopt);
  EXPECT_EQ((*jobs)[2].end, std::nullopt);

  report.jobs[1].name = "job-9";
  EXPECT_THAT(JobTimesOf(report, w).status().message(),
              ::testing::HasSubstr("job 1 of the run is 'job-9', not 'job-2'"));
  report.jobs.pop_back();
  EXPECT_THAT(JobTimesOf(report, w).status().message(),
              ::testing::HasSubstr("the run reports 2 jobs, the workload has 3"));
}

}  // namespace
}  // namespace tessera::sim::swf

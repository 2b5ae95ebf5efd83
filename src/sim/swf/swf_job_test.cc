#include "sim/swf/swf_job.h"

#include <chrono>

#include "gtest/gtest.h"

namespace tessera::sim::swf {
namespace {

using std::chrono::seconds;

SwfJob Row() {
  SwfJob job;
  job.id = 7;
  job.submit_time = 100;
  job.run_time = 600;
  job.allocated_processors = 16;
  job.requested_processors = 12;
  job.requested_time = 300;  // below the run time
  job.requested_memory = 2048;
  return job;
}

TEST(SwfJobTest, RequestedProcessorsFirstThenAllocated) {
  SwfJob job = Row();
  EXPECT_EQ(SwfJobProcessors(job), 12);
  job.requested_processors = kSwfUnknown;
  EXPECT_EQ(SwfJobProcessors(job), 16);
  job.allocated_processors = 0;
  EXPECT_FALSE(SwfJobProcessors(job).has_value());
}

TEST(SwfJobTest, RowBecomesRigidGangWithLimitRaisedToTheRun) {
  const SwfJobMapping m = SwfJobSpec(Row());
  ASSERT_TRUE(m.spec.has_value()) << m.skip_reason;
  EXPECT_TRUE(m.skip_reason.empty());
  EXPECT_TRUE(m.time_limit_raised);
  const JobSpec& s = *m.spec;
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(s.tasks[0].name, kSwfTaskGroup);
  EXPECT_EQ(s.tasks[0].replicas, 12);
  EXPECT_EQ(s.tasks[0].request.cpu, 1000);
  EXPECT_EQ(s.tasks[0].request.memory, 2048 * 1024);
  EXPECT_EQ(s.min_available, 12);
  EXPECT_EQ(s.duration, seconds(600));
  EXPECT_EQ(s.time_limit, seconds(600));
}

TEST(SwfJobTest, TimeLimitIsTheRequestWhenAtLeastTheRunElseTheRun) {
  SwfJob job = Row();
  job.requested_time = 900;
  SwfJobMapping m = SwfJobSpec(job);
  ASSERT_TRUE(m.spec.has_value());
  EXPECT_FALSE(m.time_limit_raised);
  EXPECT_EQ(m.spec->time_limit, seconds(900));
  job.requested_time = kSwfUnknown;
  job.requested_memory = kSwfUnknown;
  m = SwfJobSpec(job);
  ASSERT_TRUE(m.spec.has_value());
  EXPECT_FALSE(m.time_limit_raised);
  EXPECT_EQ(m.spec->time_limit, seconds(600));
  EXPECT_EQ(m.spec->tasks[0].request.memory, 0);
}

TEST(SwfJobTest, RowsThatAreNoJobGiveTheReason) {
  struct Case {
    void (*change)(SwfJob&);
    const char* reason;
  };
  const Case cases[] = {
      {[](SwfJob& j) { j.submit_time = kSwfUnknown; }, "submit time unknown"},
      {[](SwfJob& j) { j.run_time = 0; }, "run time <= 0 or unknown"},
      {[](SwfJob& j) { j.run_time = kSwfUnknown; }, "run time <= 0 or unknown"},
      {[](SwfJob& j) { j.requested_processors = j.allocated_processors = kSwfUnknown; },
       "processors unknown"},
      {[](SwfJob& j) { j.requested_processors = kMaxTasksPerJob + 1; },
       "more than 4096 processors (tasks per job)"},
      {[](SwfJob& j) { j.requested_memory = kMaxSwfMemoryKb + 1; }, "requested memory too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    SwfJob job = Row();
    c.change(job);
    const SwfJobMapping m = SwfJobSpec(job);
    EXPECT_FALSE(m.spec.has_value());
    EXPECT_EQ(m.skip_reason, c.reason);
  }
}

}  // namespace
}  // namespace tessera::sim::swf

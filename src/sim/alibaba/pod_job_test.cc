#include "sim/alibaba/pod_job.h"

#include <chrono>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::sim::alibaba {
namespace {

using std::chrono::seconds;

TraceTask Pod() {
  TraceTask pod;
  pod.name = "openb-pod-0001";
  pod.request.cpu = 8000;
  pod.request.memory = int64_t{16} << 30;
  pod.request.gpu_count = 1;
  pod.request.gpu_milli = 460;
  pod.request.gpu_models = {"T4"};
  pod.creation_time = 100;
  pod.scheduled_time = 130;
  pod.deletion_time = 730;
  return pod;
}

TEST(PodJobTest, RunTimeFromScheduledElseCreationTime) {
  TraceTask pod = Pod();
  EXPECT_EQ(PodRunSeconds(pod), 600);
  pod.scheduled_time.reset();
  EXPECT_EQ(PodRunSeconds(pod), 630);
  pod.deletion_time = 50;  // deleted before it was created: never negative
  EXPECT_EQ(PodRunSeconds(pod), 0);
  pod.deletion_time.reset();
  EXPECT_FALSE(PodRunSeconds(pod).has_value());
}

TEST(PodJobTest, PodBecomesOneTaskWithItsRequest) {
  const TraceTask pod = Pod();
  const PodJobMapping m = PodJobSpec(pod);
  ASSERT_TRUE(m.spec.has_value()) << m.skip_reason;
  const JobSpec& s = *m.spec;
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(s.tasks[0].name, kPodTaskGroup);
  EXPECT_EQ(s.tasks[0].replicas, 1);
  const TaskRequest& r = s.tasks[0].request;
  EXPECT_EQ(r.cpu, 8000);
  EXPECT_EQ(r.memory, int64_t{16} << 30);
  EXPECT_EQ(r.gpu_count, 1);
  EXPECT_EQ(r.gpu_milli, 460);
  EXPECT_EQ(r.gpu_models, std::vector<std::string>{"T4"});
  EXPECT_EQ(s.min_available, 1);
  EXPECT_EQ(s.duration, seconds(600));
  EXPECT_FALSE(s.time_limit.has_value());
}

TEST(PodJobTest, PodWithoutRunTimeIsSkipped) {
  TraceTask pod = Pod();
  pod.deletion_time.reset();
  const PodJobMapping m = PodJobSpec(pod);
  EXPECT_FALSE(m.spec.has_value());
  EXPECT_EQ(m.skip_reason, "unknown run time");
}

}  // namespace
}  // namespace tessera::sim::alibaba

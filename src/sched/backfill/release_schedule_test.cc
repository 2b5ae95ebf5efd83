#include "sched/backfill/release_schedule.h"

#include <chrono>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

TimePoint At(int64_t seconds) { return TimePoint{} + std::chrono::seconds(seconds); }

PlannedRelease Release(int64_t job, TimePoint end, std::vector<int32_t> nodes) {
  PlannedRelease r{.job = job, .end = end};
  for (int32_t n : nodes) {
    r.tasks.push_back(TaskRequest{.cpu = 1000 * job});
    r.placements.push_back(Placement{.node_index = n});
  }
  return r;
}

std::vector<int64_t> JobsByEnd(const ReleaseSchedule& s) {
  std::vector<int64_t> jobs;
  for (const auto& [key, release] : s.by_end()) {
    EXPECT_EQ(key.second, release->job);
    jobs.push_back(key.second);
  }
  return jobs;
}

std::vector<int64_t> JobsOn(const ReleaseSchedule& s, int32_t node) {
  std::vector<int64_t> jobs;
  for (const NodeRelease& r : s.on_node(node)) {
    EXPECT_EQ(r.task->cpu, 1000 * r.job);  // points at the job's own task
    jobs.push_back(r.job);
  }
  return jobs;
}

TEST(ReleaseScheduleTest, KeepsJobsByEndThenIdAndPerNodeByEnd) {
  ReleaseSchedule s;
  s.Set(Release(3, At(20), {0, 1}));
  s.Set(Release(1, At(30), {1}));
  s.Set(Release(2, At(20), {1, 1}));
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(JobsByEnd(s), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(JobsOn(s, 0), (std::vector<int64_t>{3}));
  EXPECT_EQ(JobsOn(s, 1), (std::vector<int64_t>{2, 2, 3, 1}));
  EXPECT_TRUE(s.on_node(7).empty());
  EXPECT_TRUE(s.on_node(-1).empty());
}

TEST(ReleaseScheduleTest, SetReplacesAndRemoveForgets) {
  ReleaseSchedule s;
  s.Set(Release(1, At(10), {0}));
  s.Set(Release(2, At(20), {0}));
  s.Set(Release(1, At(30), {1}));  // moved later and elsewhere
  EXPECT_EQ(JobsByEnd(s), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(JobsOn(s, 0), (std::vector<int64_t>{2}));
  EXPECT_EQ(JobsOn(s, 1), (std::vector<int64_t>{1}));
  ASSERT_NE(s.Find(1), nullptr);
  EXPECT_EQ(s.Find(1)->end, At(30));

  s.Remove(2);
  s.Remove(99);  // not set: ignored
  EXPECT_EQ(s.Find(2), nullptr);
  EXPECT_EQ(JobsByEnd(s), (std::vector<int64_t>{1}));
  EXPECT_TRUE(s.on_node(0).empty());
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_TRUE(s.by_end().empty());
  EXPECT_TRUE(s.on_node(1).empty());
}

TEST(ReleaseScheduleTest, ReleasesThatNeverEndAreKeptButNotOrdered) {
  ReleaseSchedule s;
  s.Set(Release(1, TimePoint::max(), {0}));
  PlannedRelease uneven = Release(2, At(10), {0});
  uneven.tasks.push_back(TaskRequest{});
  s.Set(uneven);
  PlannedRelease negative = Release(3, At(10), {-1});
  s.Set(negative);
  PlannedRelease bad_device = Release(4, At(10), {0});
  bad_device.placements[0].gpus = {-2};
  s.Set(bad_device);
  EXPECT_EQ(s.size(), 4u);
  EXPECT_TRUE(s.by_end().empty());
  EXPECT_TRUE(s.on_node(0).empty());
  s.Remove(3);  // unlinking a release that was never ordered touches nothing
  EXPECT_EQ(s.size(), 3u);
}

}  // namespace
}  // namespace tessera

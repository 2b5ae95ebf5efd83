#include "server/recent_workload.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::server {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TaskRequest Task(int64_t cpu, int32_t gpus = 0, int64_t milli = 0,
                 std::vector<std::string> models = {}) {
  TaskRequest t;
  t.cpu = cpu;
  t.memory = int64_t{1} << 30;
  t.gpu_count = gpus;
  t.gpu_milli = milli;
  t.gpu_models = std::move(models);
  return t;
}

// "cpu/count x milli" of each class with its probability, in workload order.
std::vector<std::pair<std::string, double>> Classes(const TargetWorkload& w) {
  std::vector<std::pair<std::string, double>> out;
  for (const TaskClassShare& c : w.classes) {
    std::string name = std::to_string(c.request.cpu) + "/" + std::to_string(c.request.gpu_count) +
                       "x" + std::to_string(c.request.gpu_milli);
    for (const std::string& m : c.request.gpu_models) name += ":" + m;
    out.emplace_back(name, c.probability);
  }
  return out;
}

TEST(RecentWorkloadTest, AnEmptyWindowIsAnEmptyWorkload) {
  const RecentWorkload window;
  EXPECT_EQ(window.size(), 0);
  EXPECT_THAT(window.Workload().classes, IsEmpty());
}

TEST(RecentWorkloadTest, ShapesByPopularityWithTheirShares) {
  RecentWorkload window({.capacity = 10, .popularity_threshold_pct = 100});
  for (int i = 0; i < 3; ++i) window.Add(Task(2000, 1, 500));
  window.Add(Task(4000));
  // Memory is not part of the shape: these two are one shape.
  TaskRequest more_memory = Task(8000, 2, 1000);
  more_memory.memory *= 4;
  window.Add(Task(8000, 2, 1000));
  window.Add(more_memory);
  EXPECT_EQ(window.size(), 6);
  EXPECT_THAT(Classes(window.Workload()),
              ElementsAre(std::pair<std::string, double>{"2000/1x500", 0.5},
                          std::pair<std::string, double>{"8000/2x1000", 2.0 / 6},
                          std::pair<std::string, double>{"4000/0x0", 1.0 / 6}));
}

TEST(RecentWorkloadTest, ModelSetsAreShapesInAnyOrder) {
  RecentWorkload window({.capacity = 10, .popularity_threshold_pct = 100});
  window.Add(Task(1000, 1, 1000, {"V100", "A100"}));
  window.Add(Task(1000, 1, 1000, {"A100", "V100", "A100"}));
  window.Add(Task(1000, 1, 1000));
  EXPECT_THAT(Classes(window.Workload()),
              ElementsAre(std::pair<std::string, double>{"1000/1x1000:A100:V100", 2.0 / 3},
                          std::pair<std::string, double>{"1000/1x1000", 1.0 / 3}));
}

TEST(RecentWorkloadTest, TheOldestShapesLeaveAFullWindow) {
  RecentWorkload window({.capacity = 3, .popularity_threshold_pct = 100});
  window.Add(Task(1000));
  window.Add(Task(1000));
  window.Add(Task(2000, 1, 250));
  window.Add(Task(3000, 1, 1000));  // pushes out one 1000
  window.Add(Task(3000, 1, 1000));  // and the other
  EXPECT_EQ(window.size(), 3);
  EXPECT_THAT(Classes(window.Workload()),
              ElementsAre(std::pair<std::string, double>{"3000/1x1000", 2.0 / 3},
                          std::pair<std::string, double>{"2000/1x250", 1.0 / 3}));
}

TEST(RecentWorkloadTest, RareShapesBelowThePopularityThresholdAreLeftOut) {
  RecentWorkload window({.capacity = 100, .popularity_threshold_pct = 95});
  for (int i = 0; i < 60; ++i) window.Add(Task(1000, 1, 500));
  for (int i = 0; i < 36; ++i) window.Add(Task(1000, 1, 1000));
  for (int i = 0; i < 4; ++i) window.Add(Task(1000, 8, 1000));  // 4%: not needed to reach 95%
  const TargetWorkload workload = window.Workload();
  ASSERT_EQ(workload.classes.size(), 2u);
  EXPECT_THAT(workload.classes[0].probability, DoubleEq(60.0 / 96));
  EXPECT_THAT(workload.classes[1].probability, DoubleEq(36.0 / 96));
}

TEST(RecentWorkloadTest, TheRevisionMovesOnlyWhenTheCountsChange) {
  RecentWorkload window({.capacity = 2});
  const uint64_t empty = window.revision();
  window.Add(Task(1000));
  window.Add(Task(2000));
  const uint64_t full = window.revision();
  EXPECT_NE(full, empty);
  window.Add(Task(1000));  // replaces the oldest 1000: the same counts
  EXPECT_EQ(window.revision(), full);
  window.Add(Task(3000));  // replaces the 2000
  EXPECT_NE(window.revision(), full);
}

}  // namespace
}  // namespace tessera::server

#include "sched/backfill/fit_count.h"

#include <chrono>
#include <vector>

#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

TaskRequest Task(int64_t cpu, int32_t gpus = 0, int64_t milli = kMilliGpuPerDevice) {
  TaskRequest t;
  t.cpu = cpu;
  t.gpu_count = gpus;
  t.gpu_milli = gpus > 0 ? milli : 0;
  return t;
}

Placement On(const ClusterState& state, int32_t node, std::vector<int32_t> gpus,
             int64_t milli = kMilliGpuPerDevice) {
  Placement p;
  p.node_index = node;
  p.node = state.node(node).name;
  p.gpus.assign(gpus.begin(), gpus.end());
  p.gpu_milli = gpus.empty() ? 0 : milli;
  return p;
}

class FitCountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(state_.AddNode(testing::NamedGpuNode("a", 4, 8000)).ok());
    ASSERT_TRUE(state_.AddNode(testing::NamedGpuNode("b", 2, 8000)).ok());
  }

  const FreeCapacity& Free() {
    free_.Sync(state_, [](int32_t) {});
    return free_;
  }

  int64_t Count(std::vector<TaskRequest> tasks) {
    return FitCount(Free(), SmallestTask(tasks)).total();
  }

  FreeCapacity free_;

  ClusterState state_;
};

TEST_F(FitCountTest, SmallestTaskTakesTheLeastOfEveryQuantity) {
  TaskRequest nic = Task(3000, 2);
  nic.extended["example.com/nic"] = 2;
  nic.extended["example.com/fpga"] = 1;
  TaskRequest other = Task(1000, 1, 500);
  other.extended["example.com/nic"] = 1;
  const SmallestTask smallest(std::vector<TaskRequest>{nic, other});
  EXPECT_EQ(smallest.cpu, 1000);
  EXPECT_EQ(smallest.gpu_count, 1);
  EXPECT_EQ(smallest.gpu_milli, 500);
  EXPECT_EQ(smallest.extended, (std::map<std::string, int64_t, std::less<>>{
                                   {"example.com/nic", 1}}));  // fpga: not every task asks
  EXPECT_EQ(SmallestTask(std::vector<TaskRequest>{Task(1000, 2), Task(1000)}).gpu_count, 0);
}

TEST_F(FitCountTest, CountsWholeAndSharedDevicesCpuAndExtendedPerNode) {
  EXPECT_EQ(Count({Task(1000)}), 16);            // cpu only: 8 + 8
  EXPECT_EQ(Count({Task(1000, 1)}), 6);          // whole devices: 4 + 2
  EXPECT_EQ(Count({Task(1000, 2)}), 3);          // pairs: 2 + 1
  EXPECT_EQ(Count({Task(100, 1, 250)}), 24);     // quarters: 16 + 8
  EXPECT_EQ(Count({Task(3000, 1, 250)}), 4);     // cpu bounds each node at 2
  TaskRequest nic = Task(0);
  nic.extended["example.com/nic"] = 1;
  EXPECT_EQ(Count({nic}), 0);                    // no node has one
  state_.MutableNode(1).allocatable.extended["example.com/nic"] = 3;
  EXPECT_EQ(Count({nic}), 3);

  // A device partly used is no whole device, but still has shares.
  ASSERT_TRUE(state_.Assume(Task(0, 1, 500), On(state_, 0, {1}, 500)).ok());
  EXPECT_EQ(Count({Task(0, 1)}), 5);
  EXPECT_EQ(Count({Task(0, 1, 500)}), 11);  // 7 halves on a, 4 on b
}

TEST_F(FitCountTest, TotalWithPeaksCountsTheirLoadToo) {
  FitCount count(Free(), SmallestTask(std::vector<TaskRequest>{Task(1000, 1)}));
  ASSERT_EQ(count.total(), 6);
  NodeLoad peak(4);
  peak.milli[0] = kMilliGpuPerDevice;
  peak.milli[2] = 250;
  EXPECT_EQ(count.TotalWith(free_, std::vector<NodePeak>{{0, peak}}), 4);
  peak.cpu = 7000;  // leaves 1 core on node a
  EXPECT_EQ(count.TotalWith(free_, std::vector<NodePeak>{{0, peak}}), 3);
  EXPECT_EQ(count.total(), 6);  // the peaks are not kept
}

TEST_F(FitCountTest, UpdateFollowsTheFreeCapacityAsItMoves) {
  const TaskRequest two = Task(1000, 2);
  const Placement where = On(state_, 0, {0, 1});
  ASSERT_TRUE(state_.Assume(two, where).ok());
  ReleaseSchedule releases;
  releases.Set(PlannedRelease{.job = 1,
                              .end = TimePoint{} + std::chrono::seconds(10),
                              .tasks = {two},
                              .placements = {where}});
  FreeCapacity at = Free();
  FitCount count(at, SmallestTask(std::vector<TaskRequest>{Task(1000, 1)}));
  EXPECT_EQ(count.total(), 4);
  auto move = [&](int64_t seconds) {
    at.MoveTo(releases, TimePoint{}, TimePoint{} + std::chrono::seconds(seconds),
              [&](int32_t node) { count.Update(at, node); });
  };
  move(10);
  EXPECT_EQ(count.total(), 6);
  move(5);
  EXPECT_EQ(count.total(), 4);
}

}  // namespace
}  // namespace tessera

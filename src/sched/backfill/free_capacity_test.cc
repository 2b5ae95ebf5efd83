#include "sched/backfill/free_capacity.h"

#include <chrono>
#include <vector>

#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

TimePoint At(int64_t seconds) { return TimePoint{} + std::chrono::seconds(seconds); }

TaskRequest Task(int64_t cpu, int32_t gpus) {
  TaskRequest t;
  t.cpu = cpu;
  t.gpu_count = gpus;
  t.gpu_milli = gpus > 0 ? kMilliGpuPerDevice : 0;
  return t;
}

Placement On(int32_t node, std::vector<int32_t> gpus) {
  Placement p;
  p.node_index = node;
  p.gpus.assign(gpus.begin(), gpus.end());
  p.gpu_milli = gpus.empty() ? 0 : kMilliGpuPerDevice;
  return p;
}

class FreeCapacityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Node a = testing::NamedGpuNode("a", 2, 8000);
    a.capacity.extended["example.com/nic"] = 2;
    a.allocatable.extended = a.capacity.extended;
    ASSERT_TRUE(state_.AddNode(std::move(a)).ok());
    ASSERT_TRUE(state_.AddNode(testing::NamedGpuNode("b", 1, 4000)).ok());
  }

  // Runs a task until `end` (TimePoint::max(): never), in the state and the schedule.
  void Run(int64_t job, TimePoint end, TaskRequest task, Placement where) {
    where.node = state_.node(where.node_index).name;
    ASSERT_TRUE(state_.Assume(task, where).ok());
    releases_.Set(PlannedRelease{.job = job, .end = end, .tasks = {task}, .placements = {where}});
  }

  ClusterState state_;
  ReleaseSchedule releases_;
};

void Ignore(int32_t) {}

TEST_F(FreeCapacityTest, SyncReadsWhatIsFreeAndFollowsTheChangeLog) {
  FreeCapacity free;
  EXPECT_FALSE(free.Sync(state_, Ignore));  // read afresh
  ASSERT_EQ(free.size(), 2);
  EXPECT_EQ(free.cpu(0), 8000);
  EXPECT_EQ(free.devices(0), 2);
  const int32_t nic = free.ExtendedId("example.com/nic");
  ASSERT_GE(nic, 0);
  EXPECT_EQ(free.extended(0, nic), 2);
  EXPECT_EQ(free.extended(1, nic), 0);
  EXPECT_EQ(free.ExtendedId("example.com/fpga"), -1);

  TaskRequest task = Task(3000, 1);
  task.extended["example.com/nic"] = 1;
  Run(1, At(10), task, On(0, {1}));
  std::vector<int32_t> reread;
  EXPECT_TRUE(free.Sync(state_, [&](int32_t node) { reread.push_back(node); }));
  EXPECT_EQ(reread, std::vector<int32_t>{0});
  EXPECT_EQ(free.cpu(0), 5000);
  EXPECT_EQ(free.used_milli(0, 1), kMilliGpuPerDevice);
  EXPECT_EQ(free.used_milli(0, 0), 0);
  EXPECT_EQ(free.extended(0, nic), 1);

  // A node whose devices change is read afresh with the rest; so is a node added.
  state_.MutableNode(1).gpus.pop_back();
  ASSERT_TRUE(state_.AddNode(testing::NamedGpuNode("c", 4)).ok());
  EXPECT_FALSE(free.Sync(state_, Ignore));
  EXPECT_EQ(free.size(), 3);
  EXPECT_EQ(free.devices(1), 0);
  EXPECT_EQ(free.devices(2), 4);
  EXPECT_EQ(free.cpu(0), 5000);
}

TEST_F(FreeCapacityTest, MoveToAddsBackWhatEndsByThenAndTakesItBackGoingBack) {
  TaskRequest task = Task(3000, 1);
  task.extended["example.com/nic"] = 2;
  Run(1, At(10), task, On(0, {0}));
  Run(2, At(20), Task(1000, 1), On(1, {0}));
  Run(3, TimePoint::max(), Task(1000, 0), On(1, {}));
  // A task on a node outside the state is held for ever (it is in the schedule only).
  releases_.Set(PlannedRelease{
      .job = 4, .end = At(5), .tasks = {Task(1000, 0)}, .placements = {On(7, {})}});
  FreeCapacity at;
  at.Sync(state_, Ignore);
  std::vector<int32_t> changed;
  auto move = [&](int64_t seconds) {
    changed.clear();
    at.MoveTo(releases_, At(0), At(seconds), [&](int32_t node) { changed.push_back(node); });
  };
  const int32_t nic = at.ExtendedId("example.com/nic");
  move(10);
  EXPECT_EQ(changed, std::vector<int32_t>{0});
  EXPECT_EQ(at.cpu(0), 8000);
  EXPECT_EQ(at.used_milli(0, 0), 0);
  EXPECT_EQ(at.extended(0, nic), 2);
  move(30);
  EXPECT_EQ(changed, std::vector<int32_t>{1});
  EXPECT_EQ(at.cpu(1), 3000);  // job 3 never ends
  EXPECT_EQ(at.used_milli(1, 0), 0);
  move(0);
  EXPECT_EQ(changed, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(at.cpu(0), 5000);
  EXPECT_EQ(at.extended(0, nic), 0);
  move(20);
  changed.clear();
  at.Rewind([&](int32_t node) { changed.push_back(node); });  // as the state is now
  EXPECT_EQ(changed, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(at.cpu(0), 5000);
  EXPECT_EQ(at.cpu(1), 2000);
  EXPECT_TRUE(at.Sync(state_, Ignore));
  EXPECT_EQ(at.cpu(1), 2000);
}

TEST_F(FreeCapacityTest, ARunningJobPastItsEndIsFreeNow) {
  Run(1, At(5), Task(2000, 0), On(0, {}));
  FreeCapacity at;
  at.Sync(state_, Ignore);
  at.MoveTo(releases_, At(60), At(60), Ignore);
  EXPECT_EQ(at.cpu(0), 8000);
}

}  // namespace
}  // namespace tessera

#include "sched/preemption/node_room.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// A node of 4 A100 GPUs (80 GiB each), 32 cores, 256 GiB, 2 "rdma" units.
Node FourGpuNode() {
  Node node;
  node.name = "n";
  node.capacity.cpu = 32'000;
  node.capacity.memory = 256 * kGi;
  node.capacity.extended["rdma"] = 2;
  for (int32_t i = 0; i < 4; ++i) {
    node.gpus.push_back(GpuDevice{.index = i, .model = "A100", .memory = 80 * kGi});
  }
  node.capacity.gpu = 4 * kMilliGpuPerDevice;
  node.allocatable = node.capacity;
  return node;
}

TaskRequest Task(int64_t cpu, int32_t gpus, int64_t milli = kMilliGpuPerDevice) {
  TaskRequest t;
  t.cpu = cpu;
  t.memory = kGi;
  t.gpu_count = gpus;
  t.gpu_milli = gpus > 0 ? milli : 0;
  return t;
}

Placement On(std::vector<int32_t> gpus, int64_t milli = kMilliGpuPerDevice) {
  Placement p;
  p.node_index = 0;
  p.gpus.assign(gpus.begin(), gpus.end());
  p.gpu_milli = gpus.empty() ? 0 : milli;
  return p;
}

// Holds `task` at `placement` on `node`, as ClusterState::Assume would.
void Hold(Node& node, const TaskRequest& task, const Placement& placement) {
  node.allocated += task.AsResources();
  node.allocated.gpu = 0;
  for (int32_t d : placement.gpus) node.gpus[d].used_milli += placement.gpu_milli;
  for (const GpuDevice& d : node.gpus) node.allocated.gpu += d.used_milli;
}

struct Holding {
  TaskRequest task;
  Placement placement;
  bool released;  // part of the room
};

struct FitCase {
  std::string name;
  TaskRequest task;
  std::vector<Holding> holdings;  // placed on the node, some of them released
  bool fits;
};

class FitsWithRoomTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(FitsWithRoomTest, MirrorsNodeResourcesFit) {
  const FitCase& c = GetParam();
  Node node = FourGpuNode();
  NodeRoom room;
  RoomTotals totals;
  for (const Holding& h : c.holdings) {
    Hold(node, h.task, h.placement);
    if (h.released) {
      room.Apply(h.task, h.placement, +1);
      totals.Apply(h.task, h.placement, +1);
    }
  }
  EXPECT_EQ(FitsWithRoom(c.task, node, room), c.fits);
  if (c.fits) EXPECT_TRUE(MayFitWithRoom(c.task, node, totals)) << "must be necessary";
}

TaskRequest WithRdma(TaskRequest t, int64_t units) {
  t.extended["rdma"] = units;
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FitsWithRoomTest,
    ::testing::Values(
        FitCase{"EmptyNode", Task(1000, 4), {}, true},
        FitCase{"AllGpusHeld", Task(1000, 1), {{Task(1000, 4), On({0, 1, 2, 3}), false}}, false},
        FitCase{"ReleasedWholeGpus",
                Task(1000, 2),
                {{Task(1000, 2), On({0, 1}), true}, {Task(1000, 2), On({2, 3}), false}},
                true},
        FitCase{"WholeGpuNeedsAFullyFreeDevice",
                Task(1000, 1),
                {{Task(1000, 1, 500), On({0}, 500), true},
                 {Task(1000, 1, 500), On({0}, 500), false},
                 {Task(1000, 3), On({1, 2, 3}), false}},
                false},
        FitCase{"SharingFitsBesideASharer",
                Task(1000, 1, 500),
                {{Task(1000, 1, 500), On({0}, 500), true},
                 {Task(1000, 1, 500), On({0}, 500), false},
                 {Task(1000, 3), On({1, 2, 3}), false}},
                true},
        FitCase{"CpuStillShort",
                Task(20'000, 1),
                {{Task(16'000, 2), On({0, 1}), true}, {Task(15'000, 2), On({2, 3}), false}},
                false},
        FitCase{"CpuReleased",
                Task(16'000, 1),
                {{Task(16'000, 2), On({0, 1}), true}, {Task(15'000, 2), On({2, 3}), false}},
                true},
        FitCase{"ExtendedReleased",
                WithRdma(Task(1000, 0), 2),
                {{WithRdma(Task(1000, 0), 1), On({}), true},
                 {WithRdma(Task(1000, 0), 1), On({}), true}},
                true},
        FitCase{"ExtendedHeld",
                WithRdma(Task(1000, 0), 2),
                {{WithRdma(Task(1000, 0), 1), On({}), true},
                 {WithRdma(Task(1000, 0), 1), On({}), false}},
                false}),
    [](const ::testing::TestParamInfo<FitCase>& info) { return info.param.name; });

TEST(NodeRoomTest, ModelsAndHealthAreHonoured) {
  Node node = FourGpuNode();
  node.gpus[0].healthy = false;
  TaskRequest four = Task(1000, 4);
  EXPECT_FALSE(FitsWithRoom(four, node, NodeRoom{}));
  TaskRequest h100 = Task(1000, 1);
  h100.gpu_models = {"H100"};
  EXPECT_FALSE(FitsWithRoom(h100, node, NodeRoom{}));
  h100.gpu_models.push_back("A100");
  EXPECT_TRUE(FitsWithRoom(h100, node, NodeRoom{}));
}

TEST(NodeRoomTest, ApplyingAndRemovingLeavesNothing) {
  NodeRoom room;
  room.Apply(Task(2000, 2), On({1, 3}), +1);
  room.Apply(Task(2000, 2), On({1, 3}), -1);
  EXPECT_EQ(room.cpu, 0);
  EXPECT_EQ(room.memory, 0);
  for (int64_t milli : room.gpu_milli) EXPECT_EQ(milli, 0);
}

TEST(NodeRoomTest, MaxCopies) {
  Node node = FourGpuNode();
  EXPECT_EQ(MaxCopies(Task(1000, 2), node), 2);
  EXPECT_EQ(MaxCopies(Task(20'000, 1), node), 1);  // cpu bounds it
  EXPECT_EQ(MaxCopies(Task(1000, 0), node), 32);
  Hold(node, Task(1000, 1), On({2}));
  EXPECT_EQ(MaxCopies(Task(1000, 2), node), 1);
  EXPECT_EQ(MaxCopies(Task(1000, 1, 500), node), std::nullopt);  // sharing: not counted
}

}  // namespace
}  // namespace tessera

#include "sched/cluster_state.h"

#include "gtest/gtest.h"

namespace tessera {
namespace {

Node GpuNode(std::string name, int devices) {
  Node n;
  n.name = std::move(name);
  n.capacity.cpu = n.allocatable.cpu = 8000;
  n.capacity.memory = n.allocatable.memory = 1 << 30;
  n.capacity.gpu = n.allocatable.gpu = 1000 * devices;
  for (int i = 0; i < devices; ++i) n.gpus.push_back(GpuDevice{i, "A100", 80LL << 30});
  return n;
}

TaskRequest Share(int64_t milli) {
  TaskRequest t;
  t.cpu = 1000;
  t.gpu_count = 1;
  t.gpu_milli = milli;
  return t;
}

Placement On(int32_t node, std::initializer_list<int32_t> gpus, int64_t milli) {
  Placement p;
  p.node_index = node;
  p.gpus.assign(gpus.begin(), gpus.end());
  p.gpu_milli = milli;
  return p;
}

TEST(ClusterStateTest, RejectsDuplicateNamesAndNegativeQuantities) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(GpuNode("a", 1)).ok());
  EXPECT_EQ(state.AddNode(GpuNode("a", 1)).status().message(), "node a: duplicate name");
  Node bad = GpuNode("b", 1);
  bad.allocatable.cpu = -1;
  EXPECT_FALSE(state.AddNode(bad).ok());
}

TEST(ClusterStateTest, AssumeAndForgetAreInverse) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(GpuNode("a", 2)).ok());
  const Node before = state.node(0);
  const uint32_t version = state.version(0);
  ASSERT_TRUE(state.Assume(Share(300), On(0, {1}, 300)).ok());
  EXPECT_EQ(state.node(0).gpus[1].used_milli, 300);
  EXPECT_EQ(state.node(0).allocated.gpu, 300);
  EXPECT_NE(state.version(0), version);
  state.Forget(Share(300), On(0, {1}, 300));
  EXPECT_EQ(state.node(0).allocated, before.allocated);
  EXPECT_EQ(state.node(0).gpus[1].used_milli, 0);
}

TEST(ClusterStateTest, NeverOvercommitsADevice) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(GpuNode("a", 1)).ok());
  ASSERT_TRUE(state.Assume(Share(600), On(0, {0}, 600)).ok());
  absl::Status over = state.Assume(Share(500), On(0, {0}, 500));
  EXPECT_EQ(over.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(state.node(0).gpus[0].used_milli, 600) << "a refused Assume changes nothing";
  state.MutableNode(0).gpus[0].healthy = false;
  EXPECT_FALSE(state.Assume(Share(100), On(0, {0}, 100)).ok());
}

TEST(ClusterStateTest, ChangeLogReportsChangedNodes) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(GpuNode("a", 1)).ok());
  ASSERT_TRUE(state.AddNode(GpuNode("b", 1)).ok());
  const uint64_t mark = state.change_count();
  state.MutableNode(1).unschedulable = true;
  auto changed = state.ChangesSince(mark);
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(std::vector<int32_t>(changed->begin(), changed->end()), std::vector<int32_t>{1});
}

}  // namespace
}  // namespace tessera

#include "agent/sim/sim_cluster.h"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "agent/common/testing/callback_probe.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

class NullObserver final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view, TimePoint) override {}
  void OnTaskEnded(const TaskEnd&) override {}
};

Node GpuNode(std::string name, int gpus) {
  Node node;
  node.name = std::move(name);
  for (int i = 0; i < gpus; ++i) node.gpus.push_back(GpuDevice{.index = i, .model = "H100"});
  node.capacity.gpu = kMilliGpuPerDevice * gpus;
  node.allocatable = node.capacity;
  return node;
}

TEST(SimClusterTest, UsageIsTheShareOfGpusItsTasksHold) {
  ManualClock clock;
  NullObserver observer;
  SimCluster cluster({.name = "sim", .nodes = {GpuNode("a", 8), GpuNode("b", 4), GpuNode("c", 0)},
                      .clock = &clock},
                     &observer);
  TaskLaunchSpec half;
  half.launch_id = "half-a1";
  half.placement.node = "a";
  half.placement.gpus = {0, 1, 2, 3};
  half.placement.gpu_milli = 1000;
  cluster.Launch(half);
  TaskLaunchSpec shared = half;
  shared.launch_id = "shared-a1";
  shared.placement.node = "b";
  shared.placement.gpus = {0};
  shared.placement.gpu_milli = 500;
  cluster.Launch(shared);

  std::vector<NodeUsage> usage = cluster.Usage();
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage[0].node, "a");
  EXPECT_THAT(usage[0].gpu_utilization, ::testing::Each(50.0));
  EXPECT_THAT(usage[1].gpu_utilization, ::testing::Each(12.5));
  EXPECT_TRUE(usage[2].gpu_utilization.empty());  // no GPUs: nothing measured
  EXPECT_FALSE(usage[0].cpu.has_value());

  cluster.Cancel("half-a1", Duration(0));
  EXPECT_THAT(cluster.Usage()[0].gpu_utilization, ::testing::Each(0.0));
}

// The destruction contract (tessera/cluster/cluster.h): the destructor joins the timer thread
// before it returns, so nothing calls back afterwards. Each round destroys a cluster whose timer
// thread is ending its tasks.
TEST(SimClusterTest, DestroyingABusyClusterJoinsItsTimerBeforeReturning) {
  ManualClock clock;
  std::vector<std::shared_ptr<testing::CallbackProbe>> probes;
  for (int round = 0; round < 20; ++round) {
    auto probe = std::make_shared<testing::CallbackProbe>();
    probes.push_back(probe);
    auto observer = std::make_unique<testing::ProbeObserver>(probe);
    auto cluster = std::make_unique<SimCluster>(
        SimClusterOptions{.name = "sim", .nodes = {GpuNode("a", 8)}, .clock = &clock,
                          .tick = Duration(1)},
        observer.get());
    for (int task = 0; task < 200; ++task) {
      TaskLaunchSpec spec;
      spec.launch_id = fmt::format("r{}-t{}-a1", round, task);
      spec.placement.node = "a";
      spec.duration = Duration(0);  // due at once: the timer thread is ending them
      cluster->Launch(spec);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4));
    cluster.reset();
    probe->ClusterGone();
    observer.reset();  // a late observer call is a use after free under ASan
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time for a stray thread to call
  for (size_t round = 0; round < probes.size(); ++round) {
    EXPECT_EQ(probes[round]->late_calls(), 0) << "round " << round;
    EXPECT_GT(probes[round]->calls(), 0) << "round " << round << ": launches are told";
  }
}

}  // namespace
}  // namespace tessera::agent

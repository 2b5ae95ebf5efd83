// Property: whatever the profile, random node and task streams (arrivals, departures, device
// failures, cordons) never push a device, a node's cpu or memory above capacity, never place
// on a cordoned or down node or an unhealthy device, and never place a task on a GPU model it
// does not allow. Checked against usage recomputed from scratch after every step.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "sched/plugins/builtin.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
const char* const kModels[] = {"A100", "T4", "V100"};

class NullSink : public DecisionSink {
 public:
  absl::Status Bind(std::string_view, int32_t, const Placement&) override {
    return absl::OkStatus();
  }
};

Node RandomNode(Rng& rng, int i) {
  Node n;
  n.name = "node-" + std::to_string(i);
  n.capacity.cpu = n.allocatable.cpu = 1000 * static_cast<int64_t>(4 + rng.Uniform(60));
  n.capacity.memory = n.allocatable.memory = kGi * static_cast<int64_t>(8 + rng.Uniform(256));
  const int devices = static_cast<int>(rng.Uniform(5)) * 2;  // 0, 2, 4, 6, 8
  const char* model = kModels[rng.Uniform(3)];
  for (int d = 0; d < devices; ++d) n.gpus.push_back(GpuDevice{d, model, 16 * kGi});
  n.capacity.gpu = n.allocatable.gpu = 1000 * devices;
  n.capacity.gpu_memory = n.allocatable.gpu_memory = 16 * kGi * devices;
  return n;
}

TaskRequest RandomTask(Rng& rng) {
  TaskRequest t;
  t.cpu = 500 * static_cast<int64_t>(1 + rng.Uniform(16));
  t.memory = kGi * static_cast<int64_t>(1 + rng.Uniform(32));
  switch (rng.Uniform(4)) {
    case 0:  // CPU only
      break;
    case 1:  // a share of one GPU
      t.gpu_count = 1;
      t.gpu_milli = 100 * static_cast<int64_t>(1 + rng.Uniform(9));
      if (rng.Uniform(2) == 0) t.gpu_memory = kGi * static_cast<int64_t>(1 + rng.Uniform(8));
      break;
    default:  // whole GPUs
      t.gpu_count = static_cast<int32_t>(1 + rng.Uniform(4));
      t.gpu_milli = 1000;
      break;
  }
  if (t.gpu_count > 0 && rng.Uniform(3) == 0) t.gpu_models = {kModels[rng.Uniform(3)]};
  return t;
}

struct Running {
  TaskRequest task;
  Placement placement;
};

// Recomputes every node's and device's use from the running tasks and checks capacity.
void CheckInvariants(const ClusterState& state, const std::vector<Running>& running) {
  std::vector<int64_t> cpu(state.size()), memory(state.size());
  std::map<std::pair<int32_t, int32_t>, int64_t> milli, gpu_mem;
  for (const Running& r : running) {
    cpu[r.placement.node_index] += r.task.cpu;
    memory[r.placement.node_index] += r.task.memory;
    for (int32_t g : r.placement.gpus) {
      milli[{r.placement.node_index, g}] += r.placement.gpu_milli;
      gpu_mem[{r.placement.node_index, g}] += r.placement.gpu_memory;
    }
  }
  for (int32_t i = 0; i < state.size(); ++i) {
    const Node& n = state.node(i);
    ASSERT_LE(cpu[i], n.allocatable.cpu) << n.name;
    ASSERT_LE(memory[i], n.allocatable.memory) << n.name;
    ASSERT_EQ(cpu[i], n.allocated.cpu) << n.name;
    for (const GpuDevice& d : n.gpus) {
      ASSERT_LE((milli[{i, d.index}]), kMilliGpuPerDevice) << n.name << " gpu " << d.index;
      ASSERT_LE((gpu_mem[{i, d.index}]), d.memory) << n.name << " gpu " << d.index;
      ASSERT_EQ((milli[{i, d.index}]), d.used_milli) << n.name << " gpu " << d.index;
    }
  }
}

class PlacementPropertyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PlacementPropertyTest, RandomStreamsNeverOvercommit) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Rng world(seed);
    Rng sched_rng(seed * 7919);
    ManualClock clock;
    NullSink sink;
    ClusterState state;
    const int node_count = 5 + static_cast<int>(world.Uniform(40));
    for (int i = 0; i < node_count; ++i) ASSERT_TRUE(state.AddNode(RandomNode(world, i)).ok());
    TargetWorkload workload;
    for (int c = 0; c < 5; ++c) workload.classes.push_back({RandomTask(world), 0.2});
    Handle handle{&sched_rng, &clock, &workload, &sink};
    auto fw = Framework::Create(*BuiltinProfile(GetParam()), BuiltinPlugins(), handle);
    ASSERT_TRUE(fw.ok()) << fw.status();

    std::vector<Running> running;
    for (int step = 0; step < 600; ++step) {
      const uint64_t action = world.Uniform(10);
      if (action < 6) {
        TaskRequest task = RandomTask(world);
        TaskAttempt attempt = (*fw)->PlaceTask(state, task);
        ASSERT_NE(attempt.status.code(), SchedStatus::Code::kError) << attempt.status.message();
        if (!attempt.placement.has_value()) continue;
        const Placement& p = *attempt.placement;
        const Node& node = state.node(p.node_index);
        ASSERT_FALSE(node.unschedulable) << "placed on cordoned " << node.name;
        ASSERT_EQ(node.condition, NodeCondition::kReady) << "placed on down " << node.name;
        for (int32_t g : p.gpus) {
          ASSERT_TRUE(node.gpus[g].healthy) << node.name << " gpu " << g;
          ASSERT_TRUE(task.AllowsModel(node.gpus[g].model)) << node.name;
        }
        absl::Status assumed = state.Assume(task, p);
        ASSERT_TRUE(assumed.ok()) << GetParam() << " seed " << seed << ": " << assumed;
        running.push_back({task, p});
      } else if (action < 9 && !running.empty()) {
        const size_t victim = world.Uniform(running.size());
        state.Forget(running[victim].task, running[victim].placement);
        running.erase(running.begin() + static_cast<ptrdiff_t>(victim));
      } else {
        const auto i = static_cast<int32_t>(world.Uniform(state.size()));
        Node& node = state.MutableNode(i);
        switch (world.Uniform(3)) {
          case 0:
            node.unschedulable = !node.unschedulable;
            break;
          case 1:
            node.condition = node.condition == NodeCondition::kReady ? NodeCondition::kDown
                                                                     : NodeCondition::kReady;
            break;
          default:
            if (!node.gpus.empty()) {
              GpuDevice& d = node.gpus[world.Uniform(node.gpus.size())];
              d.healthy = !d.healthy;
            }
        }
      }
      CheckInvariants(state, running);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryProfile, PlacementPropertyTest,
                         ::testing::ValuesIn(BuiltinProfileNames()));

}  // namespace
}  // namespace tessera

// Tests of LeastAllocated, MostAllocated and their shared core (resource_allocation.h).
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/basic/least_allocated.h"
#include "sched/plugins/basic/most_allocated.h"
#include "sched/plugins/basic/resource_allocation.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

using ::tessera::testing::CpuNode;
using ::tessera::testing::CpuTask;
using ::tessera::testing::GpuNode;
using ::tessera::testing::GpuTask;
using ::tessera::testing::kGi;
using ::tessera::testing::UseGpu;

int64_t ScoreOf(const ScorePlugin& plugin, const TaskRequest& task, const Node& node) {
  int64_t score = -1;
  EXPECT_TRUE(plugin.Score(CycleState(), task, node, &score).ok());
  return score;
}

struct ScoreCase {
  std::string name;
  std::string resources;  // "" = the default weights
  Node node;
  TaskRequest task;
  int64_t least = 0;
  int64_t most = 0;
};

Node Used(Node node, int64_t cpu, int64_t memory) {
  node.allocated.cpu = cpu;
  node.allocated.memory = memory;
  return node;
}

std::vector<ScoreCase> Cases() {
  const Node cpu_node = CpuNode(4000, 4 * kGi);
  Node gpu_node = GpuNode(4);
  gpu_node.allocatable.cpu = 4000;
  gpu_node.allocatable.memory = 4 * kGi;
  Node rdma_node = cpu_node;
  rdma_node.allocatable.extended["rdma/hca"] = 4;
  TaskRequest rdma_task = CpuTask(0);
  rdma_task.extended["rdma/hca"] = 1;
  return {
      // A node without GPUs is judged on cpu and memory only.
      {"empty cpu node", "", cpu_node, CpuTask(1000, kGi), 75, 25},
      {"half used cpu node", "", Used(cpu_node, 1000, kGi), CpuTask(1000, kGi), 50, 50},
      {"task fills the node", "", Used(cpu_node, 3000, 3 * kGi), CpuTask(1000, kGi), 0, 100},
      {"request above allocatable", "", cpu_node, CpuTask(8000, 8 * kGi), 0, 100},
      {"empty request on an empty node", "", cpu_node, CpuTask(0), 100, 0},
      // Idle GPUs count for a cpu task: (75 + 75 + 100) / 3 and (25 + 25 + 0) / 3.
      {"cpu task on an idle gpu node", "", gpu_node, CpuTask(1000, kGi), 83, 16},
      // gpu: 2000 of 4000 milli after placing the task.
      {"gpu task", "", gpu_node, GpuTask(2), (75 + 75 + 50) / 3, (25 + 25 + 50) / 3},
      {"gpu shares count in milli", "",
       [&] {
         Node n = gpu_node;
         UseGpu(n, 0, 500);
         return n;
       }(),
       GpuTask(1, 500), (75 + 75 + 75) / 3, (25 + 25 + 25) / 3},
      // Weights: cpu 50 (least) / 50 (most), memory 100 / 0.
      {"weighted", "cpu=3,memory=1", Used(cpu_node, 1000, 0), CpuTask(1000), (50 * 3 + 100) / 4,
       (50 * 3 + 0) / 4},
      {"cpu only", "cpu=1", cpu_node, CpuTask(1000, 4 * kGi), 75, 25},
      {"extended resource", "rdma/hca=1", rdma_node, rdma_task, 75, 25},
      {"extended resource absent on the node is skipped", "rdma/hca=1,cpu=1", cpu_node,
       CpuTask(2000), 50, 50},
      {"every resource zero on the node", "gpu=1", cpu_node, CpuTask(1000), 0, 0},
      {"gpu memory", "gpu_memory=1", gpu_node, GpuTask(1, 1000, {}, 80 * kGi), 75, 25},
  };
}

class AllocationScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(AllocationScoreTest, Score) {
  const ScoreCase& c = GetParam();
  PluginArgs args;
  if (!c.resources.empty()) args[std::string(kResourcesArg)] = c.resources;
  auto least = LeastAllocated::New(args, Handle{});
  auto most = MostAllocated::New(args, Handle{});
  ASSERT_TRUE(least.ok()) << least.status();
  ASSERT_TRUE(most.ok()) << most.status();
  EXPECT_EQ(ScoreOf(dynamic_cast<const ScorePlugin&>(**least), c.task, c.node), c.least);
  EXPECT_EQ(ScoreOf(dynamic_cast<const ScorePlugin&>(**most), c.task, c.node), c.most);
}

INSTANTIATE_TEST_SUITE_P(Cases, AllocationScoreTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return testing::TestName(info.param.name); });

// Quantities near the int64 limit (a node of 200 PiB of memory, exabytes of an extended
// resource) score like small ones: the arithmetic does not overflow.
TEST(AllocationScoreTest, HugeQuantitiesDoNotOverflow) {
  constexpr int64_t kPi = int64_t{1} << 50;
  const LeastAllocated least;
  const MostAllocated most;
  TaskRequest task;
  task.cpu = 1000;
  task.memory = kGi;
  Node huge;
  huge.allocatable.cpu = huge.capacity.cpu = 4000;
  huge.allocatable.memory = huge.capacity.memory = 200 * kPi;
  Node small = huge;
  small.allocatable.memory = small.capacity.memory = 8 * kGi;
  EXPECT_GT(ScoreOf(least, task, huge), ScoreOf(least, task, small));
  EXPECT_LT(ScoreOf(most, task, huge), ScoreOf(most, task, small));

  Node full = huge;
  full.allocatable.memory = full.capacity.memory = std::numeric_limits<int64_t>::max();
  full.allocated.memory = std::numeric_limits<int64_t>::max();
  // Memory saturates at fully used: cpu 25% used after placing, memory 100%.
  EXPECT_EQ(ScoreOf(most, task, full), (25 + 100) / 2);
  EXPECT_EQ(ScoreOf(least, task, full), (75 + 0) / 2);
}

// Over a row of nodes from empty to nearly full, LeastAllocated ranks emptier nodes strictly
// higher and MostAllocated ranks fuller nodes strictly higher.
TEST(AllocationScoreTest, OrderingFollowsUse) {
  const LeastAllocated least;
  const MostAllocated most;
  const TaskRequest task = GpuTask(1, 1000);
  int64_t prev_least = kMaxNodeScore + 1;
  int64_t prev_most = kMinNodeScore - 1;
  for (int used = 0; used < 4; ++used) {
    Node node = GpuNode(8);
    node.allocated.cpu = used * 4000;
    node.allocated.memory = used * 32 * kGi;
    for (int d = 0; d < used * 2; ++d) UseGpu(node, d, 1000);
    const int64_t l = ScoreOf(least, task, node);
    const int64_t m = ScoreOf(most, task, node);
    EXPECT_LT(l, prev_least) << "used " << used;
    EXPECT_GT(m, prev_most) << "used " << used;
    EXPECT_GE(l, kMinNodeScore);
    EXPECT_LE(m, kMaxNodeScore);
    prev_least = l;
    prev_most = m;
  }
}

TEST(ResourceWeightsTest, ParsesValidLists) {
  auto weights = ParseResourceWeights("P", " cpu = 2 , memory=1,, rdma/hca=100 ");
  ASSERT_TRUE(weights.ok()) << weights.status();
  ASSERT_EQ(weights->size(), 3u);
  EXPECT_EQ((*weights)[0].kind, WeightedResource::Kind::kCpu);
  EXPECT_EQ((*weights)[0].weight, 2);
  EXPECT_EQ((*weights)[1].kind, WeightedResource::Kind::kMemory);
  EXPECT_EQ((*weights)[2].kind, WeightedResource::Kind::kExtended);
  EXPECT_EQ((*weights)[2].name, "rdma/hca");
  EXPECT_EQ((*weights)[2].weight, 100);
}

TEST(ResourceWeightsTest, DefaultIsCpuMemoryGpu) {
  const ResourceWeights weights = DefaultResourceWeights();
  ASSERT_EQ(weights.size(), 3u);
  EXPECT_EQ(weights[0].name, "cpu");
  EXPECT_EQ(weights[1].name, "memory");
  EXPECT_EQ(weights[2].name, "gpu");
}

struct BadWeights {
  std::string text;
  std::string message;
};

class ResourceWeightsErrorTest : public ::testing::TestWithParam<BadWeights> {};

TEST_P(ResourceWeightsErrorTest, RejectsWithAClearMessage) {
  auto weights = ParseResourceWeights("LeastAllocated", GetParam().text);
  ASSERT_FALSE(weights.ok());
  EXPECT_EQ(weights.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(weights.status().message()),
              ::testing::AllOf(::testing::StartsWith("LeastAllocated: resources: "),
                               ::testing::HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResourceWeightsErrorTest,
    ::testing::Values(BadWeights{"", "at least one resource"},
                      BadWeights{" , ", "at least one resource"},
                      BadWeights{"cpu", "\"cpu\": want name=weight"},
                      BadWeights{"=1", "empty resource name"}, BadWeights{"cpu=0", "[1, 100]"},
                      BadWeights{"cpu=101", "[1, 100]"}, BadWeights{"cpu=x", "[1, 100]"},
                      BadWeights{"cpu=", "[1, 100]"}, BadWeights{"cpu=1.5", "[1, 100]"},
                      BadWeights{"cpu=1,cpu=2", "\"cpu=2\": resource listed twice"}));

TEST(AllocationScoreTest, FactoriesRejectUnknownArguments) {
  for (auto factory : {&LeastAllocated::New, &MostAllocated::New}) {
    auto plugin = factory({{"resource", "cpu=1"}}, Handle{});
    ASSERT_FALSE(plugin.ok());
    EXPECT_THAT(std::string(plugin.status().message()),
                ::testing::HasSubstr("unknown argument \"resource\" (accepted: resources)"));
  }
}

TEST(AllocationScoreTest, FactoriesRejectBadWeights) {
  EXPECT_EQ(LeastAllocated::New({{"resources", "cpu=-1"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MostAllocated::New({{"resources", "gpu"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera

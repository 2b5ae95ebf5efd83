#include "sched/plugins/gpushare/fgd_cpu.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/gpushare/fgd.h"
#include "sched/plugins/gpushare/test_util.h"
#include "tessera/common/rng.h"

namespace tessera::gpushare {
namespace {

using testing::CpuTask;
using ::testing::ElementsAre;
using testing::GpuTask;
using testing::MakeNode;
using testing::Workload;

// The CPU-aware measure of a whole node, from a fresh evaluation.
double CpuAwareOf(const Node& node, const PreparedWorkload& w) {
  return NodeFragmentationDelta(node, w).CpuAwareBefore(kFgdCpuStrandedWeight);
}

TEST(FgdCpuTest, ScoreOfUsesTheWiderSigmoid) {
  EXPECT_EQ(FgdCpuScoreOf(1000, 1000), 50);
  EXPECT_EQ(FgdCpuScoreOf(0, 5000), 26);  // 100 * sigmoid(-1) = 26.89
  EXPECT_EQ(FgdCpuScoreOf(5000, 0), 73);  // 100 * sigmoid(1) = 73.11
  EXPECT_EQ(FgdCpuScoreOf(0, 1000), 45);  // FGD's scale would give 26
}

TEST(FgdCpuTest, CountsGpusThatTheFreeCpuCannotFeedAsStranded) {
  // One class, one GPU and 11 cores. 8 free GPUs and 12 free cores: one copy fits, so the
  // paper's measure counts nothing, while 7 GPUs are stranded: 0.75 * 7000.
  const PreparedWorkload w(Workload({{GpuTask(11000, 1, 1000), 1.0}}));
  const Node node = MakeNode(12000, std::vector<int64_t>(8, 1000));
  EXPECT_EQ(NodeFragmentation(node, w), 0);
  EXPECT_DOUBLE_EQ(CpuAwareOf(node, w), 0.75 * 7000);
  // With 88 free cores, 8 copies fit: nothing is stranded.
  EXPECT_DOUBLE_EQ(CpuAwareOf(MakeNode(88000, std::vector<int64_t>(8, 1000)), w), 0);
  // Sharing class: 4 cores and half a GPU; 8 cores feed 2 copies, 1000 of the 2000 free.
  const PreparedWorkload shares(Workload({{GpuTask(4000, 1, 500), 1.0}}));
  EXPECT_DOUBLE_EQ(CpuAwareOf(MakeNode(8000, {1000, 1000}), shares), 0.75 * 1000);
  // A class without cpu is never capped.
  const PreparedWorkload no_cpu(Workload({{GpuTask(0, 1, 500), 1.0}}));
  EXPECT_DOUBLE_EQ(CpuAwareOf(MakeNode(0, {1000, 1000}), no_cpu), 0);
}

TEST(FgdCpuTest, WithoutWeightTheMeasureIsThePapers) {
  Rng rng(11);
  const std::vector<int64_t> shares = {100, 250, 500, 700, 1000};
  for (int round = 0; round < 300; ++round) {
    TargetWorkload workload;
    for (int i = 0; i < 5; ++i) {
      const int64_t share = shares[rng.Uniform(shares.size())];
      const int32_t count = share < 1000 ? 1 : static_cast<int32_t>(1 + rng.Uniform(4));
      workload.classes.push_back(
          {GpuTask(4000 * static_cast<int64_t>(rng.Uniform(5)), count, share), 0.15});
    }
    workload.classes.push_back({CpuTask(8000), 0.25});
    const PreparedWorkload prepared(workload);
    std::vector<int64_t> free;
    for (int i = 0; i < 8; ++i) free.push_back(50 * static_cast<int64_t>(rng.Uniform(21)));
    const Node node = MakeNode(16000 * static_cast<int64_t>(rng.Uniform(7)), free);
    const NodeFragmentationDelta eval(node, prepared);
    EXPECT_NEAR(eval.CpuAwareBefore(0), eval.Before(), 1e-6) << "round " << round;
    EXPECT_GE(eval.CpuAwareBefore(kFgdCpuStrandedWeight), eval.Before() - 1e-6);
  }
}

TEST(FgdCpuTest, CpuOnlyTaskGoesWhereItStrandsNoGpu) {
  // A 40-core CPU-only task on an 8-GPU node with 96 cores leaves 56 cores: 5 copies of the
  // 11-core class instead of 8, 3 GPUs stranded (delta 2250, score 38). On a 2-GPU node with 104
  // cores the 64 cores left still feed both GPUs (score 50). FGD scores both 50.
  const PreparedWorkload w(Workload({{GpuTask(11000, 1, 1000), 1.0}}));
  const Node eight = MakeNode(96000, std::vector<int64_t>(8, 1000));
  const Node two = MakeNode(104000, {1000, 1000});
  EXPECT_EQ(EvaluateFgdCpu(CpuTask(40000), eight, w).score, 38);
  EXPECT_EQ(EvaluateFgdCpu(CpuTask(40000), two, w).score, 50);
  EXPECT_EQ(EvaluateFgd(CpuTask(40000), eight, w).score, 50);
  EXPECT_EQ(EvaluateFgd(CpuTask(40000), two, w).score, 50);
}

TEST(FgdCpuTest, PropertyScoreIsTheBestDeviceByTheDefinition) {
  Rng rng(5);
  const std::vector<int64_t> shares = {100, 200, 250, 300, 500, 600, 800, 1000};
  for (int round = 0; round < 500; ++round) {
    TargetWorkload workload;
    for (int i = 0; i < 6; ++i) {
      const int64_t share = shares[rng.Uniform(shares.size())];
      const int32_t count = share < 1000 ? 1 : static_cast<int32_t>(1 + rng.Uniform(4));
      workload.classes.push_back(
          {GpuTask(4000 * static_cast<int64_t>(rng.Uniform(5)), count, share), 0.1});
    }
    workload.classes.push_back({CpuTask(8000), 0.4});
    const PreparedWorkload prepared(workload);
    std::vector<int64_t> free;
    for (int i = 0; i < 8; ++i) free.push_back(50 * static_cast<int64_t>(rng.Uniform(21)));
    const Node node = MakeNode(16000 * static_cast<int64_t>(rng.Uniform(7)), free);
    const TaskRequest task = GpuTask(4000, 1, 50 * static_cast<int64_t>(1 + rng.Uniform(19)));

    const double before = CpuAwareOf(node, prepared);
    int64_t best = -1;
    int32_t best_device = -1;
    for (int32_t d = 0; d < 8; ++d) {
      if (node.gpus[d].FreeMilli() < task.gpu_milli) continue;
      Node after = node;
      after.allocated.cpu += task.cpu;
      after.gpus[d].used_milli += task.gpu_milli;
      const int64_t s = FgdCpuScoreOf(before, CpuAwareOf(after, prepared));
      if (s > best) {
        best = s;
        best_device = d;
      }
    }
    const FgdChoice choice = EvaluateFgdCpu(task, node, prepared);
    if (best_device < 0) {
      EXPECT_TRUE(choice.devices.empty()) << "round " << round;
      continue;
    }
    EXPECT_EQ(choice.score, best) << "round " << round;
    EXPECT_THAT(choice.devices, ElementsAre(best_device)) << "round " << round;
  }
}

TEST(FgdCpuTest, FactoryNeedsATargetWorkloadAndNoArguments) {
  Handle handle;
  EXPECT_EQ(FgdCpu::New({}, handle).status().code(), absl::StatusCode::kFailedPrecondition);
  const TargetWorkload bad = Workload({{GpuTask(0, 1, 500), 1.5}});
  handle.target_workload = &bad;
  EXPECT_THAT(FgdCpu::New({}, handle).status().message(),
              ::testing::HasSubstr("FGD-CPU: target_workload.classes[0].probability"));
  const TargetWorkload good = Workload({{GpuTask(0, 1, 500), 1.0}});
  handle.target_workload = &good;
  EXPECT_EQ(FgdCpu::New({{"scale", "1"}}, handle).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<Plugin>> plugin = FgdCpu::New({}, handle);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "FGD-CPU");
}

TEST(FgdCpuTest, ReservePlacesOnTheScoredDeviceAndFollowsANewWorkload) {
  // Free [1000, 500]: for a whole-GPU workload a 500 task on device 1 leaves nothing unusable.
  const Node node = MakeNode(64000, {1000, 500});
  const TaskRequest task = GpuTask(0, 1, 500);
  Fgd plugin(FgdCpu::kName, kFgdCpuMeasure, Workload({{GpuTask(0, 1, 1000), 1.0}}));
  CycleState state;
  Placement placement;
  ASSERT_TRUE(plugin.Reserve(state, task, node, &placement).ok());
  EXPECT_THAT(placement.gpus, ElementsAre(1));
  EXPECT_EQ(placement.gpu_milli, 500);
  // An empty workload scores every device alike: the lowest index wins.
  ASSERT_TRUE(plugin.SetTargetWorkload(TargetWorkload{}).ok());
  Placement again;
  ASSERT_TRUE(plugin.Reserve(state, task, node, &again).ok());
  EXPECT_THAT(again.gpus, ElementsAre(0));
  EXPECT_EQ(plugin.SetTargetWorkload(Workload({{task, -1.0}})).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::gpushare

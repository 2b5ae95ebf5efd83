#include "sim/alibaba/packing_bound.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "sim/alibaba/expected_results.h"
#include "sim/alibaba/paper_runner.h"
#include "sim/alibaba/test_traces.h"

namespace tessera::sim::alibaba {
namespace {

using testing::kPodHeader;
using testing::kTestNodes;
using testing::MakeInput;

TEST(PackingBoundTest, NoTwoTasksOfMoreThanHalfANodesCpuShareANode) {
  // One 2-GPU node with 8 cores; two 1-GPU tasks of 6 cores each. Only one can ever run: at
  // 100% arrived, half of the GPUs stay unallocated whatever the policy.
  auto input = MakeInput("sn,cpu_milli,memory_mib,gpu,model\nn0,8000,65536,2,T4\n",
                         std::string(kPodHeader) +
                             "p0,6000,1024,1,1000,,LS,Running,0,100,0\n"
                             "p1,6000,1024,1,1000,,LS,Running,0,100,0\n");
  absl::StatusOr<PackingBound> bound = ComputePackingBound(*input, 42, /*inflate=*/0);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->prefix_arrivals, 2);
  EXPECT_EQ(bound->prefix_gpu_milli, 2000);
  EXPECT_NEAR(bound->max_allocated_milli, 1000, 2);
  EXPECT_NEAR(bound->unallocated_pct_at_100, 50, 0.2);  // the optimum is rounded up
  for (const std::string& policy : AllPolicies()) {
    absl::StatusOr<PaperRunResult> run =
        RunPaperExperiment(*input, {.policy = policy, .seed = 42, .inflate = 0});
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_LE(bound->unallocated_pct_at_100, 100 - run->gpu_allocation.At(100)) << policy;
  }
}

TEST(PackingBoundTest, IsBelowEveryPolicyForEverySeed) {
  const std::string pods = std::string(kPodHeader) +
                           "p0,4000,1024,2,1000,,LS,Running,0,100,0\n"
                           "p1,2000,1024,1,500,,LS,Running,10,50,10\n"
                           "p2,2000,1024,1,500,T4,LS,Running,20,80,20\n"
                           "p3,8000,2048,1,1000,,LS,Running,30,90,30\n"
                           "p4,30000,4096,1,700,,LS,Running,40,60,40\n"
                           "p5,1000,512,0,0,,BE,Running,50,70,50\n";
  auto input = MakeInput(kTestNodes, pods);
  int32_t compared = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    absl::StatusOr<PackingBound> bound = ComputePackingBound(*input, seed, 1.3);
    ASSERT_TRUE(bound.ok()) << bound.status();
    for (const std::string& policy : AllPolicies()) {
      absl::StatusOr<PaperRunResult> run =
          RunPaperExperiment(*input, {.policy = policy, .seed = seed, .inflate = 1.3});
      ASSERT_TRUE(run.ok()) << run.status();
      // On 12 GPUs one task moves the arrived share by 4% or more: some seeds have no sample
      // near 100%, and then neither has a value.
      ASSERT_EQ(std::isnan(bound->unallocated_pct_at_100), !run->gpu_allocation.Has(100)) << seed;
      if (!run->gpu_allocation.Has(100)) continue;
      EXPECT_LE(bound->unallocated_pct_at_100, 100 - run->gpu_allocation.At(100))
          << policy << " seed " << seed;
      ++compared;
    }
  }
  EXPECT_GT(compared, 30);
}

TEST(PackingBoundTest, IsMissingWhenTheRunNeverReachesAFullCluster) {
  auto input =
      MakeInput(kTestNodes, std::string(kPodHeader) + "p0,4000,1024,1,1000,,LS,Running,0,100,0\n");
  absl::StatusOr<PackingBound> bound = ComputePackingBound(*input, 1, /*inflate=*/0);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_TRUE(std::isnan(bound->unallocated_pct_at_100));
  EXPECT_TRUE(std::isnan(MedianBound({})));
}

}  // namespace
}  // namespace tessera::sim::alibaba

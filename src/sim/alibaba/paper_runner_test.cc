#include "sim/alibaba/paper_runner.h"

#include <atomic>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/alibaba/cluster_metrics.h"
#include "sim/alibaba/sim_wiring.h"
#include "sim/alibaba/sweep.h"
#include "sim/alibaba/test_traces.h"

namespace tessera::sim::alibaba {
namespace {

using ::testing::HasSubstr;
using testing::kPodHeader;
using testing::kTestNodes;
using testing::MakeInput;

// 12 GPUs in the test cluster. The pods ask for 2 + 0.5 + 0.5 + 1 + 8 = 12 GPUs, one of them only
// a T4 can take, and a CPU-only task.
std::string Pods() {
  return std::string(kPodHeader) +
         "p0,4000,1024,2,1000,,LS,Running,0,100,0\n"
         "p1,2000,1024,1,500,,LS,Running,10,50,10\n"
         "p2,2000,1024,1,500,T4,LS,Running,20,80,20\n"
         "p3,8000,2048,1,1000,,LS,Running,30,90,30\n"
         "p4,16000,4096,8,1000,G2,LS,Running,40,60,40\n"
         "p5,1000,512,0,0,,BE,Running,50,70,50\n";
}

TEST(PaperRunnerTest, PlacesEveryTaskOnceAndSamplesEveryArrival) {
  auto input = MakeInput(kTestNodes, Pods());
  PaperRunOptions options;
  options.policy = "bestfit";
  options.inflate = 0;  // the trace as it is
  options.keep_samples = true;
  absl::StatusOr<PaperRunResult> r = RunPaperExperiment(*input, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->arrived_tasks, 6);
  ASSERT_EQ(r->samples.size(), 6u);
  EXPECT_EQ(r->arrived_gpu_milli, 12000);
  // The last arrival has brought all 12 GPUs of requests.
  EXPECT_DOUBLE_EQ(r->samples.back().arrived_pct, 100.0);
  // Placed and failed tasks account for every arrival, and allocation for every placed request.
  int64_t placed = 0;
  for (const ArrivalSample& s : r->samples) placed += s.placed;
  EXPECT_EQ(placed + r->failed_tasks, 6);
  EXPECT_NEAR(r->final_gpu_alloc_pct,
              100.0 * static_cast<double>(r->arrived_gpu_milli - r->failed_gpu_milli) / 12000.0,
              1e-9);
  EXPECT_DOUBLE_EQ(r->gpu_allocation.At(100), r->samples.back().gpu_alloc_pct);
}

TEST(PaperRunnerTest, SameSeedGivesTheSameRun) {
  auto input = MakeInput(kTestNodes, Pods());
  PaperRunOptions options;
  options.policy = "fgd";
  options.inflate = 1.3;
  options.keep_samples = true;
  auto a = RunPaperExperiment(*input, options);
  auto b = RunPaperExperiment(*input, options);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->samples.size(), b->samples.size());
  for (size_t i = 0; i < a->samples.size(); ++i) {
    EXPECT_EQ(a->samples[i].arrived_pct, b->samples[i].arrived_pct);
    EXPECT_EQ(a->samples[i].frag_milli, b->samples[i].frag_milli);
  }
  EXPECT_GT(a->clones, 0);
  EXPECT_EQ(a->arrived_tasks, 6 + a->clones);
}

TEST(SweepTest, ExpectedArrivalsIsTheExactTotalOverSeedsAndPolicies) {
  auto input = MakeInput(kTestNodes, Pods());
  SweepOptions sweep;
  sweep.policies = {"fgd", "bestfit"};
  sweep.seeds = {1, 2, 3, 4, 5, 6, 7, 8};
  sweep.inflate = 2.7;  // clones drawn per seed: the seeds' sizes differ
  sweep.threads = 2;
  std::atomic<int64_t> progress{0};
  sweep.progress = &progress;
  absl::StatusOr<std::vector<PaperRunResult>> runs = RunSweep(*input, sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  int64_t arrived = 0;
  std::set<int64_t> sizes;
  for (const PaperRunResult& r : *runs) {
    arrived += r.arrived_tasks;
    sizes.insert(r.arrived_tasks);
  }
  EXPECT_GT(sizes.size(), 1u) << "the test needs seeds whose inflated sizes differ";
  EXPECT_EQ(ExpectedArrivals(*input, sweep), arrived);
  EXPECT_EQ(progress.load(), arrived);
}

TEST(PaperRunnerTest, UnknownPolicyIsInvalidArgument) {
  auto input = MakeInput(kTestNodes, Pods());
  PaperRunOptions options;
  options.policy = "nonsense";
  auto r = RunPaperExperiment(*input, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nonsense"));
}

TEST(PaperRunnerTest, CountsFailuresByKindAndReason) {
  // Two 8-GPU tasks: only one G2 node exists.
  auto input = MakeInput(kTestNodes, std::string(kPodHeader) +
                                         "big0,1000,1024,8,1000,,LS,Running,0,1,0\n"
                                         "big1,1000,1024,8,1000,,LS,Running,0,1,0\n");
  PaperRunOptions options;
  options.policy = "packing";
  options.inflate = 0;
  auto r = RunPaperExperiment(*input, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->failed_tasks, 1);
  EXPECT_EQ(r->failed_by_kind.at("8-gpu"), 1);
  EXPECT_EQ(r->failed_by_reason.size(), 1u);
  EXPECT_EQ(r->failed_gpu_milli, 8000);
}

TEST(ClusterMetricsTest, IncrementalFragmentationEqualsAFullMeasure) {
  auto input = MakeInput(kTestNodes, Pods());
  std::vector<int32_t> order = {0, 1, 2, 3};
  auto wiring =
      SimWiring::Create(input->nodes.nodes, order, "fgd", input->target, std::make_unique<Rng>(1));
  ASSERT_TRUE(wiring.ok()) << wiring.status();
  ClusterMetrics metrics(*wiring->state, *input->prepared);
  for (const TraceTask& t : input->pods.tasks) {
    TaskAttempt a = wiring->framework->PlaceTask(*wiring->state, t.request);
    if (!a.status.ok()) continue;
    ASSERT_TRUE(wiring->state->Assume(t.request, *a.placement).ok());
    metrics.NodeChanged(a.placement->node_index);
    const gpushare::ClusterFragmentation full =
        gpushare::MeasureCluster(wiring->state->nodes(), *input->prepared);
    EXPECT_NEAR(metrics.FragmentMilli(), full.FragmentMilli(), 1e-6);
    EXPECT_EQ(metrics.FreeGpuMilli(), full.free_milli);
  }
  EXPECT_GT(metrics.GpuAllocationPct(), 0);
  EXPECT_GT(metrics.CpuAllocationPct(), 0);
  EXPECT_GT(metrics.MemoryAllocationPct(), 0);
}

TEST(SweepTest, ResultsComeInPolicySeedOrderWhateverTheThreads) {
  auto input = MakeInput(kTestNodes, Pods());
  SweepOptions options;
  options.policies = {"fgd", "random"};
  options.seeds = {1, 2, 3};
  options.threads = 1;
  auto one = RunSweep(*input, options);
  options.threads = 3;
  auto three = RunSweep(*input, options);
  ASSERT_TRUE(one.ok() && three.ok());
  ASSERT_EQ(one->size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ((*one)[i].policy, options.policies[i / 3]);
    EXPECT_EQ((*one)[i].seed, options.seeds[i % 3]);
    EXPECT_EQ((*three)[i].policy, (*one)[i].policy);
    EXPECT_EQ((*three)[i].final_frag_pct, (*one)[i].final_frag_pct);
  }
  const std::vector<PolicySummary> s = SummarizeByPolicy(*one);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].policy, "fgd");
  EXPECT_EQ(s[0].runs, 3);
  EXPECT_GT(ExpectedArrivals(*input, options), 0);
}

TEST(SweepTest, ParsesOneSeed) {
  EXPECT_EQ(*ParseSeed("0", "--seed"), 0u);
  EXPECT_EQ(*ParseSeed("18446744073709551615", "--seed"), 18446744073709551615u);
  for (const char* bad : {"", "-1", "+1", "1.5", "1e3", "0x10", " 1", "99999999999999999999999"}) {
    auto r = ParseSeed(bad, "--seed");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("--seed: ")) << bad;
  }
  EXPECT_THAT(std::string(ParseSeed("99999999999999999999999", "--seed").status().message()),
              HasSubstr("out of range"));
}

TEST(SweepTest, ParsesSeedLists) {
  EXPECT_EQ(*ParseSeedList("42-45"), (std::vector<uint64_t>{42, 43, 44, 45}));
  EXPECT_EQ(*ParseSeedList("7"), (std::vector<uint64_t>{7}));
  EXPECT_EQ(*ParseSeedList("1,5-6"), (std::vector<uint64_t>{1, 5, 6}));
  EXPECT_EQ(*ParseSeedList("18446744073709551614-18446744073709551615"),
            (std::vector<uint64_t>{18446744073709551614u, 18446744073709551615u}));
  for (const char* bad : {"", ",", "x", "5-3", "1-", "-1", "-5", "1,,2", "0-9999999", "+3", " 3",
                          "18446744073709551616", "99999999999999999999999", "1,2,1", "1-3,2"}) {
    auto r = ParseSeedList(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("--seeds"));
  }
}

}  // namespace
}  // namespace tessera::sim::alibaba

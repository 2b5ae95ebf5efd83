#include "sim/alibaba/replay_runner.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/alibaba/test_traces.h"

namespace tessera::sim::alibaba {
namespace {

using ::testing::HasSubstr;
using testing::kPodHeader;
using testing::MakeInput;

constexpr std::string_view kOneNode =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "node-a,32000,65536,2,T4\n";

TEST(ReplayTest, ATaskThatDoesNotFitWaitsUntilCapacityFrees) {
  // a and b take both GPUs from t=0 to 100 and 0 to 200; c arrives at 10, waits for a's GPU,
  // starts at 100 and holds it for 50 s (its own deletion - scheduled); huge never fits.
  auto input = MakeInput(kOneNode, std::string(kPodHeader) +
                                       "a,1000,1024,1,1000,,LS,Succeeded,0,100,0\n"
                                       "b,1000,1024,1,1000,,LS,Succeeded,0,200,0\n"
                                       "c,1000,1024,1,1000,,LS,Succeeded,10,70,20\n"
                                       "huge,1000,1024,4,1000,,LS,Pending,5,6,\n");
  ReplayOptions options;
  options.policy = "fgd";
  options.sample_interval = std::chrono::seconds(25);
  absl::StatusOr<ReplayResult> r = RunReplay(*input, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->submitted, 4);
  EXPECT_EQ(r->placed_on_arrival, 2);
  EXPECT_EQ(r->placed_after_wait, 1);
  EXPECT_EQ(r->failed, 1);
  EXPECT_EQ(r->still_pending, 0);
  EXPECT_EQ(r->completed, 3);
  EXPECT_DOUBLE_EQ(r->wait_p50_s, 90);  // submitted at 10, placed at 100
  EXPECT_DOUBLE_EQ(r->simulated_seconds, 200);
  // Samples every 25 s: both GPUs busy until 150 (c runs 100..150), one until 200.
  ASSERT_GE(r->samples.size(), 8u);
  EXPECT_DOUBLE_EQ(r->samples[0].time_s, 0);
  EXPECT_DOUBLE_EQ(r->samples[1].gpu_alloc_pct, 100);  // t = 25
  EXPECT_EQ(r->samples[1].pending, 1);
  EXPECT_DOUBLE_EQ(r->samples[4].gpu_alloc_pct, 100);  // t = 100: c took a's GPU
  EXPECT_EQ(r->samples[4].pending, 0);
  EXPECT_DOUBLE_EQ(r->samples[6].gpu_alloc_pct, 50);  // t = 150
  EXPECT_DOUBLE_EQ(r->samples.back().gpu_alloc_pct, 0);
}

TEST(ReplayTest, TimeMeansAreExactWhateverTheSampleInterval) {
  // Both GPUs busy 0..150 (a 0..100, then c 100..150; b 0..200), one 150..200:
  // (150 x 100% + 50 x 50%) / 200 s = 87.5%.
  auto input = MakeInput(kOneNode, std::string(kPodHeader) +
                                       "a,1000,1024,1,1000,,LS,Succeeded,0,100,0\n"
                                       "b,1000,1024,1,1000,,LS,Succeeded,0,200,0\n"
                                       "c,1000,1024,1,1000,,LS,Succeeded,10,70,20\n");
  for (const Duration interval : {Duration(std::chrono::milliseconds(1)),
                                  Duration(std::chrono::seconds(7)),
                                  Duration(std::chrono::seconds(25)),
                                  Duration(std::chrono::hours(1))}) {
    ReplayOptions options;
    options.sample_interval = interval;
    absl::StatusOr<ReplayResult> r = RunReplay(*input, options);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_DOUBLE_EQ(r->gpu_alloc_time_mean_pct, 87.5) << interval.count();
    EXPECT_DOUBLE_EQ(r->frag_ratio_time_mean_pct, 0) << interval.count();
    EXPECT_DOUBLE_EQ(r->gpu_alloc_peak_pct, 100) << interval.count();
  }
}

TEST(ReplayTest, TasksWithoutDeletionHoldTheirResourcesToTheEnd) {
  auto input = MakeInput(kOneNode, std::string(kPodHeader) +
                                       "a,1000,1024,1,500,,LS,Running,0,,0\n"
                                       "b,1000,1024,1,1000,,LS,Running,50,60,50\n");
  auto r = RunReplay(*input, ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->completed, 1);
  EXPECT_DOUBLE_EQ(r->samples.back().gpu_alloc_pct, 25);
}

TEST(ReplayTest, NeedsTimes) {
  auto input = MakeInput(kOneNode, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1000\n");
  auto r = RunReplay(*input, ReplayOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("use --mode paper"));
}

TEST(ReplayTest, SameSeedSameRun) {
  auto input = MakeInput(testing::kTestNodes, std::string(kPodHeader) +
                                                  "a,1000,1024,1,300,,LS,Running,0,100,0\n"
                                                  "b,1000,1024,1,300,,LS,Running,5,30,6\n"
                                                  "c,1000,1024,2,1000,,LS,Running,7,90,7\n"
                                                  "d,9000,1024,0,0,,LS,Running,8,95,8\n");
  ReplayOptions options;
  options.policy = "random";
  options.seed = 3;
  options.sample_interval = std::chrono::seconds(10);
  auto a = RunReplay(*input, options);
  auto b = RunReplay(*input, options);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->samples.size(), b->samples.size());
  for (size_t i = 0; i < a->samples.size(); ++i) {
    EXPECT_EQ(a->samples[i].frag_pct, b->samples[i].frag_pct);
  }
}

}  // namespace
}  // namespace tessera::sim::alibaba

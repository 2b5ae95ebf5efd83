#include "sim/swf/swf_run.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sim::swf {
namespace {

using ::testing::HasSubstr;

TEST(SwfRunTest, ParsesModes) {
  struct Case {
    std::string backfill;
    bool fifo;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      {"all", false, {"fcfs", "easy", "conservative"}},
      {"none", false, {"none"}},
      {"none", true, {"fcfs"}},
      {"easy,conservative", false, {"easy", "conservative"}},
      {"easy,none", true, {"easy+fifo", "fcfs"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.backfill);
    absl::StatusOr<std::vector<SwfMode>> modes = ParseSwfModes(c.backfill, c.fifo);
    ASSERT_TRUE(modes.ok()) << modes.status();
    std::vector<std::string> names;
    for (const SwfMode& m : *modes) names.push_back(m.name);
    EXPECT_EQ(names, c.names);
  }
  absl::StatusOr<std::vector<SwfMode>> all = ParseSwfModes("all", false);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].backfill, BackfillMode::kNone);
  EXPECT_EQ((*all)[0].ordering, QueueOrdering::kStrictFifo);
  EXPECT_EQ((*all)[1].backfill, BackfillMode::kEasy);
  EXPECT_EQ((*all)[1].ordering, QueueOrdering::kBestEffortFifo);
  EXPECT_EQ((*all)[2].backfill, BackfillMode::kConservative);
}

TEST(SwfRunTest, BadModesNameTheFlag) {
  const std::vector<std::pair<std::pair<std::string, bool>, std::string>> cases = {
      {{"", false}, "--backfill: unknown mode ''"},
      {{"fast", false}, "--backfill: unknown mode 'fast'"},
      {{"easy,", false}, "--backfill: unknown mode '' in 'easy,'"},
      {{"easy,easy", false}, "--backfill: mode 'easy' given twice"},
      {{"all,easy", false}, "--backfill: unknown mode 'all'"},
      {{"all", true}, "--fifo:"},
  };
  for (const auto& [input, message] : cases) {
    absl::StatusOr<std::vector<SwfMode>> modes = ParseSwfModes(input.first, input.second);
    ASSERT_FALSE(modes.ok()) << input.first;
    EXPECT_THAT(modes.status().message(), HasSubstr(message));
  }
}

// 4 one-processor nodes. job-1 (3 procs, 100 s) runs first; job-2 (4 procs) must wait for it;
// job-3 (1 proc) arrives at 20 s, fits beside job-1 at once and runs `run3` seconds.
std::string Log(int run3) {
  return "; MaxNodes: 4\n; MaxProcs: 4\n"
         "1  0 -1 100 3 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
         "2 10 -1 100 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n" +
         fmt::format("3 20 -1 {} 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n", run3);
}

TEST(SwfRunTest, RunsAModeAndMeasuresIt) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(Log(10), "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<SwfMode>> none = ParseSwfModes("none", false);
  ASSERT_TRUE(none.ok());
  absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, "t.swf", {}, none->front());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode.name, "none");
  EXPECT_EQ(r->truncated_after, 0);
  EXPECT_TRUE(r->starts_after_submit);
  EXPECT_EQ(r->stats.total_processors, 4);
  const SwfMetrics& m = r->metrics;
  EXPECT_EQ(m.jobs, 3);
  EXPECT_EQ(m.completed, 3);
  // job-1 0..100, job-2 100..200 (waits 90 s), job-3 20..30: greedy start of what fits.
  EXPECT_DOUBLE_EQ(m.mean_wait_s, 30);
  EXPECT_DOUBLE_EQ(m.makespan_s, 200);
  EXPECT_DOUBLE_EQ(m.utilisation, (300.0 + 400.0 + 10.0) / (4 * 200.0));
  EXPECT_DOUBLE_EQ(m.mean_bounded_slowdown, (1 + 190.0 / 100.0 + 1) / 3);
}

// One node of 4 cpus. job-1 (3 procs) runs 0..100 s; job-2 (2 procs) is blocked until 100 s,
// job-3 (4 procs) until job-2 ends; job-4 (1 proc, 250 s) fits at once at 20 s.
constexpr std::string_view kTwoBlocked =
    "; MaxNodes: 1\n; MaxProcs: 4\n"
    "1  0 -1 100 3 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2 10 -1 100 2 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "3 15 -1  50 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "4 20 -1 250 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";

TEST(SwfRunTest, ModesOrderAndBackfillAsDefined) {
  struct Case {
    std::string what;
    std::string log;
    std::string backfill;
    bool fifo;
    double mean_wait_s;
    double makespan_s;
  };
  const std::vector<Case> cases = {
      // A short job-3 ends (30 s) before job-2's reservation (100 s): every mode but fcfs starts
      // it at once. fcfs holds it behind job-2: it starts at 200 s (waits 0, 90, 180).
      {"short, fcfs", Log(10), "none", true, 90, 210},
      {"short, none", Log(10), "none", false, 30, 200},
      {"short, easy", Log(10), "easy", false, 30, 200},
      {"short, conservative", Log(10), "conservative", false, 30, 200},
      // A long job-3 (ends at 220 s) would delay job-2's reservation: backfill keeps it back
      // until job-2 ends at 200 s; greedy 'none' starts it at once and job-2 waits until 220 s.
      {"long, fcfs", Log(200), "none", true, 90, 400},
      {"long, none", Log(200), "none", false, 70, 320},
      {"long, easy", Log(200), "easy", false, 90, 400},
      {"long, conservative", Log(200), "conservative", false, 90, 400},
      // EASY protects only job-2 (job-4 leaves it room at 100 s): job-4 runs 20..270 s, job-2
      // 100..200, job-3 270..320 (waits 0, 90, 255, 0). Conservative also protects job-3's
      // reservation at 200 s: job-4 waits for job-3 to end at 250 s (waits 0, 90, 185, 230),
      // as fcfs does.
      {"two blocked, fcfs", std::string(kTwoBlocked), "none", true, 126.25, 500},
      {"two blocked, easy", std::string(kTwoBlocked), "easy", false, 86.25, 320},
      {"two blocked, conservative", std::string(kTwoBlocked), "conservative", false, 126.25, 500},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    absl::StatusOr<SwfTrace> trace = ParseSwfTrace(c.log, "t.swf");
    ASSERT_TRUE(trace.ok()) << trace.status();
    absl::StatusOr<std::vector<SwfMode>> modes = ParseSwfModes(c.backfill, c.fifo);
    ASSERT_TRUE(modes.ok()) << modes.status();
    absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, "t.swf", {}, modes->front());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->metrics.completed, r->metrics.jobs);
    EXPECT_DOUBLE_EQ(r->metrics.mean_wait_s, c.mean_wait_s);
    EXPECT_DOUBLE_EQ(r->metrics.makespan_s, c.makespan_s);
  }
}

// 4 one-processor nodes in two clusters of 2. job-1 and job-2 (2 procs, 100 s) are of site 1,
// job-4 (1 proc, 50 s) of site 2; job-3 (3 procs) is larger than either cluster.
constexpr std::string_view kTwoSites =
    "; MaxNodes: 4\n; MaxProcs: 4\n"
    "1  0 -1 100 2 -1 -1 -1 -1 -1 1 1 1 -1 -1 1 -1 -1\n"
    "2 10 -1 100 2 -1 -1 -1 -1 -1 1 1 1 -1 -1 1 -1 -1\n"
    "3 20 -1  50 3 -1 -1 -1 -1 -1 1 1 1 -1 -1 2 -1 -1\n"
    "4 30 -1  50 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 2 -1 -1\n";

TEST(SwfRunTest, SeveralClustersKeepGangsWholeAndReportPerCluster) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(kTwoSites, "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<SwfMode>> easy = ParseSwfModes("easy", false);
  ASSERT_TRUE(easy.ok());
  struct Case {
    SitePlacement placement;
    double mean_wait_s;
  };
  // Pinned: site 1's jobs share cluster-0 (job-2 waits 90 s), job-4 runs at once in cluster-1.
  // Any: job-2 takes the other cluster at once and job-4 waits for job-1 (70 s).
  for (const Case& c : {Case{SitePlacement::kPinned, 30}, Case{SitePlacement::kAny, 70.0 / 3},
                        Case{SitePlacement::kPreferred, 70.0 / 3}}) {
    SCOPED_TRACE(SitePlacementName(c.placement));
    SwfWorkloadOptions options;
    options.clusters = 2;
    options.site_placement = c.placement;
    absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, "t.swf", options, easy->front());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->stats.skipped.at("more processors than the largest cluster"), 1);
    EXPECT_EQ(r->metrics.completed, 3);
    EXPECT_DOUBLE_EQ(r->metrics.mean_wait_s, c.mean_wait_s);
    EXPECT_EQ(r->split_jobs, 0);
    ASSERT_EQ(r->clusters.size(), 2u);
    int64_t ran = 0;
    int64_t away = 0;
    for (const SwfClusterResult& cluster : r->clusters) {
      EXPECT_EQ(cluster.cluster.processors, 2);
      EXPECT_LE(cluster.peak_processors, cluster.cluster.processors);
      ran += cluster.jobs_run;
      away += cluster.jobs_away;
    }
    EXPECT_EQ(ran, 3);
    EXPECT_EQ(r->clusters[0].cluster.home_jobs, 2);
    EXPECT_EQ(r->clusters[1].cluster.home_jobs, 1);
    if (c.placement == SitePlacement::kPinned) {
      EXPECT_EQ(away, 0);
      EXPECT_EQ(r->clusters[0].jobs_run, 2);
      EXPECT_DOUBLE_EQ(r->clusters[0].metrics.utilisation, 400.0 / (2 * 200.0));
    } else {
      // Site 1's two jobs ran side by side, so at least one of them away from home.
      EXPECT_GE(away, 1);
    }
  }
}

}  // namespace
}  // namespace tessera::sim::swf

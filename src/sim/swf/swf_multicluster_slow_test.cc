// The LCG grid log (2005, 170 sites, one-processor jobs) and NASA iPSC/860 (rigid gangs of up to
// 128 processors) replayed over several simulated clusters: every job completes, no gang runs
// split across clusters, no cluster ever holds more processors than it has, pinned sites stay at
// home, and dispatching freely waits no longer than pinning every site to its home cluster.
// Reads the logs from $TESSERA_TRACE_DIR or ../shared/traces (test_traces.h); skipped when they
// are absent.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "sim/swf/swf_run.h"
#include "sim/swf/test_traces.h"

namespace tessera::sim::swf {
namespace {

// The invariants of any multi-cluster run.
void ExpectSound(const SwfRunResult& r) {
  const SwfMetrics& m = r.metrics;
  EXPECT_EQ(r.truncated_after, 0);
  EXPECT_EQ(m.jobs, r.stats.jobs_kept);
  EXPECT_EQ(m.completed, m.jobs) << m.never_started << " never started, " << m.unfinished
                                 << " unfinished";
  EXPECT_TRUE(r.starts_after_submit);
  EXPECT_EQ(r.split_jobs, 0) << "a gang ran in more than one cluster";
  int64_t ran = 0;
  for (const SwfClusterResult& c : r.clusters) {
    SCOPED_TRACE(c.cluster.name);
    EXPECT_LE(c.peak_processors, c.cluster.processors) << "cluster overcommitted";
    EXPECT_GT(c.jobs_run, 0);
    EXPECT_LE(c.metrics.utilisation, 1.0);
    ran += c.jobs_run;
  }
  EXPECT_EQ(ran, m.jobs) << "every job ran in exactly one cluster";
}

TEST(SwfMultiClusterTest, LcgPrefixOverFourClusters) {
  const std::optional<std::string> path = testing::FindTraceFile(testing::kLcgLog);
  if (!path) GTEST_SKIP() << "trace not found: " << testing::kLcgLog;
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(*path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<SwfMode>> easy = ParseSwfModes("easy", false);
  ASSERT_TRUE(easy.ok()) << easy.status();

  std::map<SitePlacement, SwfRunResult> runs;
  for (SitePlacement placement :
       {SitePlacement::kPinned, SitePlacement::kPreferred, SitePlacement::kAny}) {
    SCOPED_TRACE(SitePlacementName(placement));
    SwfWorkloadOptions options;
    options.limit = 3000;
    options.processors = 128;
    options.cpus_per_node = 8;
    options.queues_from = QueuesFrom::kPartition;
    options.clusters = 4;
    options.site_placement = placement;
    absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, *path, options, easy->front());
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectSound(*r);
    ASSERT_EQ(r->clusters.size(), 4u);
    int64_t home_jobs = 0;
    for (const SwfClusterResult& c : r->clusters) {
      EXPECT_EQ(c.cluster.processors, 32);
      home_jobs += c.cluster.home_jobs;
      if (placement == SitePlacement::kPinned) EXPECT_EQ(c.jobs_away, 0) << c.cluster.name;
    }
    EXPECT_EQ(home_jobs, r->metrics.jobs);
    runs.emplace(placement, *std::move(r));
  }
  // Four separate pools queue longer than one scheduler that may use any of them.
  EXPECT_LE(runs.at(SitePlacement::kAny).metrics.mean_wait_s,
            runs.at(SitePlacement::kPinned).metrics.mean_wait_s);
  EXPECT_LE(runs.at(SitePlacement::kPreferred).metrics.mean_wait_s,
            runs.at(SitePlacement::kPinned).metrics.mean_wait_s);
}

TEST(SwfMultiClusterTest, NasaGangsStayInOneClusterOfTwo) {
  const std::optional<std::string> path = testing::FindTraceFile(testing::kNasaLog);
  if (!path) GTEST_SKIP() << "trace not found: " << testing::kNasaLog;
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(*path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<SwfMode>> easy = ParseSwfModes("easy", false);
  ASSERT_TRUE(easy.ok()) << easy.status();
  SwfWorkloadOptions options;
  options.limit = 3000;
  options.clusters = 2;  // 64 processors each: the 128-processor jobs are skipped
  options.cost_tiers = true;
  absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, *path, options, easy->front());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->stats.skipped.at("more processors than the largest cluster"), 0);
  ExpectSound(*r);
}

}  // namespace
}  // namespace tessera::sim::swf

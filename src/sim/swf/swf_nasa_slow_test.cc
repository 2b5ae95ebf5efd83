// NASA iPSC/860 (1993, cleaned; about 18,000 rigid jobs on 128 nodes) under FCFS, EASY and
// conservative backfill: the properties every correct batch scheduler has on it. Reads the log
// from $TESSERA_TRACE_DIR or ../shared/traces (test_traces.h); skipped when it is absent.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "sim/swf/swf_run.h"
#include "sim/swf/test_traces.h"

namespace tessera::sim::swf {
namespace {

TEST(SwfNasaTest, BackfillKeepsEveryJobAndDoesNotWaitLonger) {
  const std::optional<std::string> path = testing::FindTraceFile(testing::kNasaLog);
  if (!path) GTEST_SKIP() << "trace not found: " << testing::kNasaLog;
  absl::StatusOr<SwfTrace> trace = LoadSwfTrace(*path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<SwfMode>> modes = ParseSwfModes("all", false);
  ASSERT_TRUE(modes.ok()) << modes.status();

  std::map<std::string, SwfMetrics> by_mode;
  for (const SwfMode& mode : *modes) {
    SCOPED_TRACE(mode.name);
    absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, *path, {}, mode);
    ASSERT_TRUE(r.ok()) << r.status();
    const SwfMetrics& m = r->metrics;
    EXPECT_EQ(r->stats.total_processors, 128);
    EXPECT_GT(r->stats.jobs_kept, 18'000);
    EXPECT_EQ(r->truncated_after, 0);
    EXPECT_EQ(m.jobs, r->stats.jobs_kept);
    EXPECT_EQ(m.completed, m.jobs)
        << m.never_started << " never started, " << m.unfinished << " unfinished";
    EXPECT_TRUE(r->starts_after_submit);
    EXPECT_GE(m.mean_bounded_slowdown, 1.0);
    EXPECT_GT(m.utilisation, 0.0);
    EXPECT_LE(m.utilisation, 1.0);
    by_mode[mode.name] = m;
  }
  const SwfMetrics& fcfs = by_mode["fcfs"];
  const SwfMetrics& easy = by_mode["easy"];
  const SwfMetrics& conservative = by_mode["conservative"];
  EXPECT_LE(easy.mean_wait_s, fcfs.mean_wait_s);
  EXPECT_LE(conservative.mean_wait_s, fcfs.mean_wait_s);
  // The work is the same in every mode; backfill can only shorten the run, so utilisation is
  // equal or higher (1% tolerance: the last job's end may move either way).
  EXPECT_GE(easy.utilisation, fcfs.utilisation * 0.99);
  EXPECT_GE(conservative.utilisation, fcfs.utilisation * 0.99);
}

}  // namespace
}  // namespace tessera::sim::swf

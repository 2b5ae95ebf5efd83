#include "sim/swf/swf_run.h"

#include <string>
#include <vector>

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
// job-3 (1 proc, 10 s) fits beside job-1 at once and ends long before job-1.
constexpr std::string_view kLog =
    "; MaxNodes: 4\n"
    "; MaxProcs: 4\n"
    "1  0 -1 100 3 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2 10 -1 100 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "3 20 -1  10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";

TEST(SwfRunTest, RunsAModeAndMeasuresIt) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(kLog, "t.swf");
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

TEST(SwfRunTest, EveryModeCompletesEveryJob) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(kLog, "t.swf");
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<SwfMode>> modes = ParseSwfModes("all", false);
  ASSERT_TRUE(modes.ok());
  for (const SwfMode& mode : *modes) {
    SCOPED_TRACE(mode.name);
    absl::StatusOr<SwfRunResult> r = RunSwfMode(*trace, "t.swf", {}, mode);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->metrics.completed, 3);
    EXPECT_TRUE(r->starts_after_submit);
    // job-1 and job-2 cannot overlap in any mode: the run lasts at least 200 s.
    EXPECT_GE(r->metrics.makespan_s, 200);
  }
}

}  // namespace
}  // namespace tessera::sim::swf

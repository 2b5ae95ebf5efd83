#include "sim/swf/swf_workload.h"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sim::swf {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// 8 nodes of 2 processors; jobs 3, 4 and 5 cannot run (no run time, too large, no size).
constexpr std::string_view kLog =
    "; Version: 2.2\n"
    "; Computer: Test Machine\n"
    "; MaxNodes: 8\n"
    "; MaxProcs: 16\n"
    "; MaxMemory: 2048\n"
    ";  id sub wait run alloc cpu mem rproc rtime rmem st usr grp exe q part prec think\n"
    "    1 100  -1   50    4  -1  -1    -1    -1   -1  1   1   1  -1 -1  -1   -1   -1\n"
    "    2 160  -1   30    2  -1  -1     3    20   -1  1   1   1  -1  1   5   -1   -1\n"
    "    3 200  -1    0    1  -1  -1    -1    -1   -1  0   1   1  -1 -1  -1   -1   -1\n"
    "    4 210  -1   10   32  -1  -1    -1    -1   -1  1   1   1  -1 -1  -1   -1   -1\n"
    "    5 220  -1   10   -1  -1  -1    -1    -1   -1  1   1   1  -1 -1  -1   -1   -1\n"
    "    6 230  -1   40    1  -1  -1    -1   100   -1  1   2   3  -1  2   5   -1   -1\n";

SwfTrace Parse(std::string_view text) {
  absl::StatusOr<SwfTrace> trace = ParseSwfTrace(text, "test.swf");
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *std::move(trace) : SwfTrace{};
}

TEST(SwfWorkloadTest, ConvertsClusterAndJobs) {
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", {});
  ASSERT_TRUE(w.ok()) << w.status();
  const SwfConversionStats& st = w->stats;
  EXPECT_EQ(st.jobs_read, 6);
  EXPECT_EQ(st.jobs_kept, 3);
  EXPECT_THAT(st.skipped,
              ElementsAre(Pair("more processors than the cluster", 1),
                          Pair("processors unknown", 1), Pair("run time <= 0 or unknown", 1)));
  EXPECT_EQ(st.nodes, 8);
  EXPECT_EQ(st.cpus_per_node, 2);
  EXPECT_EQ(st.total_processors, 16);
  EXPECT_FALSE(st.processors_from_jobs);
  EXPECT_EQ(st.origin_s, 100);
  EXPECT_EQ(st.time_limit_raised, 1);

  const Scenario& s = w->scenario;
  ASSERT_EQ(s.nodes.size(), 8u);
  EXPECT_EQ(s.nodes[0].node.name, "node-0");
  EXPECT_EQ(s.nodes[7].node.name, "node-7");
  EXPECT_EQ(s.nodes[0].node.allocatable.cpu, 2000);
  EXPECT_EQ(s.nodes[0].node.allocatable.memory, 2 * 2048 * 1024);
  ASSERT_EQ(s.queues.size(), 1u);
  EXPECT_EQ(s.queues[0].name(), "default");
  EXPECT_TRUE(s.queues[0].leaf);
  EXPECT_FALSE(s.config.policy.preemption);
  EXPECT_TRUE(s.expectations.empty());

  struct Want {
    std::string name;
    int32_t replicas;
    int64_t at_s, run_s, limit_s;
  };
  const std::vector<Want> want = {
      {"job-1", 4, 0, 50, 50},    // allocated processors; no requested time: the run time
      {"job-2", 3, 60, 30, 30},   // requested processors first; requested time < run: run
      {"job-6", 1, 130, 40, 100}  // requested time >= run: the request
  };
  ASSERT_EQ(s.jobs.size(), want.size());
  EXPECT_THAT(w->processors, ElementsAre(4, 3, 1));
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const ScenarioJob& j = s.jobs[i];
    EXPECT_EQ(j.spec.name, want[i].name);
    EXPECT_EQ(j.spec.queue, "default");
    ASSERT_EQ(j.spec.tasks.size(), 1u);
    EXPECT_EQ(j.spec.tasks[0].replicas, want[i].replicas);
    EXPECT_EQ(j.spec.tasks[0].request.cpu, 1000);
    EXPECT_EQ(j.spec.GangSize(), want[i].replicas);
    EXPECT_EQ(j.at, seconds(want[i].at_s));
    EXPECT_EQ(j.duration, seconds(want[i].run_s));
    EXPECT_EQ(j.spec.time_limit, seconds(want[i].limit_s));
    EXPECT_TRUE(j.spec.Validate("spec").ok());
  }
}

// Tasks ask for the requested memory per processor; a job asking more than a node has is
// skipped (it could never start).
TEST(SwfWorkloadTest, RequestedMemoryPerProcessor) {
  constexpr std::string_view kMemoryLog =
      "; MaxNodes: 2\n"
      "; MaxProcs: 4\n"
      "; MaxMemory: 1024\n"  // KB per processor: nodes of 2 cpus and 2048 KB
      "    1   0  -1   50    2  -1  -1     2    -1  2048  1   1   1  -1 -1  -1   -1   -1\n"
      "    2  10  -1   50    2  -1  -1     2    -1  2049  1   1   1  -1 -1  -1   -1   -1\n";
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kMemoryLog), "test.swf", {});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(w->stats.skipped, ElementsAre(Pair("more memory per processor than a node has", 1)));
  ASSERT_EQ(w->scenario.jobs.size(), 1u);
  EXPECT_EQ(w->scenario.jobs[0].spec.tasks[0].request.memory, 2048 * 1024);
}

TEST(SwfWorkloadTest, QueuesFromAFieldUnderOneRoot) {
  struct Case {
    QueuesFrom from;
    std::vector<std::string> leaves;  // in name order
    std::vector<std::string> of_jobs;
  };
  const std::vector<Case> cases = {
      {QueuesFrom::kPartition,
       {"partition-5", "partition-unknown"},
       {"partition-unknown", "partition-5", "partition-5"}},
      {QueuesFrom::kQueue,
       {"queue-1", "queue-2", "queue-unknown"},
       {"queue-unknown", "queue-1", "queue-2"}},
      {QueuesFrom::kGroup, {"group-1", "group-3"}, {"group-1", "group-1", "group-3"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(QueuesFromName(c.from));
    SwfWorkloadOptions options;
    options.queues_from = c.from;
    options.ordering = QueueOrdering::kStrictFifo;
    absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
    ASSERT_TRUE(w.ok()) << w.status();
    const std::vector<ScenarioQueue>& q = w->scenario.queues;
    ASSERT_EQ(q.size(), c.leaves.size() + 1);
    EXPECT_EQ(q[0].name(), "swf");
    EXPECT_FALSE(q[0].leaf);
    for (size_t i = 0; i < c.leaves.size(); ++i) {
      EXPECT_EQ(q[i + 1].name(), c.leaves[i]);
      EXPECT_EQ(q[i + 1].spec.parent, "swf");
      EXPECT_EQ(q[i + 1].spec.weight, 1);
      EXPECT_EQ(q[i + 1].spec.ordering, QueueOrdering::kStrictFifo);
      EXPECT_TRUE(q[i + 1].spec.guaranteed.empty());
    }
    std::vector<std::string> of_jobs;
    for (const ScenarioJob& j : w->scenario.jobs) of_jobs.push_back(j.spec.queue);
    EXPECT_EQ(of_jobs, c.of_jobs);
  }
}

TEST(SwfWorkloadTest, SkipAndLimitTakeAWindowOfTheFile) {
  SwfWorkloadOptions options;
  options.skip = 1;
  options.limit = 2;  // jobs 2 and 3; job 3 cannot run
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->stats.jobs_read, 2);
  EXPECT_EQ(w->stats.jobs_kept, 1);
  EXPECT_EQ(w->stats.origin_s, 160);
  ASSERT_EQ(w->scenario.jobs.size(), 1u);
  EXPECT_EQ(w->scenario.jobs[0].spec.name, "job-2");
  EXPECT_EQ(w->scenario.jobs[0].at, seconds(0));
}

TEST(SwfWorkloadTest, ShapeWithoutNodeCountsComesFromTheHeaderOrTheJobs) {
  struct Case {
    std::string header;
    int64_t nodes, cpus_per_node;
    bool from_jobs;
  };
  const std::vector<Case> cases = {
      {"; MaxProcs: 6\n", 6, 1, false},
      {"; MaxNodes: 5\n", 5, 1, false},
      {"; MaxNodes: 4\n; MaxProcs: 6\n", 6, 1, false},  // not a multiple: one cpu per node
      {"", 3, 1, true},                                 // the largest job
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    const std::string text = c.header +
                             "1 0 -1 10 3 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
                             "2 5 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";
    absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(text), "t.swf", {});
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->stats.nodes, c.nodes);
    EXPECT_EQ(w->stats.cpus_per_node, c.cpus_per_node);
    EXPECT_EQ(w->stats.processors_from_jobs, c.from_jobs);
    EXPECT_EQ(static_cast<int64_t>(w->scenario.nodes.size()), c.nodes);
    EXPECT_EQ(w->scenario.nodes[0].node.allocatable.memory, int64_t{1} << 30);
  }
}

TEST(SwfWorkloadTest, CpusPerNodeRegroupsTheProcessors) {
  SwfWorkloadOptions options;
  options.cpus_per_node = 5;  // 16 processors: 3 nodes of 5 and one of 1
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->stats.nodes, 4);
  EXPECT_EQ(w->stats.cpus_per_node, 5);
  EXPECT_EQ(w->stats.total_processors, 16);
  std::vector<int64_t> cpus;
  for (const ScenarioNode& n : w->scenario.nodes) cpus.push_back(n.node.allocatable.cpu);
  EXPECT_THAT(cpus, ElementsAre(5000, 5000, 5000, 1000));
  EXPECT_EQ(w->scenario.nodes[3].node.allocatable.memory, 2048 * 1024);
}

TEST(SwfWorkloadTest, ProcessorsReplaceTheHeaderCount) {
  struct Case {
    std::optional<int64_t> processors, cpus_per_node;
    std::vector<int64_t> node_cpus;
    int64_t kept;
  };
  const std::vector<Case> cases = {
      {3, std::nullopt, {2000, 1000}, 2},  // the header's 2 cpus per node; job-1 (4) is too large
      {7, 4, {4000, 3000}, 3},
      {2, 1, {1000, 1000}, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(*c.processors);
    SwfWorkloadOptions options;
    options.processors = c.processors;
    options.cpus_per_node = c.cpus_per_node;
    absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->stats.total_processors, *c.processors);
    EXPECT_EQ(w->stats.jobs_kept, c.kept);
    std::vector<int64_t> cpus;
    for (const ScenarioNode& n : w->scenario.nodes) cpus.push_back(n.node.allocatable.cpu);
    EXPECT_EQ(cpus, c.node_cpus);
  }
}

TEST(SwfWorkloadTest, ArrivalSpeedupCompressesSubmissionsOnly) {
  SwfWorkloadOptions options;
  options.arrival_speedup = 4;  // submissions 100, 160, 230 -> 0, 15 s, 32.5 s
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->scenario.jobs.size(), 3u);
  EXPECT_EQ(w->scenario.jobs[1].at, seconds(15));
  EXPECT_EQ(w->scenario.jobs[2].at, std::chrono::milliseconds(32'500));
  EXPECT_EQ(w->scenario.jobs[2].duration, seconds(40));
  EXPECT_EQ(w->scenario.jobs[2].spec.time_limit, seconds(100));
}

TEST(SwfWorkloadTest, DuplicateIdsGetDistinctNames) {
  const std::string text =
      "7 0 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "7 5 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(text), "t.swf", {});
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->scenario.jobs.size(), 2u);
  EXPECT_EQ(w->scenario.jobs[0].spec.name, "job-7");
  EXPECT_EQ(w->scenario.jobs[1].spec.name, "job-7-line-2");
}

TEST(SwfWorkloadTest, BadOptionsAndEmptyWorkloadsAreErrors) {
  const SwfTrace trace = Parse(kLog);
  SwfWorkloadOptions negative_skip;
  negative_skip.skip = -1;
  SwfWorkloadOptions zero_limit;
  zero_limit.limit = 0;
  SwfWorkloadOptions past_the_end;
  past_the_end.skip = 100;
  SwfWorkloadOptions no_processors;
  no_processors.processors = 0;
  SwfWorkloadOptions no_cpus;
  no_cpus.cpus_per_node = 0;
  SwfWorkloadOptions zero_speedup;
  zero_speedup.arrival_speedup = 0;
  SwfWorkloadOptions nan_speedup;
  nan_speedup.arrival_speedup = std::nan("");
  SwfWorkloadOptions only_bad;  // jobs 3, 4 and 5
  only_bad.skip = 2;
  only_bad.limit = 3;
  const std::vector<std::pair<SwfWorkloadOptions, std::string>> cases = {
      {negative_skip, "test.swf: skip: must be >= 0"},
      {zero_limit, "test.swf: limit: must be >= 1"},
      {no_processors, "test.swf: processors: must be >= 1, got 0"},
      {no_cpus, "test.swf: cpus_per_node: must be >= 1, got 0"},
      {zero_speedup, "test.swf: arrival_speedup: must be a finite number > 0, got 0"},
      {nan_speedup, "test.swf: arrival_speedup: must be a finite number > 0, got nan"},
      {past_the_end, "test.swf: jobs: none of the 0 jobs read can run"},
      {only_bad,
       "none of the 3 jobs read can run (skipped: 1 more processors than the cluster, "
       "1 processors unknown, 1 run time <= 0 or unknown)"},
  };
  for (const auto& [options, message] : cases) {
    absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(trace, "test.swf", options);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(w.status().message(), HasSubstr(message));
  }
}

TEST(SwfWorkloadTest, SeveralClustersSplitTheProcessorsAndGiveSitesAHome) {
  SwfWorkloadOptions options;
  options.clusters = 2;
  options.cost_tiers = true;
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  const SwfConversionStats& st = w->stats;
  ASSERT_EQ(st.clusters.size(), 2u);
  EXPECT_EQ(st.nodes, 8);
  // Site -1 (unknown: job-1, 200 processor-seconds) is the heaviest: cluster-0; site 5
  // (job-2 and job-6, 130) goes to the cluster with the least work so far: cluster-1.
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(st.clusters[c].name, fmt::format("cluster-{}", c));
    EXPECT_EQ(st.clusters[c].processors, 8);
    EXPECT_EQ(st.clusters[c].nodes, 4);
    EXPECT_EQ(st.clusters[c].home_sites, 1);
  }
  EXPECT_EQ(st.clusters[0].home_jobs, 1);
  EXPECT_EQ(st.clusters[1].home_jobs, 2);
  EXPECT_THAT(w->home, ElementsAre(0, 1, 1));
  const Scenario& s = w->scenario;
  ASSERT_EQ(s.clusters.size(), 2u);
  ASSERT_EQ(s.nodes.size(), 8u);
  EXPECT_EQ(s.nodes[0].node.name, "cluster-0-node-0");
  EXPECT_EQ(s.nodes[4].node.name, "cluster-1-node-0");
  EXPECT_EQ(s.nodes[4].node.cluster, "cluster-1");
  EXPECT_THAT(s.nodes[4].node.labels, ElementsAre(Pair("tessera.io/cluster", "cluster-1"),
                                                  Pair("tessera.io/cost-tier", "1")));
  // Sites place nothing by default.
  for (const ScenarioJob& job : s.jobs) {
    EXPECT_TRUE(job.spec.cluster_selector.empty());
    EXPECT_TRUE(job.spec.cluster_affinity.empty());
  }

  options.site_placement = SitePlacement::kPinned;
  w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(w->scenario.jobs[1].spec.cluster_selector,
              ElementsAre(Pair("tessera.io/cluster", "cluster-1")));
  options.site_placement = SitePlacement::kPreferred;
  w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  const ClusterAffinityTerms& affinity = w->scenario.jobs[0].spec.cluster_affinity;
  ASSERT_EQ(affinity.preferred.size(), 1u);
  EXPECT_EQ(affinity.preferred[0].weight, 100);
  EXPECT_EQ(
      affinity.preferred[0].match,
      (std::vector<LabelRequirement>{{"tessera.io/cluster", LabelOperator::kIn, {"cluster-0"}}}));
}

TEST(SwfWorkloadTest, AGangLargerThanEveryClusterIsSkipped) {
  SwfWorkloadOptions options;
  options.clusters = 5;  // 16 processors: 4, 3, 3, 3, 3
  absl::StatusOr<SwfWorkload> w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->stats.clusters[0].processors, 4);
  EXPECT_EQ(w->stats.clusters[4].processors, 3);
  EXPECT_EQ(w->stats.jobs_kept, 3);
  options.clusters = 6;  // 3, 3, 3, 3, 2, 2: job-1 (4 processors) fits none
  w = BuildSwfWorkload(Parse(kLog), "test.swf", options);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->stats.skipped.at("more processors than the largest cluster"), 2);
  EXPECT_EQ(w->stats.jobs_kept, 2);

  options.clusters = 0;
  EXPECT_EQ(BuildSwfWorkload(Parse(kLog), "test.swf", options).status().message(),
            "test.swf: clusters: must be 1..1000, got 0");
  options.clusters = 17;
  EXPECT_EQ(BuildSwfWorkload(Parse(kLog), "test.swf", options).status().message(),
            "test.swf: clusters: must be at most the processors (16), got 17");
}

TEST(SwfWorkloadTest, SitePlacementNamesRoundTrip) {
  for (SitePlacement p : {SitePlacement::kAny, SitePlacement::kPreferred, SitePlacement::kPinned}) {
    EXPECT_EQ(ParseSitePlacement(SitePlacementName(p)), p);
  }
  EXPECT_EQ(ParseSitePlacement("home"), std::nullopt);
}

TEST(SwfWorkloadTest, QueuesFromNamesRoundTrip) {
  for (QueuesFrom from :
       {QueuesFrom::kSingle, QueuesFrom::kQueue, QueuesFrom::kPartition, QueuesFrom::kGroup}) {
    EXPECT_EQ(ParseQueuesFrom(QueuesFromName(from)), from);
  }
  EXPECT_EQ(ParseQueuesFrom("site"), std::nullopt);
}

}  // namespace
}  // namespace tessera::sim::swf

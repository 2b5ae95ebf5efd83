#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sched/plugins/cluster/cluster_affinity.h"
#include "sched/plugins/cluster/cluster_score.h"
#include "sched/plugins/cluster/cluster_selector.h"
#include "sched/testing/test_nodes.h"
#include "tessera/sched/cluster_count.h"

namespace tessera {
namespace {

using ::tessera::testing::CpuNode;
using ::tessera::testing::CpuTask;

const Labels kEast = {{"tessera.io/cluster", "east"}, {"region", "east"}, {"tier", "cheap"}};

LabelRequirement Req(std::string key, LabelOperator op, std::vector<std::string> values = {}) {
  return LabelRequirement{std::move(key), op, std::move(values)};
}

Node NodeWith(const Labels& labels) {
  Node node = CpuNode();
  node.labels = labels;
  return node;
}

// --- ClusterSelector -------------------------------------------------------------------------

struct SelectorCase {
  std::string name;
  Labels selector;
  bool passes;
};

class ClusterSelectorTest : public ::testing::TestWithParam<SelectorCase> {};

TEST_P(ClusterSelectorTest, Filter) {
  const SelectorCase& c = GetParam();
  TaskRequest task = CpuTask(100);
  task.cluster_selector = c.selector;
  const SchedStatus status = ClusterSelector().Filter(CycleState(), task, NodeWith(kEast));
  if (c.passes) {
    EXPECT_TRUE(status.ok());
    return;
  }
  EXPECT_EQ(status.code(), SchedStatus::Code::kUnschedulableAndUnresolvable);
  ASSERT_NE(status.reason(), nullptr);
  EXPECT_EQ(status.reason()->code, "NodeSelectorMismatch");
  EXPECT_EQ(status.reason()->detail, "cluster not selected");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ClusterSelectorTest,
    ::testing::ValuesIn(std::vector<SelectorCase>{
        {"empty selector", {}, true},
        {"cluster name", {{"tessera.io/cluster", "east"}}, true},
        {"cluster label", {{"region", "east"}}, true},
        {"every pair", {{"region", "east"}, {"tier", "cheap"}}, true},
        {"other cluster", {{"tessera.io/cluster", "west"}}, false},
        {"missing key", {{"zone", "a"}}, false},
        {"one of two mismatches", {{"region", "east"}, {"tier", "dear"}}, false},
    }),
    [](const auto& info) { return testing::TestName(info.param.name); });

// --- ClusterAffinity filter ---------------------------------------------------------------------

struct AffinityFilterCase {
  std::string name;
  ClusterAffinityTerms affinity;
  ClusterAffinityTerms anti;
  std::string_view rejected;  // empty: passes; else the reason's detail
};

class ClusterAffinityFilterTest : public ::testing::TestWithParam<AffinityFilterCase> {};

TEST_P(ClusterAffinityFilterTest, Filter) {
  const AffinityFilterCase& c = GetParam();
  TaskRequest task = CpuTask(100);
  task.cluster_affinity = c.affinity;
  task.cluster_anti_affinity = c.anti;
  const SchedStatus status = ClusterAffinity().Filter(CycleState(), task, NodeWith(kEast));
  if (c.rejected.empty()) {
    EXPECT_TRUE(status.ok());
    return;
  }
  EXPECT_EQ(status.code(), SchedStatus::Code::kUnschedulableAndUnresolvable);
  ASSERT_NE(status.reason(), nullptr);
  EXPECT_EQ(status.reason()->code, "NodeSelectorMismatch");
  EXPECT_EQ(status.reason()->detail, c.rejected);
}

constexpr std::string_view kNoAffinity = "cluster affinity not satisfied";
constexpr std::string_view kExcluded = "cluster excluded by anti-affinity";

INSTANTIATE_TEST_SUITE_P(
    Cases, ClusterAffinityFilterTest,
    ::testing::ValuesIn(std::vector<AffinityFilterCase>{
        {"nothing required", {}, {}, ""},
        {"In holds", {{Req("region", LabelOperator::kIn, {"west", "east"})}, {}}, {}, ""},
        {"In fails", {{Req("region", LabelOperator::kIn, {"west"})}, {}}, {}, kNoAffinity},
        {"In on a missing label", {{Req("zone", LabelOperator::kIn, {"a"})}, {}}, {}, kNoAffinity},
        {"NotIn holds", {{Req("region", LabelOperator::kNotIn, {"west"})}, {}}, {}, ""},
        {"NotIn on a missing label", {{Req("zone", LabelOperator::kNotIn, {"a"})}, {}}, {}, ""},
        {"NotIn fails", {{Req("region", LabelOperator::kNotIn, {"east"})}, {}}, {}, kNoAffinity},
        {"Exists", {{Req("tier", LabelOperator::kExists)}, {}}, {}, ""},
        {"Exists fails", {{Req("gpu", LabelOperator::kExists)}, {}}, {}, kNoAffinity},
        {"DoesNotExist", {{Req("gpu", LabelOperator::kDoesNotExist)}, {}}, {}, ""},
        {"DoesNotExist fails", {{Req("tier", LabelOperator::kDoesNotExist)}, {}}, {}, kNoAffinity},
        {"every requirement must hold",
         {{Req("region", LabelOperator::kIn, {"east"}), Req("tier", LabelOperator::kIn, {"dear"})},
          {}},
         {},
         kNoAffinity},
        {"anti-affinity excludes a match",
         {},
         {{Req("region", LabelOperator::kIn, {"east"})}, {}},
         kExcluded},
        {"anti-affinity: any requirement excludes",
         {},
         {{Req("region", LabelOperator::kIn, {"west"}), Req("tier", LabelOperator::kExists)}, {}},
         kExcluded},
        {"anti-affinity passes when nothing matches",
         {},
         {{Req("region", LabelOperator::kIn, {"west"}), Req("gpu", LabelOperator::kExists)}, {}},
         ""},
        {"preferred terms never filter",
         {{}, {{10, {Req("region", LabelOperator::kIn, {"west"})}}}},
         {{}, {{10, {Req("region", LabelOperator::kIn, {"east"})}}}},
         ""},
    }),
    [](const auto& info) { return testing::TestName(info.param.name); });

// --- ClusterAffinity score ----------------------------------------------------------------------

struct AffinityScoreCase {
  std::string name;
  std::vector<PreferredLabelTerm> preferred;
  std::vector<PreferredLabelTerm> anti_preferred;
  int64_t score;
};

class ClusterAffinityScoreTest : public ::testing::TestWithParam<AffinityScoreCase> {};

TEST_P(ClusterAffinityScoreTest, Score) {
  const AffinityScoreCase& c = GetParam();
  TaskRequest task = CpuTask(100);
  task.cluster_affinity.preferred = c.preferred;
  task.cluster_anti_affinity.preferred = c.anti_preferred;
  int64_t score = -1;
  ASSERT_TRUE(ClusterAffinity().Score(CycleState(), task, NodeWith(kEast), &score).ok());
  EXPECT_EQ(score, c.score);
}

const PreferredLabelTerm kPreferEast{30, {Req("region", LabelOperator::kIn, {"east"})}};
const PreferredLabelTerm kPreferWest{10, {Req("region", LabelOperator::kIn, {"west"})}};
const PreferredLabelTerm kPreferEastAndDear{
    60, {Req("region", LabelOperator::kIn, {"east"}), Req("tier", LabelOperator::kIn, {"dear"})}};

INSTANTIATE_TEST_SUITE_P(
    Cases, ClusterAffinityScoreTest,
    ::testing::ValuesIn(std::vector<AffinityScoreCase>{
        {"no preference", {}, {}, 0},
        {"preferred cluster", {kPreferEast}, {}, 100},
        {"other cluster preferred", {kPreferWest}, {}, 0},
        {"share of the weights", {kPreferEast, kPreferWest}, {}, 75},
        {"a term needs every requirement", {kPreferEastAndDear, kPreferEast}, {}, 33},
        {"avoided cluster", {}, {kPreferEast}, 0},
        {"not avoided", {}, {kPreferWest}, 100},
        {"both kinds", {kPreferWest}, {kPreferWest}, 50},
    }),
    [](const auto& info) { return testing::TestName(info.param.name); });

TEST(ClusterAffinityTest, FactoryRejectsArguments) {
  EXPECT_TRUE(ClusterAffinity::New({}, Handle{}).ok());
  EXPECT_EQ(ClusterAffinity::New({{"x", "1"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ClusterSelector::New({{"x", "1"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- ClusterScore ------------------------------------------------------------------------------

struct TierCase {
  std::string name;
  PluginArgs args;
  Labels labels;
  int64_t score;
};

class ClusterScoreTest : public ::testing::TestWithParam<TierCase> {};

TEST_P(ClusterScoreTest, Score) {
  const TierCase& c = GetParam();
  absl::StatusOr<std::unique_ptr<Plugin>> plugin = ClusterScore::New(c.args, Handle{});
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  int64_t score = -1;
  ASSERT_TRUE(dynamic_cast<ScorePlugin&>(**plugin)
                  .Score(CycleState(), CpuTask(100), NodeWith(c.labels), &score)
                  .ok());
  EXPECT_EQ(score, c.score);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ClusterScoreTest,
    ::testing::ValuesIn(std::vector<TierCase>{
        {"tier 0 is cheapest", {}, {{"tessera.io/cost-tier", "0"}}, 100},
        {"tier 3 of 10", {}, {{"tessera.io/cost-tier", "3"}}, 70},
        {"tier 10", {}, {{"tessera.io/cost-tier", "10"}}, 0},
        {"above maxTier", {}, {{"tessera.io/cost-tier", "99"}}, 0},
        {"unlabelled counts as maxTier", {}, {}, 0},
        {"not an integer", {}, {{"tessera.io/cost-tier", "cheap"}}, 0},
        {"negative", {}, {{"tessera.io/cost-tier", "-1"}}, 0},
        {"maxTier 4", {{"maxTier", "4"}}, {{"tessera.io/cost-tier", "1"}}, 75},
        {"own label", {{"label", "cost"}}, {{"cost", "5"}, {"tessera.io/cost-tier", "0"}}, 50},
    }),
    [](const auto& info) { return testing::TestName(info.param.name); });

TEST(ClusterScoreTest, FactoryRejectsBadArguments) {
  for (const PluginArgs& args : std::vector<PluginArgs>{{{"maxTier", "0"}},
                                                        {{"maxTier", "1001"}},
                                                        {{"maxTier", "x"}},
                                                        {{"label", ""}},
                                                        {{"weight", "1"}}}) {
    EXPECT_EQ(ClusterScore::New(args, Handle{}).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

// --- Stepping aside ------------------------------------------------------------------------------

TEST(ClusterPluginsTest, PreFilterAndPreScoreSkipWhenThereIsNothingToDo) {
  ClusterSelector selector;
  ClusterAffinity affinity;
  ClusterScore score(std::string(ClusterScore::kCostTierLabel), ClusterScore::kDefaultMaxTier);
  CycleState state;
  TaskRequest plain = CpuTask(100);
  EXPECT_EQ(selector.PreFilter(state, plain).code(), SchedStatus::Code::kSkip);
  EXPECT_EQ(affinity.PreFilter(state, plain).code(), SchedStatus::Code::kSkip);
  EXPECT_EQ(affinity.PreScore(state, plain).code(), SchedStatus::Code::kSkip);
  EXPECT_EQ(score.PreScore(state, plain).code(), SchedStatus::Code::kSkip) << "one cluster";

  TaskRequest constrained = plain;
  constrained.cluster_selector = {{"region", "east"}};
  constrained.cluster_anti_affinity.required = {Req("tier", LabelOperator::kExists)};
  EXPECT_TRUE(selector.PreFilter(state, constrained).ok());
  EXPECT_TRUE(affinity.PreFilter(state, constrained).ok());
  EXPECT_EQ(affinity.PreScore(state, constrained).code(), SchedStatus::Code::kSkip);
  constrained.cluster_affinity.preferred = {kPreferEast};
  EXPECT_TRUE(affinity.PreScore(state, constrained).ok());
  state.Write(kClusterCountKey, ClusterCount{2});
  EXPECT_TRUE(score.PreScore(state, plain).ok()) << "two clusters";
}

}  // namespace
}  // namespace tessera

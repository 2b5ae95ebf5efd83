#include "sched/framework.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/sched/cluster_count.h"

namespace tessera {
namespace {

inline constexpr Reason kRejected{"NodeSelectorMismatch", "node labelled reject"};
inline constexpr Reason kNoRoom{"InsufficientResources", "insufficient cpu"};

// Rejects nodes labelled reject=true; counts calls so tests can see the cache at work.
class FakeFilter : public FilterPlugin {
 public:
  explicit FakeFilter(int* calls) : calls_(calls) {}
  std::string_view name() const override { return "FakeFilter"; }
  SchedStatus Filter(const CycleState&, const TaskRequest& task, const Node& node) const override {
    ++*calls_;
    if (node.labels.contains("reject")) return SchedStatus::Unschedulable(kRejected);
    if (node.FreeCpu() < task.cpu) return SchedStatus::Unschedulable(kNoRoom);
    return {};
  }

 private:
  int* calls_;
};

// Scores a node by its "score" label.
class FakeScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "FakeScore"; }
  SchedStatus Score(const CycleState&, const TaskRequest&, const Node& node,
                    int64_t* score) const override {
    auto it = node.labels.find("score");
    *score = it == node.labels.end() ? 0 : std::stoll(it->second);
    return {};
  }
};

class FifoSort : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "FifoSort"; }
  bool Less(const QueuedJobInfo& a, const QueuedJobInfo& b) const override {
    return a.sequence < b.sequence;
  }
};

class AllOrNothing : public PermitPlugin {
 public:
  std::string_view name() const override { return "AllOrNothing"; }
  SchedStatus Permit(const GangProgress& g) override {
    if (g.reserved >= g.min_available) return {};
    if (g.reserved + g.remaining >= g.min_available) return SchedStatus::Wait();
    static constexpr Reason kIncomplete{"GangIncomplete", "gang incomplete"};
    return SchedStatus::Unschedulable(kIncomplete);
  }
};

class RecordingSink : public DecisionSink {
 public:
  absl::Status Bind(std::string_view job, int32_t task, const Placement& p) override {
    bound.push_back(std::string(job) + "/" + std::to_string(task) + "@" + p.node);
    return absl::OkStatus();
  }
  std::vector<std::string> bound;
};

class SinkBinder : public BindPlugin {
 public:
  explicit SinkBinder(DecisionSink* sink) : sink_(sink) {}
  std::string_view name() const override { return "SinkBinder"; }
  SchedStatus Bind(std::string_view job, int32_t task, const Placement& p) override {
    absl::Status s = sink_->Bind(job, task, p);
    return s.ok() ? SchedStatus() : SchedStatus::Error(std::string(s.message()));
  }

 private:
  DecisionSink* sink_;
};

Node MakeNode(std::string name, int64_t cpu, std::map<std::string, std::string> labels = {}) {
  Node n;
  n.name = std::move(name);
  n.capacity.cpu = n.allocatable.cpu = cpu;
  n.capacity.memory = n.allocatable.memory = int64_t{1} << 40;
  for (auto& [k, v] : labels) n.labels[k] = v;
  return n;
}

TaskRequest CpuTask(int64_t cpu) {
  TaskRequest t;
  t.cpu = cpu;
  return t;
}

class FrameworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_
                    .Register("FakeFilter",
                              [this](const PluginArgs&, const Handle&) {
                                return absl::StatusOr<std::unique_ptr<Plugin>>(
                                    std::make_unique<FakeFilter>(&filter_calls_));
                              })
                    .ok());
    ASSERT_TRUE(registry_
                    .Register("FakeScore",
                              [](const PluginArgs&, const Handle&) {
                                return absl::StatusOr<std::unique_ptr<Plugin>>(
                                    std::make_unique<FakeScore>());
                              })
                    .ok());
    ASSERT_TRUE(registry_
                    .Register("FifoSort",
                              [](const PluginArgs&, const Handle&) {
                                return absl::StatusOr<std::unique_ptr<Plugin>>(
                                    std::make_unique<FifoSort>());
                              })
                    .ok());
    ASSERT_TRUE(registry_
                    .Register("AllOrNothing",
                              [](const PluginArgs&, const Handle&) {
                                return absl::StatusOr<std::unique_ptr<Plugin>>(
                                    std::make_unique<AllOrNothing>());
                              })
                    .ok());
    ASSERT_TRUE(registry_
                    .Register("SinkBinder",
                              [](const PluginArgs&, const Handle& h) {
                                return absl::StatusOr<std::unique_ptr<Plugin>>(
                                    std::make_unique<SinkBinder>(h.sink));
                              })
                    .ok());
    profile_.name = "test";
    profile_.queue_sort = "FifoSort";
    profile_.filter = {"FakeFilter"};
    profile_.score = {{"FakeScore", 1}};
    profile_.permit = {"AllOrNothing"};
    profile_.bind = {"SinkBinder"};
  }

  std::unique_ptr<Framework> Build(uint64_t seed = 1) {
    rng_ = std::make_unique<Rng>(seed);
    Handle handle{rng_.get(), &clock_, nullptr, &sink_};
    auto fw = Framework::Create(profile_, registry_, handle);
    EXPECT_TRUE(fw.ok()) << fw.status();
    return fw.ok() ? *std::move(fw) : nullptr;
  }

  Registry registry_;
  Profile profile_;
  int filter_calls_ = 0;
  ManualClock clock_;
  RecordingSink sink_;
  std::unique_ptr<Rng> rng_;
};

TEST_F(FrameworkTest, PicksHighestScoringFeasibleNode) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 4000, {{"score", "10"}})).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 4000, {{"score", "90"}, {"reject", "1"}})).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("c", 4000, {{"score", "50"}})).ok());
  auto fw = Build();
  TaskAttempt attempt = fw->PlaceTask(state, CpuTask(1000));
  ASSERT_TRUE(attempt.status.ok());
  EXPECT_EQ(attempt.placement->node, "c");
}

TEST_F(FrameworkTest, ExplainsRejectionsPerReason) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 500)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 500)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("c", 4000, {{"reject", "1"}})).ok());
  auto fw = Build();
  TaskAttempt attempt = fw->PlaceTask(state, CpuTask(1000));
  EXPECT_EQ(attempt.status.code(), SchedStatus::Code::kUnschedulable);
  EXPECT_FALSE(attempt.placement.has_value());
  EXPECT_EQ(attempt.diagnosis.ToString(), "0/3 nodes: 2 insufficient cpu, 1 node labelled reject");
  EXPECT_EQ(attempt.diagnosis.TopCode(), "InsufficientResources");
}

// A node removed after an attempt is not counted by the next one's diagnosis.
TEST_F(FrameworkTest, ARemovedNodeIsNotAmongTheNodesExplained) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 500)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 500)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("c", 4000, {{"reject", "1"}})).ok());
  auto fw = Build();
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1000)).diagnosis.ToString(),
            "0/3 nodes: 2 insufficient cpu, 1 node labelled reject");
  state.MutableNode(1).removed = true;
  TaskAttempt attempt = fw->PlaceTask(state, CpuTask(1000));
  EXPECT_EQ(attempt.diagnosis.ToString(), "0/2 nodes: 1 insufficient cpu, 1 node labelled reject");
  state.MutableNode(1).removed = false;
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1000)).diagnosis.ToString(),
            "0/3 nodes: 2 insufficient cpu, 1 node labelled reject");
}

// Jobs of one class told the same diagnosis again and again share it until a node changes.
TEST_F(FrameworkTest, ARepeatedDiagnosisFollowsNodesAddedAndChanged) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 500)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 500)).ok());
  auto fw = Build();
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1000)).diagnosis.ToString(),
            "0/2 nodes: 2 insufficient cpu");
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1000)).diagnosis.ToString(),
            "0/2 nodes: 2 insufficient cpu");
  ASSERT_TRUE(state.AddNode(MakeNode("c", 4000, {{"reject", "1"}})).ok());
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1000)).diagnosis.ToString(),
            "0/3 nodes: 2 insufficient cpu, 1 node labelled reject");
  state.MutableNode(0).allocatable.cpu = 4000;
  TaskAttempt attempt = fw->PlaceTask(state, CpuTask(1000));
  ASSERT_TRUE(attempt.status.ok());
  EXPECT_EQ(attempt.placement->node, "a");
}

TEST_F(FrameworkTest, ReevaluatesOnlyChangedNodes) {
  ClusterState state;
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(state.AddNode(MakeNode("n" + std::to_string(i), 4000)).ok());
  auto fw = Build();
  TaskAttempt first = fw->PlaceTask(state, CpuTask(1000));
  ASSERT_TRUE(first.status.ok());
  EXPECT_EQ(filter_calls_, 10);
  ASSERT_TRUE(state.Assume(CpuTask(1000), *first.placement).ok());
  TaskAttempt second = fw->PlaceTask(state, CpuTask(1000));
  ASSERT_TRUE(second.status.ok());
  EXPECT_EQ(filter_calls_, 11) << "only the node that changed is filtered again";
  fw->PlaceTask(state, CpuTask(2000));  // another equivalence class: a full pass
  EXPECT_EQ(filter_calls_, 21);
}

TEST_F(FrameworkTest, CacheSeesNodeChangesMadeThroughMutableNode) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 4000, {{"score", "80"}})).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 4000, {{"score", "20"}})).ok());
  auto fw = Build();
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1)).placement->node, "a");
  state.MutableNode(0).labels["reject"] = "1";
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1)).placement->node, "b");
}

TEST_F(FrameworkTest, TiesAreBrokenUniformlyAndReproduciblyBySeed) {
  ClusterState state;
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(state.AddNode(MakeNode("n" + std::to_string(i), 4000)).ok());
  std::map<std::string, int> picks;
  auto fw = Build(42);
  std::vector<std::string> sequence;
  for (int k = 0; k < 4000; ++k) {
    std::string node = fw->PlaceTask(state, CpuTask(1)).placement->node;
    ++picks[node];
    if (k < 20) sequence.push_back(node);
  }
  ASSERT_EQ(picks.size(), 4u);
  for (const auto& [node, count] : picks) EXPECT_NEAR(count, 1000, 150) << node;
  auto again = Build(42);
  for (const std::string& expected : sequence) {
    EXPECT_EQ(again->PlaceTask(state, CpuTask(1)).placement->node, expected);
  }
}

TEST_F(FrameworkTest, TieBreakFirstTakesTheLowestNodeIndex) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("low-score", 4000, {{"score", "1"}})).ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(state.AddNode(MakeNode("n" + std::to_string(i), 4000, {{"score", "7"}})).ok());
  }
  profile_.tie_break = TieBreak::kFirst;
  auto fw = Build();
  for (int k = 0; k < 10; ++k) EXPECT_EQ(fw->PlaceTask(state, CpuTask(1)).placement->node, "n0");
}

TEST_F(FrameworkTest, GangIsAllOrNothing) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 2000)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 2000)).ok());
  auto fw = Build();
  std::vector<TaskRequest> three(3, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "big", three, 3);
  EXPECT_FALSE(gang.status.ok());
  EXPECT_EQ(gang.failed_task, 2);
  EXPECT_TRUE(gang.placements.empty());
  EXPECT_TRUE(sink_.bound.empty());
  EXPECT_EQ(state.node(0).allocated.cpu, 0) << "a failed gang holds nothing";
  EXPECT_EQ(state.node(1).allocated.cpu, 0);

  GangAttempt two = fw->ScheduleGang(state, "small", std::span(three).first(2), 2);
  ASSERT_TRUE(two.status.ok());
  EXPECT_EQ(sink_.bound.size(), 2u);
  EXPECT_EQ(state.node(0).allocated.cpu + state.node(1).allocated.cpu, 4000);
}

TEST_F(FrameworkTest, TasksBeyondMinAvailableArePlacedAsCapacityAllows) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 2000)).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 2000)).ok());
  auto fw = Build();
  std::vector<TaskRequest> four(4, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "elastic", four, 2);
  ASSERT_TRUE(gang.status.ok());
  EXPECT_EQ(gang.placements.size(), 2u);
  EXPECT_EQ(gang.task_indices, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(gang.failed_task, 2);
}

TEST_F(FrameworkTest, DryRunLeavesStateUnchanged) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 2000)).ok());
  auto fw = Build();
  std::vector<TaskRequest> one(1, CpuTask(1000));
  GangAttempt gang = fw->ScheduleGang(state, "probe", one, 1, MatchMode::kWithoutAllocating);
  ASSERT_TRUE(gang.status.ok());
  EXPECT_EQ(gang.placements.size(), 1u);
  EXPECT_EQ(state.node(0).allocated.cpu, 0);
  EXPECT_TRUE(sink_.bound.empty());
}

TEST_F(FrameworkTest, SatisfiabilityJudgesNodesAsIfEmpty) {
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 2000)).ok());
  auto fw = Build();
  Placement p;
  p.node_index = 0;
  p.node = "a";
  ASSERT_TRUE(state.Assume(CpuTask(2000), p).ok());
  EXPECT_FALSE(fw->PlaceTask(state, CpuTask(1000)).status.ok());
  EXPECT_TRUE(fw->PlaceTask(state, CpuTask(1000), MatchMode::kSatisfiability).status.ok());
  TaskAttempt never = fw->PlaceTask(state, CpuTask(3000), MatchMode::kSatisfiability);
  EXPECT_EQ(never.status.code(), SchedStatus::Code::kUnschedulableAndUnresolvable);
}

TEST_F(FrameworkTest, CreateRejectsBadProfiles) {
  Handle handle{nullptr, &clock_, nullptr, &sink_};
  Profile unknown = profile_;
  unknown.filter.push_back("NoSuchPlugin");
  EXPECT_EQ(Framework::Create(unknown, registry_, handle).status().message(),
            "profile test: unknown plugin \"NoSuchPlugin\"");
  Profile wrong_point = profile_;
  wrong_point.filter.push_back("FakeScore");
  EXPECT_EQ(Framework::Create(wrong_point, registry_, handle).status().message(),
            "profile: filter: plugin \"FakeScore\" does not implement filter");
  Profile stray_args = profile_;
  stray_args.plugin_args["Other"] = {};
  EXPECT_FALSE(Framework::Create(stray_args, registry_, handle).ok());
}

// Scores 100 on nodes labelled cheap; steps aside (PreScore Skip) while there is one cluster.
class ClusterLevelScore : public PreScorePlugin, public ScorePlugin {
 public:
  explicit ClusterLevelScore(int* calls) : calls_(calls) {}
  std::string_view name() const override { return "ClusterLevelScore"; }
  SchedStatus PreScore(CycleState& state, const TaskRequest&) override {
    return state.Read(kClusterCountKey) == nullptr ? SchedStatus::Skip() : SchedStatus();
  }
  SchedStatus Score(const CycleState&, const TaskRequest&, const Node& node,
                    int64_t* score) const override {
    ++*calls_;
    *score = node.labels.contains("cheap") ? 100 : 0;
    return {};
  }

 private:
  int* calls_;
};

TEST_F(FrameworkTest, AScorerWhosePreScoreSkipsIsNotCalledAndCachesFollowTheClusterCount) {
  int calls = 0;
  ASSERT_TRUE(registry_
                  .Register("ClusterLevelScore",
                            [&calls](const PluginArgs&, const Handle&) {
                              return absl::StatusOr<std::unique_ptr<Plugin>>(
                                  std::make_unique<ClusterLevelScore>(&calls));
                            })
                  .ok());
  profile_.pre_score = {"ClusterLevelScore"};
  profile_.score = {{"FakeScore", 1}, {"ClusterLevelScore", 10}};
  ClusterState state;
  ASSERT_TRUE(state.AddNode(MakeNode("a", 4000, {{"score", "90"}})).ok());
  ASSERT_TRUE(state.AddNode(MakeNode("b", 4000, {{"score", "10"}, {"cheap", "1"}})).ok());
  auto fw = Build();
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1)).placement->node, "a");
  EXPECT_EQ(calls, 0) << "one cluster: the cluster-level scorer is skipped";
  Node other = MakeNode("c", 4000, {{"score", "10"}});
  other.cluster = "elsewhere";
  ASSERT_TRUE(state.AddNode(std::move(other)).ok());
  EXPECT_EQ(fw->PlaceTask(state, CpuTask(1)).placement->node, "b")
      << "two clusters: cached totals without the scorer were dropped";
  EXPECT_EQ(calls, 3);
}

// Nodes of two clusters: east (a, b) and west (c, d), 2000 millicores each; west scores higher.
class FrameworkClustersTest : public FrameworkTest {
 protected:
  void AddClusters(ClusterState& state, const std::string& west_score = "90") {
    AddIn(state, "a", "east", "50");
    AddIn(state, "b", "east", "50");
    AddIn(state, "c", "west", west_score);
    AddIn(state, "d", "west", west_score);
  }
  void AddIn(ClusterState& state, std::string name, std::string cluster, std::string score) {
    Node node = MakeNode(std::move(name), 2000, {{"score", std::move(score)}});
    node.cluster = std::move(cluster);
    ASSERT_TRUE(state.AddNode(std::move(node)).ok());
  }
  // A 4000-millicore node of `cluster` that the fake filter rejects.
  void AddRejectedIn(ClusterState& state, std::string name, std::string cluster) {
    Node node = MakeNode(std::move(name), 4000, {{"score", "90"}, {"reject", "1"}});
    node.cluster = std::move(cluster);
    ASSERT_TRUE(state.AddNode(std::move(node)).ok());
  }
  static std::set<std::string> ClustersOf(const ClusterState& state, const GangAttempt& gang) {
    std::set<std::string> clusters;
    for (const Placement& p : gang.placements) clusters.insert(state.node(p.node_index).cluster);
    return clusters;
  }
};

TEST_F(FrameworkClustersTest, GangGoesToTheBestClusterWhole) {
  ClusterState state;
  AddClusters(state);
  auto fw = Build();
  std::vector<TaskRequest> two(2, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "pair", two, 2);
  ASSERT_TRUE(gang.status.ok());
  EXPECT_EQ(ClustersOf(state, gang), (std::set<std::string>{"west"}));
  // West is full now: the next pair takes east as a whole.
  GangAttempt next = fw->ScheduleGang(state, "pair-2", two, 2);
  ASSERT_TRUE(next.status.ok());
  EXPECT_EQ(ClustersOf(state, next), (std::set<std::string>{"east"}));
}

TEST_F(FrameworkClustersTest, GangThatFitsOnlySplitWaitsAndSaysWhy) {
  ClusterState state;
  AddClusters(state);
  auto fw = Build();
  std::vector<TaskRequest> three(3, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "big", three, 3);
  EXPECT_FALSE(gang.status.ok());
  EXPECT_TRUE(gang.placements.empty());
  EXPECT_TRUE(sink_.bound.empty());
  for (int32_t i = 0; i < state.size(); ++i) EXPECT_EQ(state.node(i).allocated.cpu, 0);
  EXPECT_EQ(gang.failed_task, 2);
  EXPECT_EQ(gang.diagnosis.ToString(), "0/4 nodes: 4 insufficient cpu");
  EXPECT_EQ(gang.note,
            "the gang fits no single cluster (a gang runs within one cluster; gang tasks that "
            "fit: west 2, east 2 of 3)");
}

TEST_F(FrameworkClustersTest, TheSplitNoteCountsTasksOfAnotherShapeAfterTheFirstFailure) {
  ClusterState state;
  for (const auto& [name, cluster] : std::vector<std::pair<std::string, std::string>>{
           {"a", "east"}, {"b", "east"}, {"c", "west"}, {"d", "west"}}) {
    Node node = MakeNode(name, 3000, {{"score", "50"}});
    node.cluster = cluster;
    ASSERT_TRUE(state.AddNode(std::move(node)).ok());
  }
  auto fw = Build();
  // Per cluster two 2000m tasks fit, and then both 1000m ones beside them: 4 of 6, so the
  // gang would fit split across the two clusters, though the third 2000m task ends each try.
  std::vector<TaskRequest> tasks(4, CpuTask(2000));
  tasks.push_back(CpuTask(1000));
  tasks.push_back(CpuTask(1000));
  GangAttempt gang = fw->ScheduleGang(state, "mixed", tasks, 6);
  EXPECT_FALSE(gang.status.ok());
  EXPECT_EQ(gang.failed_task, 2);
  EXPECT_TRUE(gang.placements.empty());
  for (int32_t i = 0; i < state.size(); ++i) EXPECT_EQ(state.node(i).allocated.cpu, 0);
  EXPECT_THAT(gang.note, ::testing::HasSubstr("the gang fits no single cluster"));
  EXPECT_THAT(gang.note, ::testing::HasSubstr("4 of 6)"));
}

TEST_F(FrameworkClustersTest, NoNoteWhenTheGangWouldNotFitSplitEither) {
  ClusterState state;
  AddClusters(state);
  auto fw = Build();
  std::vector<TaskRequest> five(5, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "huge", five, 5);
  EXPECT_FALSE(gang.status.ok());
  EXPECT_TRUE(gang.note.empty());
}

TEST_F(FrameworkClustersTest, ClusterWhereTheFirstTaskFitsNowhereIsSkippedAndCounted) {
  ClusterState state;
  AddIn(state, "a", "east", "50");
  AddIn(state, "b", "east", "50");
  AddRejectedIn(state, "c", "west");
  auto fw = Build();
  std::vector<TaskRequest> three(3, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "big", three, 3);
  EXPECT_FALSE(gang.status.ok());
  EXPECT_EQ(gang.diagnosis.ToString(), "0/3 nodes: 2 insufficient cpu, 1 node labelled reject");
  EXPECT_TRUE(gang.note.empty()) << "2 tasks fit in all: not a split";
}

TEST_F(FrameworkClustersTest, EverySkippedClusterCountsItsNodesOnce) {
  ClusterState state;
  AddIn(state, "a", "east", "50");
  for (const char* cluster : {"north", "south", "west"}) {
    for (int k = 0; k < 2; ++k) AddRejectedIn(state, fmt::format("{}-{}", cluster, k), cluster);
  }
  auto fw = Build();
  std::vector<TaskRequest> two(2, CpuTask(2000));
  GangAttempt gang = fw->ScheduleGang(state, "pair", two, 2);
  EXPECT_FALSE(gang.status.ok());
  EXPECT_EQ(gang.diagnosis.ToString(), "0/7 nodes: 6 node labelled reject, 1 insufficient cpu");
}

TEST_F(FrameworkClustersTest, ANamedClusterIsTheOnlyOneConsidered) {
  ClusterState state;
  AddClusters(state);
  auto fw = Build();
  std::vector<TaskRequest> one(1, CpuTask(1000));
  GangAttempt east = fw->ScheduleGang(state, "j", one, 1, MatchMode::kAllocate, "east");
  ASSERT_TRUE(east.status.ok());
  EXPECT_EQ(ClustersOf(state, east), (std::set<std::string>{"east"}));
  GangAttempt nowhere = fw->ScheduleGang(state, "j", one, 1, MatchMode::kAllocate, "north");
  EXPECT_FALSE(nowhere.status.ok());
  EXPECT_EQ(nowhere.failed_task, 0);
}

TEST_F(FrameworkClustersTest, ASingleTaskTakesTheBestNodeOfAnyCluster) {
  ClusterState state;
  AddClusters(state);
  auto fw = Build();
  std::vector<TaskRequest> one(1, CpuTask(1000));
  GangAttempt gang = fw->ScheduleGang(state, "j", one, 1);
  ASSERT_TRUE(gang.status.ok());
  EXPECT_EQ(ClustersOf(state, gang), (std::set<std::string>{"west"}));
}

TEST_F(FrameworkClustersTest, PerClusterTreesFollowChangesAndNewNodes) {
  ClusterState state;
  AddClusters(state, "10");  // east is better now
  auto fw = Build();
  std::vector<TaskRequest> two(2, CpuTask(2000));
  GangAttempt dry = fw->ScheduleGang(state, "p", two, 2, MatchMode::kWithoutAllocating);
  ASSERT_TRUE(dry.status.ok());
  EXPECT_EQ(ClustersOf(state, dry), (std::set<std::string>{"east"}));
  // Half of east is taken: the pair goes west.
  Placement on_a;
  on_a.node_index = 0;
  on_a.node = "a";
  ASSERT_TRUE(state.Assume(CpuTask(1000), on_a).ok());
  GangAttempt west = fw->ScheduleGang(state, "p", two, 2, MatchMode::kWithoutAllocating);
  ASSERT_TRUE(west.status.ok());
  EXPECT_EQ(ClustersOf(state, west), (std::set<std::string>{"west"}));
  // A third cluster appears with the best nodes.
  AddIn(state, "e", "north", "99");
  AddIn(state, "f", "north", "99");
  GangAttempt north = fw->ScheduleGang(state, "p", two, 2, MatchMode::kWithoutAllocating);
  ASSERT_TRUE(north.status.ok());
  EXPECT_EQ(ClustersOf(state, north), (std::set<std::string>{"north"}));
  state.Forget(CpuTask(1000), on_a);
  state.MutableNode(4).labels["reject"] = "1";
  GangAttempt east = fw->ScheduleGang(state, "p", two, 2, MatchMode::kWithoutAllocating);
  ASSERT_TRUE(east.status.ok());
  EXPECT_EQ(ClustersOf(state, east), (std::set<std::string>{"east"}));
}

TEST_F(FrameworkClustersTest, EqualClustersAreDrawnByTheTieBreak) {
  ClusterState state;
  AddClusters(state, "50");
  std::vector<TaskRequest> two(2, CpuTask(2000));
  std::map<std::string, int> picks;
  auto fw = Build(7);
  for (int k = 0; k < 200; ++k) {
    GangAttempt gang = fw->ScheduleGang(state, "p", two, 2, MatchMode::kWithoutAllocating);
    ASSERT_TRUE(gang.status.ok());
    ASSERT_EQ(ClustersOf(state, gang).size(), 1u);
    ++picks[*ClustersOf(state, gang).begin()];
  }
  EXPECT_EQ(picks.size(), 2u) << "random tie-break: both clusters are drawn";
  profile_.tie_break = TieBreak::kFirst;
  auto first = Build(7);
  for (int k = 0; k < 10; ++k) {
    GangAttempt gang = first->ScheduleGang(state, "p", two, 2, MatchMode::kWithoutAllocating);
    EXPECT_EQ(ClustersOf(state, gang), (std::set<std::string>{"east"}));
  }
}

}  // namespace
}  // namespace tessera

#include "sched/preemption/victim_search.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/builtin.h"
#include "sched/profile.h"
#include "tessera/common/rng.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kGi = int64_t{1} << 30;

// Victim search never binds; a sink is required by the default binder all the same.
class NoSink final : public DecisionSink {
 public:
  absl::Status Bind(std::string_view, int32_t, const Placement&) override {
    return absl::OkStatus();
  }
};

Node GpuNode(std::string name, int32_t gpus) {
  Node node;
  node.name = std::move(name);
  node.capacity.cpu = 64'000;
  node.capacity.memory = 512 * kGi;
  node.capacity.gpu = gpus * kMilliGpuPerDevice;
  for (int32_t i = 0; i < gpus; ++i) {
    node.gpus.push_back(GpuDevice{.index = i, .model = "A100", .memory = 80 * kGi});
  }
  node.capacity.gpu_memory = gpus * 80 * kGi;
  node.allocatable = node.capacity;
  return node;
}

TaskRequest GpuTask(int32_t gpus, int64_t cpu = 1000) {
  TaskRequest task;
  task.cpu = cpu;
  task.memory = kGi;
  task.gpu_count = gpus;
  task.gpu_milli = kMilliGpuPerDevice;
  return task;
}

TimePoint At(int64_t seconds) { return TimePoint{} + std::chrono::seconds(seconds); }

class VictimSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok()) << profile.status();
    Handle handle{.rng = &rng_, .clock = &clock_, .sink = &sink_};
    absl::StatusOr<std::unique_ptr<Framework>> fw =
        Framework::Create(*profile, BuiltinPlugins(), handle);
    ASSERT_TRUE(fw.ok()) << fw.status();
    framework_ = *std::move(fw);
  }

  void AddNodes(int32_t count, int32_t gpus) {
    for (int32_t i = 0; i < count; ++i) {
      ASSERT_TRUE(state_.AddNode(GpuNode("n" + std::to_string(state_.size()), gpus)).ok());
    }
  }

  // Runs a gang of `tasks` on the given nodes (one task per entry), and offers it as a candidate.
  int32_t Run(int32_t priority, TimePoint start, std::vector<std::pair<int32_t, TaskRequest>> on) {
    VictimCandidate c;
    c.job = static_cast<int64_t>(candidates_.size());
    c.priority = priority;
    c.start_time = start;
    for (auto& [node, task] : on) {
      Placement p;
      p.node_index = node;
      p.node = state_.node(node).name;
      for (const GpuDevice& d : state_.node(node).gpus) {
        if (static_cast<int32_t>(p.gpus.size()) < task.gpu_count &&
            d.FreeMilli() >= task.gpu_milli) {
          p.gpus.push_back(d.index);
        }
      }
      p.gpu_milli = task.gpu_count > 0 ? task.gpu_milli : 0;
      EXPECT_TRUE(state_.Assume(task, p).ok());
      c.tasks.push_back(task);
      c.placements.push_back(p);
    }
    candidates_.push_back(std::move(c));
    return static_cast<int32_t>(candidates_.size()) - 1;
  }

  // Everything an allocation changes on every node.
  std::vector<std::string> Allocations() const {
    std::vector<std::string> out;
    for (const Node& n : state_.nodes()) {
      std::string s = n.allocated.ToString();
      for (const GpuDevice& d : n.gpus) {
        s += " " + std::to_string(d.used_milli) + "/" + std::to_string(d.used_memory);
      }
      for (const auto& [cls, count] : n.hosted_gpu_classes) {
        s += " c" + std::to_string(cls) + "=" + std::to_string(count);
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  std::optional<VictimChoice> Find(std::vector<TaskRequest> tasks, int32_t min_available) {
    const std::vector<std::string> before = Allocations();
    std::optional<VictimChoice> choice =
        FindVictims(state_, *framework_, tasks, min_available, candidates_);
    EXPECT_EQ(Allocations(), before) << "the state must be left as given";
    return choice;
  }

  Rng rng_{1};
  NoSink sink_;
  ManualClock clock_;
  std::unique_ptr<Framework> framework_;
  ClusterState state_;
  std::vector<VictimCandidate> candidates_;
};

TEST_F(VictimSearchTest, EvictsTheTwoLowestOfThreeJobs) {
  AddNodes(1, 3);
  Run(1, At(10), {{0, GpuTask(1)}});
  Run(0, At(20), {{0, GpuTask(1)}});
  Run(0, At(5), {{0, GpuTask(1)}});
  std::optional<VictimChoice> choice = Find({GpuTask(2)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(1, 2));
  ASSERT_EQ(choice->placements.size(), 1u);
  EXPECT_EQ(choice->placements[0].node_index, 0);
}

TEST_F(VictimSearchTest, NothingWhenTheGangFitsAlready) {
  AddNodes(2, 2);
  Run(0, At(1), {{0, GpuTask(2)}});
  std::optional<VictimChoice> choice = Find({GpuTask(2)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, IsEmpty());
  EXPECT_EQ(choice->placements[0].node_index, 1);
}

TEST_F(VictimSearchTest, NulloptWhenEvenEvictingEverythingDoesNotHelp) {
  AddNodes(2, 4);
  Run(0, At(1), {{0, GpuTask(4)}});
  Run(0, At(1), {{1, GpuTask(4)}});
  EXPECT_FALSE(Find({GpuTask(8)}, 1).has_value());
}

TEST_F(VictimSearchTest, AmongEqualPrioritiesTheYoungestGo) {
  AddNodes(1, 3);
  Run(0, At(5), {{0, GpuTask(1)}});
  Run(0, At(30), {{0, GpuTask(1)}});
  Run(0, At(10), {{0, GpuTask(1)}});
  std::optional<VictimChoice> one = Find({GpuTask(1)}, 1);
  ASSERT_TRUE(one.has_value());
  EXPECT_THAT(one->victims, ElementsAre(1));
  std::optional<VictimChoice> two = Find({GpuTask(2)}, 1);
  ASSERT_TRUE(two.has_value());
  EXPECT_THAT(two->victims, ElementsAre(1, 2));
}

TEST_F(VictimSearchTest, LowerPriorityBeatsFewerVictims) {
  AddNodes(2, 2);
  Run(0, At(1), {{0, GpuTask(1)}});
  Run(0, At(1), {{0, GpuTask(1)}});
  Run(1, At(50), {{1, GpuTask(2)}});
  std::optional<VictimChoice> choice = Find({GpuTask(2)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(0, 1));
  EXPECT_EQ(choice->placements[0].node_index, 0);
}

TEST_F(VictimSearchTest, FewerVictimsBeatYounger) {
  AddNodes(2, 2);
  Run(0, At(100), {{0, GpuTask(1)}});
  Run(0, At(100), {{0, GpuTask(1)}});
  Run(0, At(1), {{1, GpuTask(2)}});
  std::optional<VictimChoice> choice = Find({GpuTask(2)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(2));
  EXPECT_EQ(choice->placements[0].node_index, 1);
}

TEST_F(VictimSearchTest, OnlyWhatHoldsTheNeededResourceIsEvicted) {
  AddNodes(1, 2);
  Run(0, At(90), {{0, GpuTask(0, 8000)}});  // CPU-only, the youngest
  Run(0, At(10), {{0, GpuTask(2)}});
  std::optional<VictimChoice> choice = Find({GpuTask(1)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(1));
}

TEST_F(VictimSearchTest, AGangIsEvictedWhole) {
  AddNodes(2, 4);
  // Job 0 is a gang with two GPUs on each node; jobs 1 and 2 hold the other two of each node.
  Run(0, At(10), {{0, GpuTask(2)}, {1, GpuTask(2)}});
  Run(0, At(20), {{0, GpuTask(2)}});
  Run(0, At(5), {{1, GpuTask(2)}});
  // Four GPUs on one node: the gang and the job beside it, the younger of the two pairs.
  std::optional<VictimChoice> one = Find({GpuTask(4)}, 1);
  ASSERT_TRUE(one.has_value());
  EXPECT_THAT(one->victims, ElementsAre(0, 1));
  EXPECT_EQ(one->placements[0].node_index, 0);
  // Two GPUs on each of both nodes: evicting the gang alone frees both halves.
  std::optional<VictimChoice> pair = Find({GpuTask(2), GpuTask(2)}, 2);
  ASSERT_TRUE(pair.has_value());
  EXPECT_THAT(pair->victims, ElementsAre(0));
  ASSERT_EQ(pair->placements.size(), 2u);
  EXPECT_NE(pair->placements[0].node_index, pair->placements[1].node_index);
}

TEST_F(VictimSearchTest, AGangPreemptorGetsRoomOnSeveralNodes) {
  AddNodes(4, 2);
  for (int32_t node = 0; node < 4; ++node) {
    Run(node, At(node), {{node, GpuTask(1)}});
    Run(0, At(100 + node), {{node, GpuTask(1)}});
  }
  // Each node holds a job of priority `node` and a younger one of priority 0. Three tasks of
  // two GPUs: nodes 0, 1 and 2 are emptied (highest victim priority 2, not 3).
  std::optional<VictimChoice> choice = Find({GpuTask(2), GpuTask(2), GpuTask(2)}, 3);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(choice->placements.size(), 3u);
}

TEST_F(VictimSearchTest, NulloptForAGangThatCannotFitEvenAfterEvictions) {
  AddNodes(2, 2);
  Run(0, At(1), {{0, GpuTask(2)}});
  // Node 1 is held by a job that is not a candidate.
  Run(5, At(1), {{1, GpuTask(2)}});
  candidates_.pop_back();
  EXPECT_FALSE(Find({GpuTask(2), GpuTask(2)}, 2).has_value());
  // With a smaller gang one task is enough.
  std::optional<VictimChoice> choice = Find({GpuTask(2), GpuTask(2)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(0));
}

TEST_F(VictimSearchTest, ANodeAnotherFilterRefusesIsPassedOver) {
  AddNodes(2, 1);
  state_.MutableNode(0).taints.push_back(Taint{.key = "reserved", .value = "yes"});
  Run(0, At(1), {{0, GpuTask(1)}});  // the better victim, on a node the preemptor may not use
  Run(1, At(1), {{1, GpuTask(1)}});
  std::optional<VictimChoice> choice = Find({GpuTask(1)}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(1));
  EXPECT_EQ(choice->placements[0].node_index, 1);
}

TEST_F(VictimSearchTest, NoCandidates) {
  AddNodes(1, 1);
  Run(0, At(1), {{0, GpuTask(1)}});
  candidates_.clear();
  EXPECT_FALSE(Find({GpuTask(1)}, 1).has_value());
}

TEST_F(VictimSearchTest, SharedGpusAreFreedByTheirSharers) {
  AddNodes(1, 1);
  TaskRequest half = GpuTask(1);
  half.gpu_milli = 500;
  Run(0, At(1), {{0, half}});
  Run(0, At(2), {{0, half}});
  TaskRequest quarter = half;
  quarter.gpu_milli = 250;
  std::optional<VictimChoice> choice = Find({quarter}, 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_THAT(choice->victims, ElementsAre(1));  // one sharer, the younger
}

}  // namespace
}  // namespace tessera

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
        if (static_cast<int32_t>(p.gpus.size()) < task.gpu_count && d.IsFullyFree()) {
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

  std::vector<Resources> Allocations() const {
    std::vector<Resources> out;
    for (const Node& n : state_.nodes()) out.push_back(n.allocated);
    return out;
  }

  std::optional<VictimChoice> Find(std::vector<TaskRequest> tasks, int32_t min_available) {
    const std::vector<Resources> before = Allocations();
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

}  // namespace
}  // namespace tessera

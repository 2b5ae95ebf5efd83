#include "sched/scheduler.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/builtin.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kGi = int64_t{1} << 30;

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

JobSpec GpuJob(std::string name, int32_t replicas, int32_t gpus_per_task,
               std::optional<int32_t> min_available = std::nullopt, int32_t priority = 0) {
  JobSpec spec;
  spec.name = std::move(name);
  spec.priority = priority;
  spec.min_available = min_available;
  TaskGroup group;
  group.name = "worker";
  group.replicas = replicas;
  group.request.cpu = 1000;
  group.request.gpu_count = gpus_per_task;
  group.request.gpu_milli = kMilliGpuPerDevice;
  spec.tasks.push_back(group);
  return spec;
}

struct Placed {
  std::string job;
  bool gang;
  std::vector<int32_t> tasks;
};

class RecordingSink : public SchedulerSink {
 public:
  void OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) override {
    Placed p{std::string(job), gang, {}};
    for (const TaskBinding& b : tasks) p.tasks.push_back(b.task);
    placed.push_back(std::move(p));
  }
  void OnRefused(std::string_view job, const PendingReason& reason) override {
    refused.push_back(std::string(job) + ": " + reason.code);
  }
  void OnPending(std::string_view job, const PendingReason& reason) override {
    pending.push_back(std::string(job) + ": " + reason.code);
  }

  std::vector<Placed> placed;
  std::vector<std::string> refused;
  std::vector<std::string> pending;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok()) << profile.status();
    absl::StatusOr<std::unique_ptr<Scheduler>> s =
        Scheduler::Create(*profile, BuiltinPlugins(), SchedulerEnv{.rng = &rng_, .clock = &clock_});
    ASSERT_TRUE(s.ok()) << s.status();
    scheduler_ = *std::move(s);
  }

  void AddNodes(int32_t n, int32_t gpus) {
    for (int32_t i = 0; i < n; ++i) {
      ASSERT_TRUE(state_.AddNode(GpuNode("n" + std::to_string(state_.size()), gpus)).ok());
    }
  }
  int64_t AllocatedGpu() const {
    int64_t total = 0;
    for (const Node& node : state_.nodes()) total += node.allocated.gpu;
    return total;
  }
  void Cycle() { scheduler_->RunCycle(state_, sink_); }

  Rng rng_{1};
  ManualClock clock_;
  ClusterState state_;
  RecordingSink sink_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, GangThatDoesNotFitHoldsNothingAndHasAReason) {
  AddNodes(2, 8);
  ASSERT_TRUE(scheduler_->Submit("big", GpuJob("big", 3, 8)).ok());
  Cycle();
  EXPECT_TRUE(sink_.placed.empty());
  EXPECT_EQ(AllocatedGpu(), 0);
  ASSERT_NE(scheduler_->Reason("big"), nullptr);
  EXPECT_EQ(scheduler_->Reason("big")->code, "InsufficientResources");
  EXPECT_THAT(scheduler_->Reason("big")->message, HasSubstr("task worker-2"));
  Cycle();  // the same reason is reported once
  EXPECT_THAT(sink_.pending, ElementsAre("big: InsufficientResources"));
}

TEST_F(SchedulerTest, PlacesTasksBeyondTheGangAsCapacityAllows) {
  AddNodes(2, 8);
  ASSERT_TRUE(scheduler_->Submit("elastic", GpuJob("elastic", 3, 8, 2)).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_TRUE(sink_.placed[0].gang);
  EXPECT_THAT(sink_.placed[0].tasks, ElementsAre(0, 1));
  EXPECT_EQ(scheduler_->Reason("elastic"), nullptr);
  AddNodes(1, 8);
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 2u);
  EXPECT_FALSE(sink_.placed[1].gang);
  EXPECT_THAT(sink_.placed[1].tasks, ElementsAre(2));
  EXPECT_EQ(AllocatedGpu(), 24'000);
}

TEST_F(SchedulerTest, RefusesAJobThatFitsNoNodeEvenWhenEmpty) {
  AddNodes(2, 8);
  ASSERT_TRUE(scheduler_->Submit("huge", GpuJob("huge", 1, 16)).ok());
  Cycle();
  EXPECT_THAT(sink_.refused, ElementsAre("huge: Refused"));
  EXPECT_EQ(scheduler_->Tasks("huge"), nullptr);
}

TEST_F(SchedulerTest, BusyOrCordonedNodesDoNotMakeAJobRefused) {
  AddNodes(1, 8);
  state_.MutableNode(0).unschedulable = true;
  ASSERT_TRUE(scheduler_->Submit("a", GpuJob("a", 1, 8)).ok());
  Cycle();
  EXPECT_TRUE(sink_.refused.empty());
  EXPECT_EQ(scheduler_->Reason("a")->code, "NodeUnavailable");
}

TEST_F(SchedulerTest, HigherPriorityIsTriedFirst) {
  AddNodes(1, 8);
  ASSERT_TRUE(scheduler_->Submit("low", GpuJob("low", 1, 8, std::nullopt, 0)).ok());
  ASSERT_TRUE(scheduler_->Submit("high", GpuJob("high", 1, 8, std::nullopt, 10)).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_EQ(sink_.placed[0].job, "high");
  EXPECT_EQ(scheduler_->Reason("low")->code, "InsufficientResources");
}

TEST_F(SchedulerTest, ABlockedJobDoesNotBlockSmallerOnesBehindIt) {
  AddNodes(1, 8);
  ASSERT_TRUE(scheduler_->Submit("wide", GpuJob("wide", 2, 8)).ok());
  ASSERT_TRUE(scheduler_->Submit("small", GpuJob("small", 1, 4)).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_EQ(sink_.placed[0].job, "small");
}

TEST_F(SchedulerTest, HeldJobsWaitAndRequeuedJobsBackOff) {
  AddNodes(1, 8);
  ASSERT_TRUE(scheduler_->Submit("a", GpuJob("a", 1, 8)).ok());
  ASSERT_TRUE(scheduler_->Hold("a").ok());
  Cycle();
  EXPECT_TRUE(sink_.placed.empty());
  EXPECT_EQ(scheduler_->Reason("a"), nullptr);
  ASSERT_TRUE(scheduler_->Requeue("a", TimePoint{} + std::chrono::seconds(30)).ok());
  Cycle();
  EXPECT_TRUE(sink_.placed.empty());
  EXPECT_EQ(scheduler_->Reason("a")->code, "Backoff");
  clock_.Set(TimePoint{} + std::chrono::seconds(30));
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_EQ(sink_.placed[0].job, "a");
}

// After a restart a running job is restored with its bound tasks: it is not placed again, and
// its unplaced tasks are placed as capacity allows.
TEST_F(SchedulerTest, RestoredJobKeepsItsBoundTasksAndPlacesTheRest) {
  AddNodes(1, 8);
  const JobSpec spec = GpuJob("elastic", 3, 4, /*min_available=*/1);
  ASSERT_TRUE(scheduler_->Restore("elastic", spec, std::vector<TaskBinding>{{.task = 1}}, TimePoint{}).ok());
  EXPECT_EQ(scheduler_->Reason("elastic"), nullptr);  // running, not pending
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_FALSE(sink_.placed[0].gang);
  EXPECT_THAT(sink_.placed[0].tasks, ElementsAre(0, 2));
  EXPECT_EQ(scheduler_->Restore("bad", spec, std::vector<TaskBinding>{{.task = 3}}, TimePoint{}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler_->Tasks("bad"), nullptr);
}

// A pending reason carries the per-reason node counts of the task that found no node.
TEST_F(SchedulerTest, PendingReasonCountsRejectedNodes) {
  AddNodes(3, 8);
  ASSERT_TRUE(scheduler_->Submit("fill", GpuJob("fill", 3, 4)).ok());
  Cycle();  // spreads: every node keeps 4 free GPUs
  ASSERT_TRUE(scheduler_->Submit("big", GpuJob("big", 1, 8)).ok());
  Cycle();
  const PendingReason* reason = scheduler_->Reason("big");
  ASSERT_NE(reason, nullptr);
  EXPECT_EQ(reason->total_nodes, 3);
  ASSERT_EQ(reason->rejections.size(), 1u);
  EXPECT_EQ(reason->rejections[0].second, 3);
  EXPECT_THAT(reason->rejections[0].first, HasSubstr("gpu"));
}

TEST_F(SchedulerTest, RejectsDuplicateAndInvalidJobs) {
  ASSERT_TRUE(scheduler_->Submit("a", GpuJob("a", 1, 1)).ok());
  EXPECT_EQ(scheduler_->Submit("a", GpuJob("a", 1, 1)).code(), absl::StatusCode::kAlreadyExists);
  JobSpec empty;
  empty.name = "empty";
  EXPECT_EQ(scheduler_->Submit("empty", empty).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler_->Hold("missing").code(), absl::StatusCode::kNotFound);
  scheduler_->Remove("a");
  EXPECT_EQ(scheduler_->Tasks("a"), nullptr);
}

}  // namespace
}  // namespace tessera

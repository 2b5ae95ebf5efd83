#include "sched/scheduler.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/plugins/builtin.h"
#include "sched/testing/test_nodes.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kGi = int64_t{1} << 30;

Node GpuNode(std::string name, int32_t gpus) {
  return testing::NamedGpuNode(std::move(name), gpus);
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
  std::vector<std::string> nodes;  // of each task
};

class RecordingSink : public SchedulerSink {
 public:
  void OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) override {
    Placed p{std::string(job), gang, {}};
    for (const TaskBinding& b : tasks) {
      p.tasks.push_back(b.task);
      p.nodes.push_back(b.placement.node);
    }
    placed.push_back(std::move(p));
  }
  void OnRefused(std::string_view job, const PendingReason& reason) override {
    refused.push_back(std::string(job) + ": " + reason.code);
  }
  void OnPending(std::string_view job, const PendingReason& reason) override {
    pending.push_back(std::string(job) + ": " + reason.code);
  }
  void OnAdmitted(std::string_view job) override { admitted.push_back(std::string(job)); }
  void OnPreempted(std::string_view job, const PendingReason& reason, bool requeue) override {
    preempted.push_back(std::string(job) + ": " + reason.message);
  }

  std::vector<std::string> admitted;
  std::vector<std::string> preempted;

  std::vector<Placed> placed;
  std::vector<std::string> refused;
  std::vector<std::string> pending;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override { Recreate(SchedulingPolicy{}); }
  void Recreate(const SchedulingPolicy& policy) {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok()) << profile.status();
    absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(
        *profile, BuiltinPlugins(), SchedulerEnv{.rng = &rng_, .clock = &clock_}, policy);
    ASSERT_TRUE(s.ok()) << s.status();
    scheduler_ = *std::move(s);
  }
  void At(int64_t seconds) { clock_.Set(TimePoint{} + std::chrono::seconds(seconds)); }

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
  SchedulingPolicy policy;
  policy.refuse_unfit = false;  // the control plane's policy: a gang that does not fit waits
  Recreate(policy);
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

// A new target workload reaches FGD and no score cached for the previous one is reused.
TEST(SchedulerTargetWorkloadTest, ANewWorkloadIsMeasuredAgainstFromTheNextCycle) {
  absl::StatusOr<Profile> profile = BuiltinProfile("fgd");
  ASSERT_TRUE(profile.ok()) << profile.status();
  Rng rng(1);
  ManualClock clock;
  const TargetWorkload nothing_known;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(
      *profile, BuiltinPlugins(),
      SchedulerEnv{.rng = &rng, .clock = &clock, .target_workload = &nothing_known});
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  // n1 has too little cpu for the workload's class below; n0 has plenty.
  ClusterState state;
  ASSERT_TRUE(state.AddNode(testing::NamedGpuNode("n0", 2)).ok());
  ASSERT_TRUE(state.AddNode(testing::NamedGpuNode("n1", 2, 4000)).ok());
  RecordingSink sink;
  JobSpec half = GpuJob("half", 1, 1);
  half.tasks[0].request.gpu_milli = 500;

  // Nothing known: every node scores alike and the first one takes the task.
  ASSERT_TRUE((*scheduler)->Submit("a", half).ok());
  (*scheduler)->RunCycle(state, sink);
  ASSERT_EQ(sink.placed.size(), 1u);
  EXPECT_THAT(sink.placed[0].nodes, ElementsAre("n0"));

  // Against 8-core quarter-GPU tasks, n0's GPUs stay usable whatever it takes (delta 0), while
  // n1's are all fragment already and shrink by the task (delta -500): n1 scores higher. A
  // score of n1 cached before the change would tie with n0 and lose to it.
  TargetWorkload quarters;
  quarters.classes.push_back({.request = {.cpu = 8000, .gpu_count = 1, .gpu_milli = 250},
                              .probability = 1.0});
  ASSERT_TRUE((*scheduler)->SetTargetWorkload(quarters).ok());
  ASSERT_TRUE((*scheduler)->Submit("b", half).ok());
  (*scheduler)->RunCycle(state, sink);
  ASSERT_EQ(sink.placed.size(), 2u);
  EXPECT_THAT(sink.placed[1].nodes, ElementsAre("n1"));

  quarters.classes[0].probability = 2;
  const absl::Status refused = (*scheduler)->SetTargetWorkload(quarters);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("probability"));
}

TEST_F(SchedulerTest, WithNoNodeYetAJobWaitsAndIsJudgedWhenNodesArrive) {
  ASSERT_TRUE(scheduler_->Submit("fits", GpuJob("fits", 1, 8)).ok());
  ASSERT_TRUE(scheduler_->Submit("huge", GpuJob("huge", 1, 16)).ok());
  Cycle();
  EXPECT_TRUE(sink_.refused.empty());
  EXPECT_TRUE(sink_.placed.empty());
  ASSERT_NE(scheduler_->Reason("fits"), nullptr);
  EXPECT_THAT(scheduler_->Reason("fits")->message,
              HasSubstr("0/0 nodes: no nodes in the inventory"));
  EXPECT_TRUE(scheduler_->Reason("fits")->rejections.empty());  // no node to count

  AddNodes(1, 8);
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_EQ(sink_.placed[0].job, "fits");
  EXPECT_THAT(sink_.refused, ElementsAre("huge: Refused"));
}

TEST_F(SchedulerTest, RefusesAGangThatFitsNoClusterAsAWholeEvenWhenEmpty) {
  AddNodes(2, 8);
  ASSERT_TRUE(scheduler_->Submit("big", GpuJob("big", 3, 8)).ok());
  Cycle();
  EXPECT_THAT(sink_.refused, ElementsAre("big: Refused"));
  EXPECT_EQ(AllocatedGpu(), 0);

  AddNodes(1, 8);  // the inventory changed: the same gang is judged again, and fits
  ASSERT_TRUE(scheduler_->Submit("big-again", GpuJob("big-again", 3, 8)).ok());
  Cycle();
  EXPECT_THAT(sink_.refused, ElementsAre("big: Refused"));
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_EQ(sink_.placed[0].job, "big-again");

  // A node the gang needs is tainted: a gang of the same shape no longer fits the inventory.
  state_.MutableNode(2).taints.push_back(Taint{.key = "maintenance"});
  ASSERT_TRUE(scheduler_->Submit("big-tainted", GpuJob("big-tainted", 3, 8)).ok());
  Cycle();
  EXPECT_THAT(sink_.refused, ElementsAre("big: Refused", "big-tainted: Refused"));
}

TEST_F(SchedulerTest, ANodeOfAnotherClusterCountsAsNotSelectedEvenWhenDown) {
  SchedulingPolicy policy;
  policy.refuse_unfit = false;  // the control plane's policy: a gang that does not fit waits
  Recreate(policy);
  for (const std::string cluster : {"a", "b"}) {
    Node node = GpuNode(cluster + "-n0", 8);
    node.cluster = cluster;
    node.labels["tessera.io/cluster"] = cluster;
    if (cluster == "b") node.condition = NodeCondition::kDown;
    ASSERT_TRUE(state_.AddNode(std::move(node)).ok());
  }
  JobSpec spec = GpuJob("pinned", 2, 8);
  spec.cluster_selector["tessera.io/cluster"] = "a";
  ASSERT_TRUE(scheduler_->Submit("pinned", spec).ok());
  Cycle();
  ASSERT_NE(scheduler_->Reason("pinned"), nullptr);
  EXPECT_THAT(scheduler_->Reason("pinned")->message, HasSubstr("1 cluster not selected"));
  EXPECT_THAT(scheduler_->Reason("pinned")->message, Not(HasSubstr("node is down")));
}

TEST_F(SchedulerTest, WithoutRefusalAJobThatFitsNoNodeWaitsAndItsEstimateSaysSo) {
  SchedulingPolicy policy;
  policy.refuse_unfit = false;
  Recreate(policy);
  AddNodes(2, 8);
  ASSERT_TRUE(scheduler_->Submit("huge", GpuJob("huge", 1, 16)).ok());
  Cycle();
  EXPECT_TRUE(sink_.refused.empty());
  ASSERT_NE(scheduler_->Reason("huge"), nullptr);
  EXPECT_EQ(scheduler_->Reason("huge")->code, "InsufficientResources");
  absl::StatusOr<StartEstimate> estimate = scheduler_->Estimate("huge", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->blocker, "NoFit");
  EXPECT_FALSE(estimate->start.has_value());
  EXPECT_THAT(estimate->message, HasSubstr("fits no node even on an empty cluster"));

  AddNodes(1, 16);  // a cluster that can hold it joins
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_EQ(sink_.placed[0].job, "huge");
}

// The CLI's --cluster pins a job with clusterSelector tessera.io/cluster: the nodes of the other
// clusters are out of its scope and do not hide what its own cluster lacks.
TEST_F(SchedulerTest, APinnedJobWaitsWithTheReasonOfItsOwnClusterNotTheSelectorMismatch) {
  for (const std::string cluster : {"a", "b", "b", "b"}) {
    Node node = GpuNode(cluster + "-n" + std::to_string(state_.size()), 8);
    node.cluster = cluster;
    node.labels["tessera.io/cluster"] = cluster;
    if (cluster == "a") node.condition = NodeCondition::kDown;
    ASSERT_TRUE(state_.AddNode(std::move(node)).ok());
  }
  JobSpec spec = GpuJob("pinned", 1, 8);
  spec.cluster_selector["tessera.io/cluster"] = "a";
  ASSERT_TRUE(scheduler_->Submit("pinned", spec).ok());
  Cycle();
  const PendingReason* reason = scheduler_->Reason("pinned");
  ASSERT_NE(reason, nullptr);
  EXPECT_EQ(reason->code, "NodeUnavailable");
  EXPECT_THAT(reason->message, HasSubstr("0/4 nodes: 1 node is down, 3 cluster not selected"));
  EXPECT_EQ(reason->total_nodes, 4);
  ASSERT_EQ(reason->rejections.size(), 2u);
  EXPECT_EQ(reason->rejections[0], std::make_pair(std::string("node is down"), int64_t{1}));

  // Pinned to a cluster that does not exist, every node is out of scope: that is the reason.
  spec.cluster_selector["tessera.io/cluster"] = "c";
  SchedulingPolicy keep;  // not refused: clusters may join
  keep.refuse_unfit = false;
  Recreate(keep);
  ASSERT_TRUE(scheduler_->Submit("nowhere", spec).ok());
  Cycle();
  ASSERT_NE(scheduler_->Reason("nowhere"), nullptr);
  EXPECT_EQ(scheduler_->Reason("nowhere")->code, "NodeSelectorMismatch");
}

TEST_F(SchedulerTest, EstimateOfAGangThatCanNeverFitTheClusterSaysNever) {
  SchedulingPolicy policy;
  policy.refuse_unfit = false;
  Recreate(policy);
  AddNodes(2, 8);
  // Each task fits a node, the gang of three does not fit the two.
  ASSERT_TRUE(scheduler_->Submit("wide", GpuJob("wide", 3, 8)).ok());
  Cycle();
  absl::StatusOr<StartEstimate> estimate = scheduler_->Estimate("wide", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->blocker, "NoFit");
  EXPECT_FALSE(estimate->start.has_value());
  EXPECT_THAT(estimate->message,
              HasSubstr("its gang of 3 tasks fits no cluster even when every node is empty: "
                        "task worker-2: 0/2 nodes: 2 insufficient gpu"));

  // A gang that fits the empty cluster but waits on a job without a time limit is not "never".
  ASSERT_TRUE(scheduler_->Submit("forever", GpuJob("forever", 1, 8)).ok());
  ASSERT_TRUE(scheduler_->Submit("pair", GpuJob("pair", 2, 8)).ok());
  Cycle();
  estimate = scheduler_->Estimate("pair", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->blocker, "Capacity");
  EXPECT_FALSE(estimate->start.has_value());

  AddNodes(1, 8);  // now three nodes: the wide gang can run once "forever" ends
  estimate = scheduler_->Estimate("wide", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_NE(estimate->blocker, "NoFit");
}

TEST_F(SchedulerTest, EstimateOfAGangThatFitsOnlySplitAcrossClustersSaysNever) {
  SchedulingPolicy policy;
  policy.refuse_unfit = false;
  Recreate(policy);
  for (const std::string cluster : {"a", "a", "b", "b"}) {
    Node node = GpuNode(cluster + "-n" + std::to_string(state_.size()), 8);
    node.cluster = cluster;
    node.labels["tessera.io/cluster"] = cluster;
    ASSERT_TRUE(state_.AddNode(std::move(node)).ok());
  }
  ASSERT_TRUE(scheduler_->Submit("wide", GpuJob("wide", 3, 8)).ok());
  Cycle();
  absl::StatusOr<StartEstimate> estimate = scheduler_->Estimate("wide", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->blocker, "NoFit");
  EXPECT_THAT(estimate->message, HasSubstr("the gang fits no single cluster"));
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
  ASSERT_TRUE(
      scheduler_->Restore("elastic", spec, std::vector<TaskBinding>{{.task = 1}}, TimePoint{})
          .ok());
  EXPECT_EQ(scheduler_->Reason("elastic"), nullptr);  // running, not pending
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  EXPECT_FALSE(sink_.placed[0].gang);
  EXPECT_THAT(sink_.placed[0].tasks, ElementsAre(0, 2));
  EXPECT_EQ(
      scheduler_->Restore("bad", spec, std::vector<TaskBinding>{{.task = 3}}, TimePoint{}).code(),
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

// Two leaves under a parent of 24 GPUs: team-a guaranteed 8 GPUs, free to borrow; team-b
// guaranteed 8 GPUs, borrowing nothing.
std::vector<QueueSpec> TwoTeams() {
  return {QueueSpec{.name = "org", .guaranteed = {{"gpu", 24000}}},
          QueueSpec{.name = "team-a", .parent = "org", .guaranteed = {{"gpu", 8000}}},
          QueueSpec{.name = "team-b",
                    .parent = "org",
                    .guaranteed = {{"gpu", 8000}},
                    .borrowing_limit = {{"gpu", 0}}}};
}

JobSpec InQueue(JobSpec spec, std::string queue, std::optional<Duration> limit = std::nullopt) {
  spec.queue = std::move(queue);
  spec.time_limit = limit;
  return spec;
}

// The reason of a job behind a strict-FIFO head names no position, so it is not sent again
// at every cycle as the jobs ahead move; the estimate gives the position.
TEST_F(SchedulerTest, AJobBehindAStrictFifoHeadIsToldOnceAndItsEstimateGivesThePosition) {
  const std::vector<QueueSpec> queues = {
      QueueSpec{.name = "q", .ordering = QueueOrdering::kStrictFifo}};
  ASSERT_TRUE(scheduler_->SetQueues(queues).ok());
  AddNodes(1, 8);
  ASSERT_TRUE(scheduler_->Submit("occupant", InQueue(GpuJob("occupant", 1, 8), "q")).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 1u);
  for (const char* name : {"head", "next", "last"}) {
    ASSERT_TRUE(scheduler_->Submit(name, InQueue(GpuJob(name, 1, 4), "q")).ok());
  }
  for (int i = 0; i < 3; ++i) Cycle();
  ASSERT_NE(scheduler_->Reason("last"), nullptr);
  EXPECT_EQ(scheduler_->Reason("last")->message, "behind an earlier job of strict-FIFO queue q");
  absl::StatusOr<StartEstimate> estimate = scheduler_->Estimate("last", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->position, 2);

  scheduler_->Remove("head");  // "last" moves up, still behind "next"
  for (int i = 0; i < 3; ++i) Cycle();
  EXPECT_EQ(std::count(sink_.pending.begin(), sink_.pending.end(), "last: Priority"), 1);
  estimate = scheduler_->Estimate("last", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->position, 1);
}

TEST_F(SchedulerTest, JobsMustNameALeafQueue) {
  ASSERT_TRUE(scheduler_->SetQueues(TwoTeams()).ok());
  EXPECT_THAT(scheduler_->Submit("x", InQueue(GpuJob("x", 1, 1), "nope")).message(),
              HasSubstr("spec.queue: unknown queue \"nope\""));
  EXPECT_THAT(scheduler_->Submit("y", InQueue(GpuJob("y", 1, 1), "org")).message(),
              HasSubstr("spec.queue: \"org\" is not a leaf queue"));
  ASSERT_TRUE(scheduler_->Submit("z", InQueue(GpuJob("z", 1, 1), "team-a")).ok());
  // A tree without team-a would strand job z.
  const std::vector<QueueSpec> without{QueueSpec{.name = "team-b"}};
  EXPECT_EQ(scheduler_->SetQueues(without).code(), absl::StatusCode::kFailedPrecondition);
  const std::vector<QueueSpec> bad{QueueSpec{.name = "a", .weight = 0}};
  EXPECT_EQ(scheduler_->SetQueues(bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SchedulerTest, AdmissionChargesTheQueueAndQuotaBlocksTheRest) {
  AddNodes(4, 8);
  ASSERT_TRUE(scheduler_->SetQueues(TwoTeams()).ok());
  // team-a (first by name at equal shares) takes 16 GPUs; team-b still gets its 8, not more.
  ASSERT_TRUE(scheduler_->Submit("b1", InQueue(GpuJob("b1", 1, 8), "team-b")).ok());
  ASSERT_TRUE(scheduler_->Submit("b2", InQueue(GpuJob("b2", 1, 8), "team-b")).ok());
  ASSERT_TRUE(scheduler_->Submit("a1", InQueue(GpuJob("a1", 2, 8), "team-a")).ok());
  Cycle();
  std::vector<std::string> started;
  for (const Placed& p : sink_.placed) started.push_back(p.job);
  EXPECT_THAT(started, ::testing::UnorderedElementsAre("b1", "a1"));
  ASSERT_NE(scheduler_->Reason("b2"), nullptr);
  EXPECT_EQ(scheduler_->Reason("b2")->code, "QuotaExceeded");
  EXPECT_THAT(scheduler_->Reason("b2")->message, HasSubstr("gpu: needs 8 GPUs"));
  std::map<std::string, QueueStatus> by_name;
  for (const QueueStatus& q : scheduler_->QueueStatuses()) by_name[q.spec.name] = q;
  EXPECT_EQ(by_name["team-a"].usage["gpu"], 16000);
  EXPECT_TRUE(by_name["team-a"].borrowing);
  EXPECT_EQ(by_name["team-b"].running, 1);
  EXPECT_EQ(by_name["team-b"].pending, 1);
  EXPECT_EQ(by_name["org"].usage["gpu"], 24000);
  EXPECT_EQ(by_name["org"].running, 2);
}

TEST_F(SchedulerTest, AJobAboveItsQueueLimitsIsRefused) {
  AddNodes(4, 8);
  ASSERT_TRUE(scheduler_->SetQueues(TwoTeams()).ok());
  ASSERT_TRUE(scheduler_->Submit("huge", InQueue(GpuJob("huge", 2, 8), "team-b")).ok());
  Cycle();
  EXPECT_THAT(sink_.refused, ElementsAre("huge: Refused"));
  EXPECT_EQ(scheduler_->Tasks("huge"), nullptr);
}

TEST_F(SchedulerTest, EstimateComesFromTheRunningJobsTimeLimits) {
  AddNodes(1, 8);
  ASSERT_TRUE(
      scheduler_->Submit("run", InQueue(GpuJob("run", 1, 8), "default", std::chrono::minutes(10)))
          .ok());
  Cycle();
  ASSERT_TRUE(scheduler_->Submit("next", GpuJob("next", 1, 8)).ok());
  At(60);
  Cycle();
  absl::StatusOr<StartEstimate> estimate = scheduler_->Estimate("next", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  ASSERT_TRUE(estimate->start.has_value());
  EXPECT_EQ(*estimate->start, TimePoint{} + std::chrono::minutes(10));
  EXPECT_EQ(estimate->blocker, "Capacity");
  EXPECT_EQ(scheduler_->Estimate("run", state_).status().code(), absl::StatusCode::kNotFound);
  // Behind a job without a time limit nothing can be predicted.
  ASSERT_TRUE(scheduler_->Submit("forever", GpuJob("forever", 1, 8)).ok());
  scheduler_->Remove("run");
  state_ = ClusterState();
  AddNodes(1, 8);
  Cycle();
  estimate = scheduler_->Estimate("forever", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_FALSE(estimate->start.has_value());
}

TEST_F(SchedulerTest, EstimateOfAJobWaitingForQuotaComesFromTheTimeLimitsHoldingIt) {
  AddNodes(4, 8);
  ASSERT_TRUE(scheduler_->SetQueues(TwoTeams()).ok());
  // team-b may use 8 GPUs: b1 holds them for 10 minutes; the cluster has room for b2 now.
  ASSERT_TRUE(
      scheduler_->Submit("b1", InQueue(GpuJob("b1", 1, 8), "team-b", std::chrono::minutes(10)))
          .ok());
  Cycle();
  ASSERT_TRUE(scheduler_->Submit("b2", InQueue(GpuJob("b2", 1, 8), "team-b")).ok());
  At(60);
  Cycle();
  ASSERT_NE(scheduler_->Reason("b2"), nullptr);
  ASSERT_EQ(scheduler_->Reason("b2")->code, "QuotaExceeded");
  absl::StatusOr<StartEstimate> estimate = scheduler_->Estimate("b2", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->blocker, "Quota");
  ASSERT_TRUE(estimate->start.has_value());
  EXPECT_EQ(*estimate->start, TimePoint{} + std::chrono::minutes(10));

  // Quota held by a job without a time limit frees at no predictable time.
  ASSERT_TRUE(scheduler_->Submit("b3", InQueue(GpuJob("b3", 1, 8), "team-b")).ok());
  scheduler_->Remove("b1");
  scheduler_->Remove("b2");
  state_ = ClusterState();
  AddNodes(4, 8);
  ASSERT_TRUE(scheduler_->Submit("b4", InQueue(GpuJob("b4", 1, 8), "team-b")).ok());
  Cycle();  // b3 runs without a time limit, b4 waits for its quota
  ASSERT_NE(scheduler_->Reason("b4"), nullptr);
  ASSERT_EQ(scheduler_->Reason("b4")->code, "QuotaExceeded");
  estimate = scheduler_->Estimate("b4", state_);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(estimate->blocker, "Quota");
  EXPECT_FALSE(estimate->start.has_value());
}

TEST_F(SchedulerTest, PreemptionEvictsTheLowerPriorityJobOnlyAfterItsMinRuntime) {
  SchedulingPolicy policy;
  policy.preemption = true;
  Recreate(policy);
  AddNodes(1, 8);
  JobSpec low = GpuJob("low", 1, 8, std::nullopt, /*priority=*/0);
  low.min_runtime = std::chrono::seconds(30);
  ASSERT_TRUE(scheduler_->Submit("low", low).ok());
  Cycle();
  ASSERT_TRUE(scheduler_->Submit("high", GpuJob("high", 1, 8, std::nullopt, 100)).ok());
  At(10);
  Cycle();
  EXPECT_TRUE(sink_.preempted.empty());
  ASSERT_TRUE(scheduler_->NextWakeup().has_value());
  EXPECT_EQ(*scheduler_->NextWakeup(), TimePoint{} + std::chrono::seconds(30));
  At(30);
  Cycle();
  ASSERT_EQ(sink_.preempted.size(), 1u);
  EXPECT_THAT(sink_.preempted[0], HasSubstr("low: preempted by job high"));
  EXPECT_THAT(sink_.admitted, ElementsAre("high"));
  // The victim's tasks leave at the end of its grace; the preemptor then takes the node.
  Placement held{.node_index = 0,
                 .node = "n0",
                 .gpus = {0, 1, 2, 3, 4, 5, 6, 7},
                 .gpu_milli = kMilliGpuPerDevice};
  state_.Forget(low.tasks[0].request, held);
  ASSERT_TRUE(scheduler_->Requeue("low", clock_.Now()).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 2u);
  EXPECT_EQ(sink_.placed[1].job, "high");
  EXPECT_EQ(sink_.preempted.size(), 1u);  // equal priority now: no loop back
}

// The victims come from what runs now: jobs that ended, were evicted or started in earlier
// cycles are (or are no longer) candidates, as the queue's index follows them.
TEST_F(SchedulerTest, PreemptionFollowsJobsThatStartEndAndAreEvictedAcrossCycles) {
  SchedulingPolicy policy;
  policy.preemption = true;
  Recreate(policy);
  AddNodes(2, 4);
  const JobSpec low = GpuJob("low", 1, 4, std::nullopt, 0);
  // Releases a job's task from the node the sink saw it placed on.
  auto release = [&](const std::string& job) {
    for (const Placed& p : sink_.placed) {
      if (p.job != job) continue;
      const int32_t node = p.nodes[0] == "n0" ? 0 : 1;
      state_.Forget(low.tasks[0].request, Placement{.node_index = node,
                                                    .node = p.nodes[0],
                                                    .gpus = {0, 1, 2, 3},
                                                    .gpu_milli = kMilliGpuPerDevice});
    }
  };
  ASSERT_TRUE(scheduler_->Submit("a", GpuJob("a", 1, 4, std::nullopt, 0)).ok());
  ASSERT_TRUE(scheduler_->Submit("b", GpuJob("b", 1, 4, std::nullopt, 0)).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 2u);
  At(10);
  release("a");
  scheduler_->Remove("a");
  ASSERT_TRUE(scheduler_->Submit("c", GpuJob("c", 1, 4, std::nullopt, 1)).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 3u);
  EXPECT_EQ(sink_.placed[2].job, "c");
  At(20);
  ASSERT_TRUE(scheduler_->Submit("h1", GpuJob("h1", 1, 4, std::nullopt, 5)).ok());
  Cycle();
  ASSERT_EQ(sink_.preempted.size(), 1u);
  EXPECT_THAT(sink_.preempted[0], HasSubstr("b: preempted by job h1"));  // the lowest priority
  release("b");
  ASSERT_TRUE(scheduler_->Requeue("b", clock_.Now()).ok());
  Cycle();
  ASSERT_EQ(sink_.placed.size(), 4u);
  EXPECT_EQ(sink_.placed[3].job, "h1");
  At(30);
  ASSERT_TRUE(scheduler_->Submit("h2", GpuJob("h2", 1, 4, std::nullopt, 5)).ok());
  Cycle();
  ASSERT_EQ(sink_.preempted.size(), 2u);  // c, not h1 (equal priority) nor b (pending)
  EXPECT_THAT(sink_.preempted[1], HasSubstr("c: preempted by job h2"));
}

}  // namespace
}  // namespace tessera

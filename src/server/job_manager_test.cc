// JobManager over a real SQLite store, with a simulated cluster (time driven by the test) and
// the local cluster (real processes).
#include "server/job_manager.h"
#include "server/testing/wait_for_phase.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "agent/local/local_cluster.h"
#include "agent/sim/sim_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "sched/profile.h"
#include "sched/testing/test_nodes.h"
#include "spec/jobspec.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int64_t kGi = int64_t{1} << 30;
const Caller kTenantA{.tenant = "a"};
const Caller kTenantB{.tenant = "b"};
const Caller kAdmin{.tenant = "admin", .admin = true};


Node GpuNode(std::string name, int32_t gpus) {
  return testing::NamedGpuNode(std::move(name), gpus, 32'000, 256 * kGi);
}

spec::JobDocument Doc(const std::string& yaml) {
  absl::StatusOr<spec::JobDocument> doc =
      spec::ParseJobDocument("apiVersion: tessera/v1\nkind: Job\n" + yaml);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

// A job for the simulated nodes: `gpus` per task, running `duration`.
spec::JobDocument SimJob(int replicas, int gpus, std::string duration, std::string extra = "") {
  return Doc(fmt::format(R"(
spec:
  duration: {}
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
{}  tasks: [{{name: w, replicas: {}, resources: {{cpu: "1", gpu: {}}}}}]
)",
                         duration, extra, replicas, gpus));
}

class JobManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("job_manager_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    OpenStore();
  }
  void TearDown() override {
    StopAll();
    store_.reset();
    fs::remove_all(dir_);
  }

  void OpenStore() {
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open({.data_dir = (dir_ / "store").string(),
                                  .sync = store::SqliteStoreOptions::Sync::kNormal});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // Starts a manager over the store with a simulated cluster of `nodes` 8-GPU nodes and,
  // when `local` is set, the local cluster too; `queues` is the configured queue tree.
  void StartManager(int nodes = 2, bool local = false,
                    std::optional<std::vector<QueueSpec>> queues = std::nullopt,
                    SchedulingPolicy policy = {}) {
    absl::StatusOr<Profile> profile = BuiltinProfile(profile_);
    ASSERT_TRUE(profile.ok());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store_.get(),
                            .clock = &clock_,
                            .timers = &clock_,
                            .profile = *profile,
                            .policy = policy,
                            .queues = std::move(queues),
                            .cycle_interval = cycle_interval_,
                            .requeue_backoff = requeue_backoff_,
                            .metrics = registry_,
                            .target_workload = target_workload_});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
    std::vector<Node> sim_nodes;
    for (int i = 0; i < nodes; ++i) sim_nodes.push_back(GpuNode(fmt::format("sim-{}", i), 8));
    sim_ = std::make_unique<agent::SimCluster>(
        agent::SimClusterOptions{.nodes = sim_nodes,
                                 .clock = &clock_,
                                 .tick = Duration(5),
                                 .timers = sim_on_timers_ ? &clock_ : nullptr},
        manager_.get());
    std::vector<Cluster*> clusters{sim_.get()};
    if (local) {
      absl::StatusOr<std::unique_ptr<agent::LocalCluster>> cluster = agent::LocalCluster::Create(
          {.inventory = {.node_name = "here", .declared_gpus = agent::DeclaredGpus{"T4", kGi, 2}},
           .task_dir = (dir_ / "tasks").string()},
          manager_.get());
      ASSERT_TRUE(cluster.ok()) << cluster.status();
      local_ = *std::move(cluster);
      clusters.push_back(local_.get());
    }
    const absl::Status started = manager_->Start(clusters);
    ASSERT_TRUE(started.ok()) << started;
  }

  void StopAll() {
    if (manager_) manager_->Stop();
    local_.reset();
    sim_.reset();
    manager_.reset();
  }

  std::string Submit(spec::JobDocument doc, const Caller& caller = kTenantA) {
    absl::StatusOr<SubmitResult> result = manager_->Submit(caller, std::move(doc));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->job.document.metadata.id : "";
  }

  // Waits (real time, generous bound) until the job reaches `phase`.
  JobView WaitFor(const std::string& id, JobPhase phase) {
    return WaitForPhase(*manager_, kAdmin, id, phase);
  }

  // The stored events of a finished job, once its last one is durable too (a job's state is
  // visible as soon as it is decided; its events once they are stored).
  std::vector<std::string> EventTypes(const std::string& id) {
    std::vector<std::string> types;
    for (int i = 0; i < 4000; ++i) {
      absl::StatusOr<std::vector<JobEvent>> events = manager_->Events(kAdmin, id);
      EXPECT_TRUE(events.ok()) << events.status();
      if (!events.ok()) return types;
      types.clear();
      for (const JobEvent& event : *events) types.push_back(event.type);
      if (!events->empty() && IsTerminal(events->back().phase)) return types;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return types;
  }

  std::string profile_ = "default";                 // of the next StartManager
  std::optional<TargetWorkload> target_workload_;  // of the next StartManager
  Duration requeue_backoff_{0};                    // of the next StartManager
  Duration cycle_interval_{20};                    // of the next StartManager
  bool sim_on_timers_ = false;  // the next StartManager's SimCluster ends tasks on clock_'s timers
  prometheus::Registry* registry_ = nullptr;  // the next StartManager's metrics; nullable
  fs::path dir_;
  // Simulated time, moved by the test: the manager's periodic cycles and back-offs are its timers.
  SimulatedClock clock_{TimePoint(Duration(1'700'000'000'000))};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<agent::SimCluster> sim_;
  std::unique_ptr<agent::LocalCluster> local_;
};

TEST_F(JobManagerTest, JobRunsThroughEveryPhaseAndRecordsEachStep) {
  StartManager();
  const std::string id = Submit(SimJob(2, 4, "10m"));
  const JobView running = WaitFor(id, JobPhase::kRunning);
  EXPECT_EQ(running.document.status->cluster, "sim");
  ASSERT_EQ(running.document.status->tasks.size(), 2u);
  EXPECT_EQ(running.document.status->tasks[0].devices.size(), 4u);
  EXPECT_THAT(running.document.status->tasks[0].node, HasSubstr("sim-"));
  clock_.Advance(Duration(600'000));
  const JobView done = WaitFor(id, JobPhase::kSucceeded);
  EXPECT_TRUE(done.document.status->end_time.has_value());
  EXPECT_THAT(EventTypes(id), ElementsAre("Submitted", "Admitted", "Placed", "Bound", "Running",
                                          "TaskEnded", "TaskEnded", "Succeeded"));
  // The nodes are free again.
  for (const NodeView& node : manager_->Nodes()) EXPECT_EQ(node.allocated.gpu, 0) << node.name;
}

// A one-GPU job of `cores` cpu cores for the simulated nodes (8 GPUs, 32 cores each).
spec::JobDocument CoresJob(int cores) {
  return Doc(fmt::format(R"(
spec:
  duration: 1h
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
  tasks: [{{name: w, resources: {{cpu: "{}", gpu: 1}}}}]
)",
                         cores));
}

TEST_F(JobManagerTest, FgdMeasuresAgainstTheRecentlySubmittedTasks) {
  profile_ = "fgd";
  StartManager();
  // Both nodes are alike for the first job: the first node takes it, keeping 8 cores.
  const JobView first = WaitFor(Submit(CoresJob(24)), JobPhase::kRunning);
  EXPECT_EQ(first.document.status->tasks[0].node, "sim-0");
  // The recent tasks are {24 cores, 6 cores} x 1 GPU. On sim-0 a 6-core task would leave 2
  // cores and strand its 6 free GPUs for the 6-core shape; on sim-1 nothing is stranded. (With
  // nothing known, every node would score alike and sim-0 would take it.)
  const JobView second = WaitFor(Submit(CoresJob(6)), JobPhase::kRunning);
  EXPECT_EQ(second.document.status->tasks[0].node, "sim-1");
}

TEST_F(JobManagerTest, FgdMeasuresAgainstAConfiguredWorkloadInsteadOfTheRecentTasks) {
  profile_ = "fgd";
  TargetWorkload one_core;
  one_core.classes.push_back(
      {.request = {.cpu = 1000, .gpu_count = 1, .gpu_milli = 1000}, .probability = 1.0});
  target_workload_ = one_core;
  StartManager();
  EXPECT_EQ(WaitFor(Submit(CoresJob(24)), JobPhase::kRunning).document.status->tasks[0].node,
            "sim-0");
  // One-core tasks still fit on sim-0 beside a 6-core one: the nodes score alike.
  EXPECT_EQ(WaitFor(Submit(CoresJob(6)), JobPhase::kRunning).document.status->tasks[0].node,
            "sim-0");
}

TEST_F(JobManagerTest, TenantsAreIsolatedAndRequestIdsAreIdempotent) {
  StartManager();
  spec::JobDocument doc = SimJob(1, 1, "1h");
  doc.metadata.request_id = "req-1";
  absl::StatusOr<SubmitResult> first = manager_->Submit(kTenantA, doc);
  ASSERT_TRUE(first.ok());
  absl::StatusOr<SubmitResult> retry = manager_->Submit(kTenantA, doc);
  ASSERT_TRUE(retry.ok());
  EXPECT_FALSE(retry->created);
  EXPECT_EQ(retry->job.document.metadata.id, first->job.document.metadata.id);
  // The same request id from another tenant is another job.
  absl::StatusOr<SubmitResult> other = manager_->Submit(kTenantB, doc);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->created);

  const std::string id = first->job.document.metadata.id;
  EXPECT_EQ(manager_->Get(kTenantB, id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->Cancel(kTenantB, id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->Events(kTenantB, id).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<ListJobsResult> listed = manager_->List(kTenantB, {});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->jobs.size(), 1u);
  EXPECT_EQ(listed->jobs[0].tenant, "b");
  EXPECT_EQ(manager_->List(kAdmin, {})->jobs.size(), 2u);
}

TEST_F(JobManagerTest, NamesAreUniqueAmongUnfinishedJobsOfATenant) {
  StartManager();
  spec::JobDocument doc = SimJob(1, 1, "1m");
  doc.spec.name = "train";
  const std::string id = Submit(doc);
  EXPECT_EQ(manager_->Submit(kTenantA, doc).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(manager_->Submit(kTenantB, doc).ok());
  WaitFor(id, JobPhase::kRunning);
  clock_.Advance(Duration(60'000));
  WaitFor(id, JobPhase::kSucceeded);
  EXPECT_TRUE(manager_->Submit(kTenantA, doc).ok());
}

TEST_F(JobManagerTest, ListFiltersAndPages) {
  StartManager(2, false, std::vector<QueueSpec>{{.name = "default"}, {.name = "other"}});
  for (int i = 0; i < 5; ++i) Submit(SimJob(1, 1, "1h"));
  Submit(SimJob(1, 1, "1h", "  queue: other\n"));
  std::vector<std::string> ids;
  ListJobsRequest request{.queue = "default", .limit = 2};
  while (true) {
    absl::StatusOr<ListJobsResult> page = manager_->List(kTenantA, request);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const JobView& job : page->jobs) ids.push_back(job.document.metadata.id);
    if (page->next_page_token.empty()) break;
    request.page_token = page->next_page_token;
  }
  EXPECT_THAT(ids, ElementsAre("1", "2", "3", "4", "5"));
  EXPECT_EQ(manager_->List(kTenantA, {.limit = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->List(kTenantA, {.page_token = "x"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Another tenant's listing is refused, as Kubernetes refuses a namespace outside a role.
  EXPECT_EQ(manager_->List(kTenantB, {.tenant = "a"}).status().code(),
            absl::StatusCode::kPermissionDenied);
  absl::StatusOr<ListJobsResult> as_admin = manager_->List(kAdmin, {.tenant = "a"});
  ASSERT_TRUE(as_admin.ok()) << as_admin.status();
  EXPECT_EQ(as_admin->jobs.size(), 6u);
}

TEST_F(JobManagerTest, ListNewestFirstByStateAndCountsTheRest) {
  StartManager();
  std::vector<std::string> submitted;
  for (int i = 0; i < 4; ++i) submitted.push_back(Submit(SimJob(1, 1, "1h")));
  ASSERT_TRUE(manager_->Cancel(kTenantA, submitted[1]).ok());
  WaitFor(submitted[1], JobPhase::kCancelled);
  auto ids = [](const ListJobsResult& page) {
    std::vector<std::string> out;
    for (const JobView& job : page.jobs) out.push_back(job.document.metadata.id);
    return out;
  };

  ListJobsRequest request{
      .state = JobStateFilter::kActive, .order = ListOrder::kNewestFirst, .limit = 2};
  absl::StatusOr<ListJobsResult> page = manager_->List(kTenantA, request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(ids(*page), ElementsAre(submitted[3], submitted[2]));
  EXPECT_EQ(page->remaining, 1);
  request.page_token = page->next_page_token;
  page = manager_->List(kTenantA, request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(ids(*page), ElementsAre(submitted[0]));
  EXPECT_EQ(page->remaining, 0);
  EXPECT_EQ(page->next_page_token, "");

  page = manager_->List(kTenantA, {.state = JobStateFilter::kTerminal});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(ids(*page), ElementsAre(submitted[1]));
  page = manager_->List(kTenantA, {.limit = 3});  // every phase, oldest first
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(ids(*page), ElementsAre(submitted[0], submitted[1], submitted[2]));
  EXPECT_EQ(page->remaining, 1);
  EXPECT_EQ(manager_->List(kTenantB, {})->remaining, 0);
}

TEST_F(JobManagerTest, PendingJobExplainsItselfAndCancelsAtOnce) {
  StartManager(/*nodes=*/2);
  const std::string big = Submit(SimJob(2, 8, "1h"));
  WaitFor(big, JobPhase::kRunning);
  const std::string waiting = Submit(SimJob(1, 4, "1h"));
  for (int i = 0; i < 400; ++i) {
    if (manager_->Get(kAdmin, waiting)->document.status->reason == "InsufficientResources") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  absl::StatusOr<JobExplanation> why = manager_->Explain(kTenantA, waiting);
  ASSERT_TRUE(why.ok());
  EXPECT_EQ(why->reason, "InsufficientResources");
  EXPECT_EQ(why->total_nodes, 2);
  ASSERT_FALSE(why->rejections.empty());
  EXPECT_EQ(why->rejections[0].nodes, 2);

  absl::StatusOr<JobView> cancelled = manager_->Cancel(kTenantA, waiting);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->document.status->phase, JobPhase::kCancelled);
  // A running job is cancelled once its tasks are gone.
  ASSERT_TRUE(manager_->Cancel(kTenantA, big).ok());
  WaitFor(big, JobPhase::kCancelled);
  EXPECT_THAT(EventTypes(big), ::testing::Contains("CancelRequested"));
}

TEST_F(JobManagerTest, JobsGoToLeafQueuesOfTheTree) {
  StartManager();
  absl::StatusOr<SubmitResult> unknown =
      manager_->Submit(kTenantA, SimJob(1, 1, "1h", "  queue: nope\n"));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "spec.queue: unknown queue \"nope\"");
  std::vector<QueueView> queues = manager_->Queues();
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues[0].spec.name, "default");
  // Only admins change the tree.
  EXPECT_EQ(manager_->ApplyQueues(kTenantA, {{.name = "x"}}).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(manager_->ApplyQueue(kTenantA, {.name = "x"}).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(manager_->DeleteQueue(kTenantA, "default").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(manager_->DeleteQueue(kAdmin, "default").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(JobManagerTest, QueueTreeChangesAreStoredAndKeepJobsInLeaves) {
  const std::vector<QueueSpec> config = {
      {.name = "org"}, {.name = "team-a", .parent = "org"}, {.name = "default"}};
  StartManager(2, false, config);
  EXPECT_EQ(manager_->Submit(kTenantA, SimJob(1, 1, "1h", "  queue: org\n")).status().message(),
            "spec.queue: \"org\" is not a leaf queue");
  const std::string id = Submit(SimJob(1, 1, "1h", "  queue: team-a\n"));
  WaitFor(id, JobPhase::kRunning);

  // team-a has an unfinished job: it may neither vanish nor get children.
  EXPECT_EQ(manager_->ApplyQueues(kAdmin, {{.name = "default"}}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager_->ApplyQueue(kAdmin, {.name = "sub", .parent = "team-a"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<QueueView> added =
      manager_->ApplyQueue(kAdmin, {.name = "team-b", .parent = "org", .weight = 3});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->spec.weight, 3);

  // The stored tree wins over the configured one after a restart.
  StopAll();
  StartManager(2, false, config);
  std::vector<std::string> names;
  for (const QueueView& queue : manager_->Queues()) names.push_back(queue.spec.name);
  EXPECT_THAT(names, ElementsAre("org", "team-a", "team-b", "default"));
  EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kRunning);
}

// The stored event types of job `id` once they include `type`.
std::vector<std::string> EventTypesWith(JobManager& manager, const std::string& id,
                                        std::string_view type) {
  std::vector<std::string> types;
  for (int i = 0; i < 4000; ++i) {
    types.clear();
    const absl::StatusOr<std::vector<JobEvent>> events = manager.Events(kAdmin, id);
    for (const JobEvent& event : *events) types.push_back(event.type);
    if (std::find(types.begin(), types.end(), type) != types.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return types;
}

TEST_F(JobManagerTest, PreemptedJobIsRequeuedWithoutCountingARestart) {
  StartManager(1, false, std::nullopt, SchedulingPolicy{.preemption = true});
  const std::string low = Submit(SimJob(1, 8, "1h"));
  WaitFor(low, JobPhase::kRunning);
  const std::string high = Submit(SimJob(1, 8, "1h", "  priority: 100\n"));
  WaitFor(high, JobPhase::kRunning);

  const std::vector<std::string> types = EventTypesWith(*manager_, low, "Requeued");
  EXPECT_THAT(types, ::testing::IsSupersetOf({"Preempted", "Requeued"}));
  const JobView view = *manager_->Get(kAdmin, low);
  EXPECT_EQ(view.document.status->phase, JobPhase::kPending);
  EXPECT_EQ(view.document.status->preemptions, 1);
  const std::vector<JobEvent> events = *manager_->Events(kAdmin, low);
  for (const JobEvent& event : events) {
    if (event.type == "Preempted") EXPECT_THAT(event.message, HasSubstr("job " + high));
    if (event.type == "Requeued") EXPECT_EQ(event.reason, "Preempted");
  }
  // The requeue is not a restart: the restart policy's count is untouched.
  EXPECT_EQ(view.document.spec.restart_policy.max_restarts, 3);

  // Once the preemptor ends, the victim runs again (a new attempt).
  manager_->Cancel(kAdmin, high).IgnoreError();
  WaitFor(low, JobPhase::kRunning);
}

TEST_F(JobManagerTest, PreemptedJobIsCancelledWhenThePolicySaysSo) {
  StartManager(1, false, std::nullopt,
               SchedulingPolicy{.preemption = true, .on_preemption = PreemptedAction::kCancel});
  const std::string low = Submit(SimJob(1, 8, "1h"));
  WaitFor(low, JobPhase::kRunning);
  const std::string high = Submit(SimJob(1, 8, "1h", "  priority: 100\n"));
  const JobView cancelled = WaitFor(low, JobPhase::kCancelled);
  EXPECT_EQ(cancelled.document.status->reason, "Preempted");
  EXPECT_EQ(cancelled.document.status->preemptions, 1);
  WaitFor(high, JobPhase::kRunning);
}

TEST_F(JobManagerTest, AJobThatFitsNoNodeWaitsAndTimeLimitFailsWithoutRequeue) {
  StartManager();
  // Clusters join and change while the control plane runs: no refusal, a reason.
  const std::string huge = Submit(SimJob(1, 16, "1h"));
  std::string reason;
  for (int i = 0; i < 4000 && reason.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    reason = manager_->Get(kAdmin, huge)->document.status->reason;
  }
  const JobView waiting = *manager_->Get(kAdmin, huge);
  EXPECT_EQ(waiting.document.status->phase, JobPhase::kPending);
  EXPECT_EQ(reason, "InsufficientResources");
  EXPECT_THAT(waiting.document.status->message, HasSubstr("insufficient gpu"));

  const std::string slow = Submit(SimJob(1, 1, "2h", "  timeLimit: 1h\n"));
  WaitFor(slow, JobPhase::kRunning);
  clock_.Advance(Duration(3'600'000));
  const JobView failed = WaitFor(slow, JobPhase::kFailed);
  EXPECT_EQ(failed.document.status->reason, "TimeLimitExceeded");
}

TEST_F(JobManagerTest, TaskCancelledOnItsClusterFollowsTheRestartPolicy) {
  StartManager();
  // Cancelled outside Tessera (scancel, a deleted pod): requeued like a failure.
  const std::string id =
      Submit(SimJob(2, 1, "1h", "  restartPolicy: {onFailure: requeue, maxRestarts: 1}\n"));
  const JobView running = WaitFor(id, JobPhase::kRunning);
  const std::string first = fmt::format("{}-{}-a0", id, running.document.status->tasks[0].name);
  manager_->OnTaskEnded(TaskEnd{.launch_id = first,
                                .phase = TaskPhase::kCancelled,
                                .message = "Slurm job 11 CANCELLED",
                                .time = clock_.Now()});
  // Requeued (it may be running again by now: the back-off is over at once).
  bool requeued = false;
  for (int i = 0; i < 4000 && !requeued; ++i) {
    absl::StatusOr<std::vector<JobEvent>> events = manager_->Events(kAdmin, id);
    ASSERT_TRUE(events.ok());
    for (const JobEvent& event : *events) {
      if (event.type != "Requeued") continue;
      requeued = true;
      EXPECT_THAT(event.message, HasSubstr("Slurm job 11 CANCELLED"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(requeued);

  // With no restart left, the job fails.
  const std::string once = Submit(SimJob(1, 1, "1h", "  restartPolicy: {onFailure: fail}\n"));
  const JobView alone = WaitFor(once, JobPhase::kRunning);
  manager_->OnTaskEnded(TaskEnd{
      .launch_id = fmt::format("{}-{}-a0", once, alone.document.status->tasks[0].name),
      .phase = TaskPhase::kCancelled,
      .time = clock_.Now()});
  EXPECT_EQ(WaitFor(once, JobPhase::kFailed).document.status->phase, JobPhase::kFailed);
}

// Ends task `task` of the running attempt `attempt` of job `id` Failed, as its cluster would.
void FailTask(JobManager& manager, const std::string& id, const std::string& task,
              int attempt, TimePoint time) {
  manager.OnTaskEnded(TaskEnd{.launch_id = fmt::format("{}-{}-a{}", id, task, attempt),
                              .phase = TaskPhase::kFailed,
                              .exit_code = 1,
                              .reason = "Error",
                              .time = time});
}

// The status message of job `id` once it waits out a back-off.
std::string BackoffMessage(JobManager& manager, const std::string& id) {
  for (int i = 0; i < 4000; ++i) {
    const JobView view = *manager.Get(kAdmin, id);
    if (view.document.status->reason == "Backoff") return view.document.status->message;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return "";
}

TEST_F(JobManagerTest, EachRestartWaitsTwiceTheBackoffOfTheOneBefore) {
  requeue_backoff_ = Duration(60'000);
  StartManager();
  const std::string id =
      Submit(SimJob(1, 1, "1h", "  restartPolicy: {onFailure: requeue, maxRestarts: 3}\n"));
  const std::string task = WaitFor(id, JobPhase::kRunning).document.status->tasks[0].name;
  FailTask(*manager_, id, task, 0, clock_.Now());
  EXPECT_EQ(BackoffMessage(*manager_, id), "requeued; next attempt in 1m");
  clock_.Advance(Duration(60'000));
  WaitFor(id, JobPhase::kRunning);

  FailTask(*manager_, id, task, 1, clock_.Now());
  EXPECT_EQ(BackoffMessage(*manager_, id), "requeued; next attempt in 2m");
  clock_.Advance(Duration(120'000));
  WaitFor(id, JobPhase::kRunning);
  const std::vector<JobEvent> events = *manager_->Events(kAdmin, id);
  std::vector<std::string> requeues;
  for (const JobEvent& event : events) {
    if (event.type == "Requeued") requeues.push_back(event.message);
  }
  EXPECT_THAT(requeues, ElementsAre(HasSubstr("restart 1 of 3 after a back-off of 1m"),
                                    HasSubstr("restart 2 of 3 after a back-off of 2m")));
}

TEST_F(JobManagerTest, ARequeuedJobIsTriedAgainWhenItsBackoffEndsOnTheClock) {
  requeue_backoff_ = Duration(60'000);
  cycle_interval_ = Duration(3'600'000);  // no periodic cycle comes in between
  StartManager();
  const std::string id =
      Submit(SimJob(1, 1, "1h", "  restartPolicy: {onFailure: requeue, maxRestarts: 1}\n"));
  const std::string task = WaitFor(id, JobPhase::kRunning).document.status->tasks[0].name;
  const TimePoint failed = clock_.Now();
  FailTask(*manager_, id, task, 0, failed);
  EXPECT_EQ(BackoffMessage(*manager_, id), "requeued; next attempt in 1m");
  clock_.Advance(Duration(60'000));  // the back-off's timer fires: a cycle places the job
  WaitFor(id, JobPhase::kRunning);
  const absl::StatusOr<std::vector<JobEvent>> events = manager_->Events(kAdmin, id);
  ASSERT_TRUE(events.ok()) << events.status();
  std::vector<TimePoint> placed;
  for (const JobEvent& event : *events) {
    if (event.type == "Placed") placed.push_back(event.time);
  }
  EXPECT_THAT(placed, ElementsAre(failed, failed + Duration(60'000)));
}

TEST_F(JobManagerTest, RestartKeepsRunningTasksAndQueuedJobs) {
  StartManager(/*nodes=*/1);
  const std::string running = Submit(SimJob(1, 8, "10m"));
  WaitFor(running, JobPhase::kRunning);
  const std::string queued = Submit(SimJob(1, 8, "10m"));
  StopAll();

  StartManager(/*nodes=*/1);
  EXPECT_EQ(manager_->Get(kAdmin, running)->document.status->phase, JobPhase::kRunning);
  EXPECT_EQ(manager_->Get(kAdmin, queued)->document.status->phase, JobPhase::kPending);
  clock_.Advance(Duration(600'000));
  WaitFor(running, JobPhase::kSucceeded);
  WaitFor(queued, JobPhase::kRunning);
  // New ids continue after the stored ones.
  EXPECT_EQ(Submit(SimJob(1, 1, "1m")), "3");
}

TEST_F(JobManagerTest, LocalTasksRunForRealWithLogsAndExitCodes) {
  StartManager(/*nodes=*/1, /*local=*/true);
  const std::string ok = Submit(Doc(R"(
spec:
  tasks: [{name: main, resources: {cpu: 100m, gpu: 1}, command: [sh, -c, 'echo hello $TESSERA_JOB_ID; echo "gpus=$CUDA_VISIBLE_DEVICES"']}]
)"));
  WaitFor(ok, JobPhase::kSucceeded);
  absl::StatusOr<LogChunk> log = manager_->Logs(kTenantA, ok, {});
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->data, fmt::format("hello {}\ngpus=0\n", ok));
  EXPECT_TRUE(log->end);
  EXPECT_EQ(manager_->Logs(kTenantA, ok, {.task = "nope"}).status().code(),
            absl::StatusCode::kNotFound);

  const std::string bad = Submit(Doc(R"(
spec:
  restartPolicy: {onFailure: requeue, maxRestarts: 1}
  tasks: [{name: main, resources: {cpu: 100m}, command: [sh, -c, 'exit 3']}]
)"));
  const JobView failed = WaitFor(bad, JobPhase::kFailed);
  EXPECT_EQ(failed.document.status->tasks[0].exit_code, 3);
  std::vector<std::string> types = EventTypes(bad);
  EXPECT_EQ(std::count(types.begin(), types.end(), "Requeued"), 1);
}

// On simulated time, WaitIdle tells the test when the manager has handled everything due at
// the current instant — with no real-time wait — and HoldCycles keeps the cycle back until the
// test releases it.
TEST_F(JobManagerTest, WaitIdleReturnsOnceEverythingDueNowIsHandledAndStored) {
  sim_on_timers_ = true;
  cycle_interval_ = Duration(3'600'000);  // no periodic cycle in the test's span
  StartManager(1);
  const auto phase = [&](const std::string& id) {
    absl::StatusOr<JobView> view = manager_->Get(kAdmin, id);
    EXPECT_TRUE(view.ok()) << view.status();
    return view.ok() ? view->document.status->phase : JobPhase::kPending;
  };
  const auto stored = [&](const std::string& id) {
    std::vector<std::string> types;
    // Held while it is read: a range-for over the temporary would read a destroyed StatusOr.
    const absl::StatusOr<std::vector<JobEvent>> events = manager_->Events(kAdmin, id);
    EXPECT_TRUE(events.ok()) << events.status();
    if (events.ok()) {
      for (const JobEvent& event : *events) types.push_back(event.type);
    }
    return types;
  };

  manager_->HoldCycles(true);
  const std::string id = Submit(SimJob(1, 8, "10s"));
  manager_->WaitIdle();
  EXPECT_EQ(phase(id), JobPhase::kPending);  // handled, but no cycle yet
  EXPECT_THAT(stored(id), ElementsAre("Submitted"));

  manager_->HoldCycles(false);
  manager_->WaitIdle();  // the cycle, the bindings' commit, the launch and its start
  EXPECT_EQ(phase(id), JobPhase::kRunning);
  EXPECT_THAT(stored(id), ElementsAre("Submitted", "Admitted", "Placed", "Bound", "Running"));

  clock_.Advance(Duration(9'999));
  manager_->WaitIdle();
  EXPECT_EQ(phase(id), JobPhase::kRunning);
  clock_.Advance(Duration(1));  // the task's end fires inside Advance
  manager_->WaitIdle();
  EXPECT_EQ(phase(id), JobPhase::kSucceeded);
  EXPECT_THAT(stored(id), ElementsAre("Submitted", "Admitted", "Placed", "Bound", "Running",
                                      "TaskEnded", "Succeeded"));
  const std::vector<JobEvent> events = manager_->Events(kAdmin, id).value();
  EXPECT_EQ(events.back().time, clock_.Now());
}

// A victim's min_runtime ends between periodic cycles: the cycle at the Scheduler's next
// wake-up preempts it at that instant, not at the next periodic cycle (an hour away here).
TEST_F(JobManagerTest, ACycleRunsAtTheSchedulersNextWakeUp) {
  sim_on_timers_ = true;
  cycle_interval_ = Duration(3'600'000);
  StartManager(1, false, std::nullopt, SchedulingPolicy{.preemption = true});
  const std::string low = Submit(SimJob(1, 8, "1h", "  minRuntime: 60s\n"));
  manager_->WaitIdle();
  clock_.Advance(Duration(10'000));
  const std::string high = Submit(SimJob(1, 8, "1h", "  priority: 100\n"));
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, high)->document.status->phase, JobPhase::kPending);
  clock_.Advance(Duration(50'000));  // low has run its 60s
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, high)->document.status->phase, JobPhase::kRunning);
  const std::vector<JobEvent> events = manager_->Events(kAdmin, low).value();
  const auto preempted = std::find_if(events.begin(), events.end(),
                                      [](const JobEvent& e) { return e.type == "Preempted"; });
  ASSERT_NE(preempted, events.end());
  EXPECT_EQ(preempted->time, clock_.Now());
}

// tessera_job_placement_latency_seconds as the registry holds it: observations per bucket
// (cumulative, by upper bound in seconds), their count and sum.
struct LatencyHistogram {
  std::map<double, uint64_t> at_most;
  uint64_t count = 0;
  double sum = 0;
};

LatencyHistogram PlacementLatency(prometheus::Registry& registry) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != "tessera_job_placement_latency_seconds") continue;
    EXPECT_EQ(family.metric.size(), 1u);
    const prometheus::ClientMetric::Histogram& histogram = family.metric.at(0).histogram;
    LatencyHistogram out{.count = histogram.sample_count, .sum = histogram.sample_sum};
    for (const prometheus::ClientMetric::Bucket& bucket : histogram.bucket) {
      out.at_most[bucket.upper_bound] = bucket.cumulative_count;
    }
    return out;
  }
  ADD_FAILURE() << "no tessera_job_placement_latency_seconds in the registry";
  return {};
}

// On the manager's clock: a job placed in the cycle of its submission waits 0 s; one submitted
// at t that waits for the first's node is placed at t + 7 s and counts in the bucket (5 s, 10 s].
TEST_F(JobManagerTest, PlacementLatencyRunsFromSubmissionToTheGangsPlacement) {
  prometheus::Registry registry;
  registry_ = &registry;
  sim_on_timers_ = true;
  cycle_interval_ = Duration(3'600'000);  // no periodic cycle in the test's span
  StartManager(1);
  const std::string first = Submit(SimJob(1, 8, "7s"));
  manager_->WaitIdle();
  const std::string second = Submit(SimJob(1, 8, "1h"));
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, second)->document.status->phase, JobPhase::kPending);
  LatencyHistogram latency = PlacementLatency(registry);
  EXPECT_EQ(latency.count, 1u);
  EXPECT_EQ(latency.at_most.at(0.001), 1u);

  clock_.Advance(Duration(7'000));  // the first job ends; the second takes its node
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, second)->document.status->phase, JobPhase::kRunning);
  latency = PlacementLatency(registry);
  EXPECT_EQ(latency.count, 2u);
  EXPECT_DOUBLE_EQ(latency.sum, 7.0);
  EXPECT_EQ(latency.at_most.at(0.001), 1u);
  EXPECT_EQ(latency.at_most.at(5), 1u);
  EXPECT_EQ(latency.at_most.at(10), 2u);
  EXPECT_EQ(latency.at_most.at(30), 2u);
}

// A requeued attempt's wait counts from its requeue, not from the job's submission: placed
// 100 s after submission, failed, requeued with a back-off of 3 s and placed again 3 s later.
TEST_F(JobManagerTest, PlacementLatencyOfARequeuedAttemptRunsFromItsRequeue) {
  prometheus::Registry registry;
  registry_ = &registry;
  sim_on_timers_ = true;
  requeue_backoff_ = Duration(3'000);
  cycle_interval_ = Duration(3'600'000);
  StartManager(1);
  const std::string id =
      Submit(SimJob(1, 1, "1h", "  restartPolicy: {onFailure: requeue, maxRestarts: 1}\n"));
  manager_->WaitIdle();
  const std::string task = manager_->Get(kAdmin, id)->document.status->tasks[0].name;
  clock_.Advance(Duration(100'000));
  FailTask(*manager_, id, task, 0, clock_.Now());
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kPending);
  clock_.Advance(Duration(3'000));  // the back-off ends: the second attempt is placed
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kRunning);
  const LatencyHistogram latency = PlacementLatency(registry);
  EXPECT_EQ(latency.count, 2u);
  EXPECT_DOUBLE_EQ(latency.sum, 3.0);
  EXPECT_EQ(latency.at_most.at(0.001), 1u);  // the first attempt
  EXPECT_EQ(latency.at_most.at(2), 1u);
  EXPECT_EQ(latency.at_most.at(5), 2u);  // the second: 3 s
}

}  // namespace
}  // namespace tessera::server

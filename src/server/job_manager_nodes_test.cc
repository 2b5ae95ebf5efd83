// JobManager's node lifecycle: cordon, uncordon and drain over a real SQLite store and a
// simulated cluster whose tasks take their whole termination grace to exit, on a simulated
// clock the test moves.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "agent/sim/sim_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"
#include "server/job_manager.h"
#include "server/testing/wait_for_phase.h"
#include "spec/jobspec.h"
#include "spec/request_error.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::server {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int64_t kGi = int64_t{1} << 30;
const Caller kTenant{.tenant = "a"};
const Caller kAdmin{.tenant = "ops", .admin = true};

// `replicas` tasks of 8 GPUs (a whole simulated node each), running an hour; `tolerations`:
// more of them, after the simulated taint's.
spec::JobDocument NodeJob(int replicas, std::string grace = "30s", std::string tolerations = "") {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(fmt::format(R"(
apiVersion: tessera/v1
kind: Job
spec:
  duration: 1h
  terminationGracePeriod: {}
  restartPolicy: {{onFailure: requeue, maxRestarts: 0}}
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}{}]
  tasks: [{{name: w, replicas: {}, resources: {{cpu: "1", gpu: 8}}}}]
)",
                                                                             grace, tolerations,
                                                                             replicas));
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

class JobManagerNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("job_manager_nodes_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store = store::SqliteStore::Open(
        {.data_dir = (dir_ / "store").string(), .sync = store::SqliteStoreOptions::Sync::kNormal});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  void TearDown() override {
    StopAll();
    store_.reset();
    fs::remove_all(dir_);
  }

  // A manager over the store with one simulated cluster "sim" of `nodes` 8-GPU nodes.
  void StartManager(int nodes) {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store_.get(),
                            .clock = &clock_,
                            .timers = &clock_,
                            .profile = *profile,
                            .cycle_interval = Duration(20),
                            .requeue_backoff = Duration(0)});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
    std::vector<Node> sim_nodes;
    for (int i = 0; i < nodes; ++i) {
      sim_nodes.push_back(testing::NamedGpuNode(fmt::format("sim-{}", i), 8, 32'000, 256 * kGi));
    }
    sim_ = std::make_unique<agent::SimCluster>(
        agent::SimClusterOptions{.nodes = sim_nodes,
                                 .clock = &clock_,
                                 .timers = &clock_,
                                 .exit_after_grace = true,
                                 .inventory_observer = manager_.get()},
        manager_.get());
    ASSERT_TRUE(manager_->Start({sim_.get()}).ok());
  }

  void StopAll() {
    if (manager_) manager_->Stop();
    sim_.reset();
    manager_.reset();
  }

  std::string Submit(spec::JobDocument doc) {
    absl::StatusOr<SubmitResult> result = manager_->Submit(kTenant, std::move(doc));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->job.document.metadata.id : "";
  }

  JobView WaitFor(const std::string& id, JobPhase phase) {
    return WaitForPhase(*manager_, kAdmin, id, phase);
  }

  absl::StatusOr<NodeView> Change(NodeAction action, std::string node, std::string reason = "",
                                  std::optional<Duration> grace = std::nullopt) {
    return manager_->ChangeNode(kAdmin, {.cluster = "sim",
                                         .node = std::move(node),
                                         .action = action,
                                         .reason = std::move(reason),
                                         .grace = grace});
  }

  NodeView NodeNamed(std::string_view name) {
    for (NodeView& view : manager_->Nodes()) {
      if (view.name == name) return view;
    }
    ADD_FAILURE() << "no node " << name;
    return {};
  }

  // Waits until `name` is in `state`; real time only guards against a hang.
  NodeView WaitForNodeState(std::string_view name, NodeAdminState state) {
    NodeView view;
    for (int i = 0; i < 4000; ++i) {
      manager_->WaitIdle();
      view = NodeNamed(name);
      if (view.state == state) return view;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << name << " stayed " << NodeAdminStateName(view.state);
    return view;
  }

  // The job's stored events once `done` holds for them.
  std::vector<JobEvent> EventsOnce(const std::string& id,
                                   std::function<bool(const std::vector<JobEvent>&)> done) {
    std::vector<JobEvent> events;
    for (int i = 0; i < 4000; ++i) {
      events = *manager_->Events(kAdmin, id);
      if (done(events)) return events;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "job " << id << ": the events never got there";
    return events;
  }

  // Reports `node` with `taints` (its others kept) from the simulated cluster.
  void SetTaints(const std::string& node, std::vector<Taint> taints) {
    for (Node& n : sim_->Inventory()) {
      if (n.name != node) continue;
      n.taints = std::move(taints);
      ASSERT_TRUE(sim_->ChangeNode(n, /*lose=*/false).ok());
    }
  }

  static int Count(const std::vector<JobEvent>& events, std::string_view type) {
    return static_cast<int>(std::count_if(events.begin(), events.end(),
                                          [&](const JobEvent& e) { return e.type == type; }));
  }

  fs::path dir_;
  SimulatedClock clock_{TimePoint(Duration(1'700'000'000'000))};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<agent::SimCluster> sim_;
};

TEST_F(JobManagerNodesTest, ACordonedNodeTakesNoNewTasksEvenEmptyUntilUncordoned) {
  StartManager(1);
  absl::StatusOr<NodeView> cordoned = Change(NodeAction::kCordon, "sim-0", "bad DIMM");
  ASSERT_TRUE(cordoned.ok()) << cordoned.status();
  EXPECT_EQ(cordoned->state, NodeAdminState::kCordoned);
  EXPECT_TRUE(cordoned->unschedulable);
  EXPECT_EQ(cordoned->state_reason, "bad DIMM");
  EXPECT_EQ(cordoned->state_by, "ops");
  EXPECT_EQ(cordoned->state_since, clock_.Now());

  const std::string id = Submit(NodeJob(1));
  std::string message;
  for (int i = 0; i < 4000 && message.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    message = manager_->Get(kAdmin, id)->document.status->message;
  }
  EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kPending);
  EXPECT_THAT(message, HasSubstr("cordoned"));

  absl::StatusOr<NodeView> ready = Change(NodeAction::kUncordon, "sim-0");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->state, NodeAdminState::kReady);
  EXPECT_FALSE(ready->unschedulable);
  WaitFor(id, JobPhase::kRunning);
}

TEST_F(JobManagerNodesTest, DrainEvictsTheWholeGangOnceWithItsGraceAndLeavesOtherJobsAlone) {
  StartManager(3);
  const std::string gang = Submit(NodeJob(2, "1h"));
  const JobView running = WaitFor(gang, JobPhase::kRunning);
  const std::string other = Submit(NodeJob(1));
  const JobView other_running = WaitFor(other, JobPhase::kRunning);
  const std::string drained = running.document.status->tasks[0].node;
  const std::string gang_peer = running.document.status->tasks[1].node;

  // Drained twice (the second drain changes nothing): the gang is evicted once, whole.
  absl::StatusOr<NodeView> draining =
      Change(NodeAction::kDrain, drained, "replace GPU 3", Duration(10'000));
  ASSERT_TRUE(draining.ok()) << draining.status();
  EXPECT_EQ(draining->state, NodeAdminState::kDraining);
  ASSERT_TRUE(Change(NodeAction::kDrain, drained).ok());
  EXPECT_EQ(NodeNamed(drained).state_reason, "replace GPU 3");

  // The drain's grace (10s) instead of the job's hour: until then both tasks keep running.
  clock_.Advance(Duration(9'999));
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, gang)->document.status->phase, JobPhase::kRunning);
  EXPECT_EQ(NodeNamed(drained).state, NodeAdminState::kDraining);
  EXPECT_EQ(NodeNamed(gang_peer).tasks, 1);
  clock_.Advance(Duration(1));
  WaitForNodeState(drained, NodeAdminState::kDrained);

  const std::vector<JobEvent> events =
      EventsOnce(gang, [](const std::vector<JobEvent>& e) { return Count(e, "Requeued") > 0; });
  EXPECT_EQ(Count(events, "Evicted"), 1);
  EXPECT_EQ(Count(events, "Requeued"), 1);
  for (const JobEvent& event : events) {
    if (event.type == "Evicted" || event.type == "Requeued") EXPECT_EQ(event.reason, "NodeDrained");
    if (event.type == "Evicted") {
      EXPECT_THAT(event.message, HasSubstr("node sim/" + drained + " is drained (replace GPU 3)"));
    }
  }
  // Requeued as a preemption is, but counted as neither a restart nor a preemption: with
  // maxRestarts 0 a failure would have failed it.
  const JobView requeued = *manager_->Get(kAdmin, gang);
  EXPECT_EQ(requeued.document.status->preemptions, 0);
  EXPECT_EQ(NodeNamed(gang_peer).tasks, 0);  // the whole gang went

  // The other job never noticed.
  EXPECT_EQ(manager_->Get(kAdmin, other)->document.status->phase, JobPhase::kRunning);
  const auto other_events = manager_->Events(kAdmin, other);
  ASSERT_TRUE(other_events.ok()) << other_events.status();
  for (const JobEvent& event : *other_events) EXPECT_NE(event.type, "Evicted");
  EXPECT_NE(other_running.document.status->tasks[0].node, drained);

  // Two nodes are left and one is busy: the gang waits, never on the drained node.
  manager_->Cancel(kAdmin, other).IgnoreError();
  clock_.Advance(Duration(30'000));
  const JobView again = WaitFor(gang, JobPhase::kRunning);
  for (const auto& task : again.document.status->tasks) EXPECT_NE(task.node, drained);
  EXPECT_EQ(NodeNamed(drained).tasks, 0);
}

TEST_F(JobManagerNodesTest, ADrainedEmptyNodeIsDrainedAtOnceAndUncordonMakesItReady) {
  StartManager(1);
  absl::StatusOr<NodeView> drained = Change(NodeAction::kDrain, "sim-0");
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->state, NodeAdminState::kDrained);
  const std::string id = Submit(NodeJob(1));
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kPending);
  ASSERT_TRUE(Change(NodeAction::kUncordon, "sim-0").ok());
  WaitFor(id, JobPhase::kRunning);
}

TEST_F(JobManagerNodesTest, TheStateSurvivesARestartAndAnInterruptedDrainGoesOn) {
  StartManager(2);
  const std::string id = Submit(NodeJob(1, "1h"));
  const std::string node = WaitFor(id, JobPhase::kRunning).document.status->tasks[0].node;
  const std::string other = node == "sim-0" ? "sim-1" : "sim-0";
  ASSERT_TRUE(Change(NodeAction::kCordon, other, "spare").ok());
  ASSERT_TRUE(Change(NodeAction::kDrain, node, "firmware", Duration(20'000)).ok());
  manager_->WaitIdle();
  StopAll();

  StartManager(2);
  const NodeView cordoned = NodeNamed(other);
  EXPECT_EQ(cordoned.state, NodeAdminState::kCordoned);
  EXPECT_TRUE(cordoned.unschedulable);
  EXPECT_EQ(cordoned.state_reason, "spare");
  EXPECT_EQ(NodeNamed(node).state, NodeAdminState::kDraining);
  // The restarted drain gives the task the drain's grace again, then requeues the job once;
  // both nodes are out of service, so it waits.
  clock_.Advance(Duration(20'000));
  WaitForNodeState(node, NodeAdminState::kDrained);
  const std::vector<JobEvent> events =
      EventsOnce(id, [](const std::vector<JobEvent>& e) { return Count(e, "Requeued") > 0; });
  EXPECT_EQ(Count(events, "Evicted"), 1);
  EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kPending);
  ASSERT_TRUE(Change(NodeAction::kUncordon, other).ok());
  EXPECT_EQ(WaitFor(id, JobPhase::kRunning).document.status->tasks[0].node, other);
}

TEST_F(JobManagerNodesTest, BadChangesAreRefusedNamingTheField) {
  StartManager(1);
  absl::StatusOr<NodeView> tenant =
      manager_->ChangeNode(kTenant, {.cluster = "sim", .node = "sim-0"});
  EXPECT_EQ(tenant.status().code(), absl::StatusCode::kPermissionDenied);

  absl::StatusOr<NodeView> cluster =
      manager_->ChangeNode(kAdmin, {.cluster = "west", .node = "sim-0"});
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(spec::ErrorField(cluster.status()), "cluster");
  EXPECT_THAT(cluster.status().message(), HasSubstr("west"));

  absl::StatusOr<NodeView> node = Change(NodeAction::kDrain, "sim-9");
  EXPECT_EQ(node.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(spec::ErrorField(node.status()), "node");
  EXPECT_THAT(node.status().message(), HasSubstr("sim-9"));

  absl::StatusOr<NodeView> grace = Change(NodeAction::kCordon, "sim-0", "", Duration(1'000));
  EXPECT_EQ(grace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec::ErrorField(grace.status()), "gracePeriod");
  grace = Change(NodeAction::kDrain, "sim-0", "", Duration(-1));
  EXPECT_EQ(spec::ErrorField(grace.status()), "gracePeriod");

  absl::StatusOr<NodeView> reason =
      Change(NodeAction::kCordon, "sim-0", std::string(kMaxNodeReasonBytes + 1, 'x'));
  EXPECT_EQ(spec::ErrorField(reason.status()), "reason");
  // Nothing changed.
  EXPECT_EQ(NodeNamed("sim-0").state, NodeAdminState::kReady);
  EXPECT_FALSE(NodeNamed("sim-0").state_since.has_value());
}

TEST_F(JobManagerNodesTest, ANoExecuteTaintEvictsTheJobsThatDoNotTolerateItAndRequeuesThem) {
  StartManager(3);
  const std::string victim = Submit(NodeJob(1, "10s"));
  const std::string tolerant =
      Submit(NodeJob(1, "10s", ", {key: maint, operator: Exists, effect: NoExecute}"));
  const std::string beside_kubernetes = Submit(NodeJob(1, "10s"));
  const std::string victim_node =
      WaitFor(victim, JobPhase::kRunning).document.status->tasks[0].node;
  const std::string tolerant_node =
      WaitFor(tolerant, JobPhase::kRunning).document.status->tasks[0].node;
  const std::string kubernetes_node =
      WaitFor(beside_kubernetes, JobPhase::kRunning).document.status->tasks[0].node;

  const Taint maint{.key = "maint", .effect = TaintEffect::kNoExecute};
  SetTaints(victim_node, {maint});
  SetTaints(tolerant_node, {maint});
  // Kubernetes' own: tolerated there for 300 s by default, and left to it.
  SetTaints(kubernetes_node,
            {{.key = "node.kubernetes.io/unreachable", .effect = TaintEffect::kNoExecute}});
  manager_->WaitIdle();
  SetTaints(victim_node, {maint});  // reported again: no second eviction

  // The job's own grace, then requeued without counting a restart (maxRestarts is 0).
  clock_.Advance(Duration(9'999));
  manager_->WaitIdle();
  EXPECT_EQ(manager_->Get(kAdmin, victim)->document.status->phase, JobPhase::kRunning);
  clock_.Advance(Duration(1));
  const std::vector<JobEvent> events =
      EventsOnce(victim, [](const std::vector<JobEvent>& e) { return Count(e, "Requeued") > 0; });
  EXPECT_EQ(Count(events, "Evicted"), 1);
  for (const JobEvent& event : events) {
    if (event.type == "Evicted" || event.type == "Requeued") {
      EXPECT_EQ(event.reason, "NoExecuteTaint");
    }
    if (event.type == "Evicted") {
      EXPECT_THAT(event.message,
                  HasSubstr("node sim/" + victim_node +
                            " has the taint maint:NoExecute, which task w-0 does not tolerate"));
    }
  }
  const JobView requeued = *manager_->Get(kAdmin, victim);
  EXPECT_EQ(requeued.document.status->phase, JobPhase::kPending);
  EXPECT_EQ(requeued.document.status->preemptions, 0);

  for (const std::string& id : {tolerant, beside_kubernetes}) {
    EXPECT_EQ(manager_->Get(kAdmin, id)->document.status->phase, JobPhase::kRunning) << id;
    const auto untouched = manager_->Events(kAdmin, id);
    ASSERT_TRUE(untouched.ok()) << untouched.status();
    for (const JobEvent& event : *untouched) EXPECT_NE(event.type, "Evicted") << id;
  }

  // Nowhere to go while the taint stays; once it is gone the job runs there again.
  SetTaints(victim_node, {});
  const JobView again = WaitFor(victim, JobPhase::kRunning);
  EXPECT_EQ(again.document.status->tasks[0].node, victim_node);
}

}  // namespace
}  // namespace tessera::server

// The job manager never writes what its store cannot hold: a job is refused at submission when
// some state it may reach could not be stored, a placed gang's tasks are stored apart from its
// record, and a store error reaches the client as Internal. Over real SQLite stores (with
// their limits lowered, so that the jobs stay small) and a simulated cluster.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "spec/request_error.h"
#include "spec/jobspec.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/profile.h"
#include "sched/testing/test_nodes.h"
#include "server/job_manager.h"
#include "server/testing/wait_for_phase.h"
#include "agent/sim/sim_cluster.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

const Caller kTenant{.tenant = "a"};
constexpr int64_t kGi = int64_t{1} << 30;

class TestClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(ms_.load())); }

 private:
  std::atomic<int64_t> ms_{1'700'000'000'000};
};

// A job of `replicas` tasks of 100 millicores each running `command`, for the simulated nodes.
spec::JobDocument Job(int replicas, const std::string& command) {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(fmt::format(R"(
apiVersion: tessera/v1
kind: Job
spec:
  duration: 1h
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
  tasks: [{{name: w, replicas: {}, resources: {{cpu: 100m}}, command: [sh, -c, "{}"]}}]
)",
                                                                           replicas, command));
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

class JobStoreLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("job_store_limits_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    Stop();
    store_.reset();
    fs::remove_all(dir_);
  }

  void OpenStore(store::TxnLimits limits) {
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open({.data_dir = (dir_ / "store").string(),
                                  .sync = store::SqliteStoreOptions::Sync::kNormal,
                                  .limits = limits});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // A manager over the store with `nodes` simulated 32-core nodes whose names are 200
  // characters long (the longest names make the largest placements).
  void Start(int nodes) {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store_.get(),
                            .clock = &clock_,
                            .profile = *profile,
                            .cycle_interval = Duration(20)});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
    std::vector<Node> sim_nodes;
    for (int i = 0; i < nodes; ++i) {
      sim_nodes.push_back(testing::NamedGpuNode(
          fmt::format("rack-{:03d}-{}", i, std::string(191, 'n')), 0, 32'000, 256 * kGi));
    }
    sim_ = std::make_unique<agent::SimCluster>(
        agent::SimClusterOptions{.nodes = sim_nodes, .clock = &clock_, .tick = Duration(5)},
        manager_.get());
    const absl::Status started = manager_->Start({sim_.get()});
    ASSERT_TRUE(started.ok()) << started;
  }

  void Stop() {
    if (manager_) manager_->Stop();
    sim_.reset();
    manager_.reset();
  }

  // Waits (real time, generous bound) until the job reaches `phase`.
  JobView WaitFor(const std::string& id, JobPhase phase) {
    return WaitForPhase(*manager_, kTenant, id, phase);
  }

  fs::path dir_;
  TestClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<agent::SimCluster> sim_;
};

// The fault: a gang whose record fits the store while pending but not once placed was
// accepted, then its placement could not be stored — it stayed Admitted holding its nodes, a
// cancel timed out, and a restart brought it back the same.
TEST_F(JobStoreLimitsTest, AGangIsStorableOncePlacedAndCancelsAndSurvivesARestart) {
  OpenStore({.max_value_bytes = 256 * 1024});
  Start(/*nodes=*/4);
  // 1,000 tasks with a 20 KB command: the record alone is far below the limit; the tasks
  // placed on nodes with 200-character names hold about 450 KB.
  absl::StatusOr<SubmitResult> submitted =
      manager_->Submit(kTenant, Job(1000, std::string(20'000, 'x')));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string id = submitted->job.document.metadata.id;
  const JobView running = WaitFor(id, JobPhase::kRunning);
  ASSERT_EQ(running.document.status->tasks.size(), 1000u);
  EXPECT_THAT(running.document.status->tasks[999].node, HasSubstr("rack-"));

  // The placements are stored: a restarted manager has them.
  Stop();
  Start(/*nodes=*/4);
  const JobView restored = WaitFor(id, JobPhase::kRunning);
  ASSERT_EQ(restored.document.status->tasks.size(), 1000u);
  EXPECT_EQ(restored.document.status->tasks[999].node, running.document.status->tasks[999].node);
  int64_t allocated = 0;
  for (const NodeView& node : manager_->Nodes()) allocated += node.allocated.cpu;
  EXPECT_EQ(allocated, 1000 * 100);

  absl::StatusOr<JobView> cancelled = manager_->Cancel(kTenant, id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  WaitFor(id, JobPhase::kCancelled);
  for (const NodeView& node : manager_->Nodes()) EXPECT_EQ(node.allocated.cpu, 0) << node.name;

  // The event naming every placement is stored too, its message bounded.
  absl::StatusOr<std::vector<JobEvent>> events = manager_->Events(kTenant, id);
  ASSERT_TRUE(events.ok()) << events.status();
  bool placed = false;
  for (const JobEvent& event : *events) {
    if (event.type != "Placed") continue;
    placed = true;
    EXPECT_LE(event.message.size(), kMaxStoredMessageBytes);
  }
  EXPECT_TRUE(placed);
}

TEST_F(JobStoreLimitsTest, AJobThatCouldNotBeStoredIsRefusedAtSubmissionNamingTheField) {
  OpenStore({.max_value_bytes = 64 * 1024, .max_total_bytes = 1 << 20});
  Start(/*nodes=*/1);
  absl::Status command = manager_->Submit(kTenant, Job(1, std::string(70'000, 'x'))).status();
  EXPECT_EQ(command.code(), absl::StatusCode::kInvalidArgument) << command;
  EXPECT_EQ(spec::ErrorField(command), "spec.tasks[0].command") << command;
  EXPECT_THAT(command.message(), Not(HasSubstr("success[")));

  // Each task fits; all of them placed in one write would not.
  absl::Status replicas = manager_->Submit(kTenant, Job(4096, "true")).status();
  EXPECT_EQ(replicas.code(), absl::StatusCode::kInvalidArgument) << replicas;
  EXPECT_EQ(spec::ErrorField(replicas), "spec.tasks[0].replicas") << replicas;

  EXPECT_TRUE(manager_->List(kTenant, {})->jobs.empty());
  EXPECT_TRUE(manager_->Submit(kTenant, Job(1, "true")).ok());
}

TEST_F(JobStoreLimitsTest, AQueueTreeTooLargeToStoreIsRefusedNamingTheQueues) {
  OpenStore({.max_value_bytes = 4096});
  Start(/*nodes=*/1);
  std::vector<QueueSpec> tree;
  for (int i = 0; i < 200; ++i) tree.push_back({.name = fmt::format("team-{}", i)});
  const Caller admin{.tenant = "admin", .admin = true};
  absl::Status refused = manager_->ApplyQueues(admin, tree).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_EQ(spec::ErrorField(refused), "queues") << refused;
  EXPECT_THAT(refused.message(), Not(HasSubstr("success[")));
  std::vector<QueueSpec> small(tree.begin(), tree.begin() + 2);
  EXPECT_TRUE(manager_->ApplyQueues(admin, small).ok());
}

TEST_F(JobStoreLimitsTest, AStoreErrorReachesTheClientAsInternalWithoutTheStoresFieldPath) {
  // Keys longer than this store takes: a misconfigured store, not the client's fault.
  OpenStore({.max_key_bytes = 16});
  Start(/*nodes=*/1);
  absl::Status refused = manager_->Submit(kTenant, Job(1, "true")).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInternal) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("could not be stored"));
  EXPECT_THAT(refused.message(), Not(HasSubstr("exceed")));
  EXPECT_EQ(spec::ErrorField(refused), std::nullopt);
  EXPECT_TRUE(manager_->List(kTenant, {})->jobs.empty());
}

}  // namespace
}  // namespace tessera::server

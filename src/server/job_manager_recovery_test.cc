// JobManager after a crash in the durable path, and right after Start: a store that fails the
// loop's write at a chosen step stands for a process killed there (what was committed stays,
// what follows never happens); a new manager over the same store must finish the job.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "agent/sim/sim_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sched/testing/test_nodes.h"
#include "server/job_manager.h"
#include "server/job_record.h"
#include "server/testing/wait_for_phase.h"
#include "spec/jobspec.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::server {
namespace {

namespace fs = std::filesystem;

const Caller kTenant{.tenant = "a"};

// Forwards to a store; from the first transaction that stores an event of type `crash_at` on,
// it commits nothing more (kBeforeCommit) or commits that one but answers Unavailable
// (kAfterCommit: the outcome is lost, as when the process dies before it hears of it), and
// refuses everything after it.
class CrashingStore final : public store::Store {
 public:
  enum class When { kBeforeCommit, kAfterCommit };
  CrashingStore(store::Store* inner, std::string crash_at, When when)
      : inner_(inner), crash_at_("\"type\":\"" + crash_at + "\""), when_(when) {}

  bool crashed() const { return crashed_.load(); }

  absl::StatusOr<std::optional<store::KeyValue>> Get(std::string_view key) override {
    return inner_->Get(key);
  }
  absl::StatusOr<store::RangeResult> Range(const store::RangeRequest& request) override {
    return inner_->Range(request);
  }
  absl::StatusOr<store::TxnResult> Commit(store::Txn txn) override {
    if (crashed()) return absl::UnavailableError("crashed");
    return inner_->Commit(std::move(txn));
  }
  absl::Status CommitAsync(store::Txn txn, TxnCallback done) override {
    if (crashed()) return absl::UnavailableError("crashed");
    if (!StoresCrashEvent(txn)) return inner_->CommitAsync(std::move(txn), std::move(done));
    crashed_ = true;
    if (when_ == When::kBeforeCommit) return absl::UnavailableError("crashed");
    absl::StatusOr<store::TxnResult> committed = inner_->Commit(std::move(txn));
    EXPECT_TRUE(committed.ok()) << committed.status();
    done(absl::UnavailableError("crashed after the commit"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<store::Watcher>> Watch(std::string_view prefix,
                                                        store::Revision from) override {
    return inner_->Watch(prefix, from);
  }
  absl::Status Compact(store::Revision revision) override { return inner_->Compact(revision); }

 private:
  bool StoresCrashEvent(const store::Txn& txn) const {
    for (const store::Op& op : txn.success) {
      if (op.key.starts_with("/tessera/events/") && op.value.find(crash_at_) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  store::Store* const inner_;
  const std::string crash_at_;
  const When when_;
  std::atomic<bool> crashed_{false};
};

spec::JobDocument SimJob(const std::string& duration) {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(fmt::format(R"(
apiVersion: tessera/v1
kind: Job
spec:
  duration: {}
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
  tasks: [{{name: w, resources: {{cpu: "1", gpu: 8}}}}]
)",
                                                                             duration));
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

class JobManagerRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("job_manager_recovery_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store = store::SqliteStore::Open(
        {.data_dir = dir_.string(), .sync = store::SqliteStoreOptions::Sync::kNormal});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  void TearDown() override {
    Stop();
    store_.reset();
    fs::remove_all(dir_);
  }

  // A manager over `store` with a simulated cluster of `nodes` 8-GPU nodes.
  void Start(store::Store* store, int nodes, Duration cycle_interval = Duration(20)) {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store,
                            .clock = &clock_,
                            .timers = &clock_,
                            .profile = *profile,
                            .cycle_interval = cycle_interval});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
    std::vector<Node> sim_nodes;
    for (int i = 0; i < nodes; ++i) {
      sim_nodes.push_back(
          testing::NamedGpuNode(fmt::format("sim-{}", i), 8, 32'000, int64_t{256} << 30));
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

  std::string Submit(spec::JobDocument doc) {
    absl::StatusOr<SubmitResult> result = manager_->Submit(kTenant, std::move(doc));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->job.document.metadata.id : "";
  }
  JobView WaitFor(const std::string& id, JobPhase phase) {
    return WaitForPhase(*manager_, kTenant, id, phase);
  }
  // Waits (real time, only as a hang guard) until the store has crashed.
  static void WaitForCrash(const CrashingStore& store) {
    for (int i = 0; i < 4000 && !store.crashed(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(store.crashed());
  }
  std::vector<std::string> StoredEventTypes(const std::string& id) {
    absl::StatusOr<std::vector<JobEvent>> events = manager_->Events(kTenant, id);
    EXPECT_TRUE(events.ok()) << events.status();
    std::vector<std::string> types;
    if (events.ok()) {
      for (const JobEvent& event : *events) types.push_back(event.type);
    }
    return types;
  }

  fs::path dir_;
  SimulatedClock clock_{TimePoint(Duration(1'700'000'000'000))};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<agent::SimCluster> sim_;
};

TEST_F(JobManagerRecoveryTest, ACrashAfterTheCyclesCommitBindsAndLaunchesOnRestart) {
  CrashingStore crashing(store_.get(), "Bound", CrashingStore::When::kBeforeCommit);
  Start(&crashing, 1);
  const std::string id = Submit(SimJob("10m"));
  WaitForCrash(crashing);  // the placement is stored; "Bound" never is, nothing was launched
  Stop();

  Start(store_.get(), 1);
  WaitFor(id, JobPhase::kRunning);
  // Reads show a step before it is stored (job_manager.h, "Durability"): wait for "Running" to
  // be stored (real time, only as a hang guard).
  for (int i = 0; i < 4000 && StoredEventTypes(id).size() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_THAT(StoredEventTypes(id),
              ::testing::ElementsAre("Submitted", "Admitted", "Placed", "Bound", "Running"));
  clock_.Advance(Duration(600'000));
  WaitFor(id, JobPhase::kSucceeded);
}

TEST_F(JobManagerRecoveryTest, ACrashAfterBoundIsStoredButBeforeTheLaunchIsReconciled) {
  CrashingStore crashing(store_.get(), "Bound", CrashingStore::When::kAfterCommit);
  Start(&crashing, 1);
  const std::string id = Submit(SimJob("10m"));
  WaitForCrash(crashing);
  Stop();

  // The task is known as bound: the cluster reconciles it (Cluster::Recover) and it ends.
  Start(store_.get(), 1);
  clock_.Advance(Duration(600'000));
  const JobView done = WaitFor(id, JobPhase::kSucceeded);
  EXPECT_EQ(done.document.status->tasks.size(), 1u);
}

TEST_F(JobManagerRecoveryTest, TheFirstCycleAfterStartDoesNotWaitForTheCycleInterval) {
  Start(store_.get(), 1);
  const std::string running = Submit(SimJob("10m"));
  WaitFor(running, JobPhase::kRunning);
  const std::string queued = Submit(SimJob("10m"));  // the one node is full: it waits
  Stop();

  // A second node, and a cycle interval the test never lets pass: only a cycle run at Start
  // places the queued job.
  Start(store_.get(), 2, Duration(3'600'000));
  WaitFor(queued, JobPhase::kRunning);
  EXPECT_EQ(manager_->Get(kTenant, running)->document.status->phase, JobPhase::kRunning);
}

// A job stored by a version that kept the spec inside the record loads, and its next write
// stores the spec under its own key; the record then holds no spec.
TEST_F(JobManagerRecoveryTest, ARecordWithItsSpecInlineLoadsAndItsNextWriteStoresTheSpec) {
  Start(store_.get(), 1);
  const std::string id = Submit(SimJob("10m"));
  WaitFor(id, JobPhase::kRunning);
  Stop();
  const int64_t job = *ParseJobId(id);
  absl::StatusOr<std::optional<store::KeyValue>> spec = store_->Get(SpecKey(job));
  absl::StatusOr<std::optional<store::KeyValue>> record = store_->Get(JobKey(job));
  ASSERT_TRUE(spec.ok() && spec->has_value() && record.ok() && record->has_value());
  nlohmann::json older = nlohmann::json::parse((*record)->value);
  older["document"] = (*spec)->value;
  ASSERT_TRUE(store_
                  ->Commit(store::Txn::Unconditional(
                      {store::Op::Put(JobKey(job), older.dump()), store::Op::Delete(SpecKey(job))}))
                  .ok());

  Start(store_.get(), 1);
  EXPECT_EQ(manager_->Get(kTenant, id)->document.spec.duration, Duration(600'000));
  clock_.Advance(Duration(600'000));
  WaitFor(id, JobPhase::kSucceeded);
  for (int i = 0; i < 4000 && StoredEventTypes(id).back() != "Succeeded"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a hang guard only
  }
  Stop();
  spec = store_->Get(SpecKey(job));
  record = store_->Get(JobKey(job));
  ASSERT_TRUE(spec.ok() && spec->has_value()) << "the spec is stored under its key again";
  EXPECT_FALSE(nlohmann::json::parse((*record)->value).contains("document"));

  Start(store_.get(), 1);
  const absl::StatusOr<JobView> reloaded = manager_->Get(kTenant, id);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ(reloaded->document.status->phase, JobPhase::kSucceeded);
  EXPECT_EQ(reloaded->document.spec.duration, Duration(600'000));
}

}  // namespace
}  // namespace tessera::server

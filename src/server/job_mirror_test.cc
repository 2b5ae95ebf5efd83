// JobMirror on a real SQLite store: the list, the watch after it, recovery from a compacted
// watch, the hand-over's wait for the new leader's write, and a JobManager started from the
// handed-over records; StandbyJobService's reads over a mirror.
#include "server/job_mirror.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "agent/sim/sim_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/testing/test_nodes.h"
#include "server/job_manager.h"
#include "server/standby_job_service.h"
#include "server/testing/wait_for_phase.h"
#include "spec/jobspec.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::server {
namespace {

namespace fs = std::filesystem;

const Caller kTenant{.tenant = "a"};
constexpr TimePoint kNow{Duration(1'700'000'000'000)};

spec::JobDocument SimJob(const std::string& duration, int replicas = 1) {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(fmt::format(R"(
apiVersion: tessera/v1
kind: Job
spec:
  duration: {}
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
  tasks: [{{name: w, replicas: {}, resources: {{cpu: "1", gpu: 8}}}}]
)",
                                                                             duration, replicas));
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

// Forwards to a store and counts the reads of job and task keys.
class CountingStore final : public store::Store {
 public:
  explicit CountingStore(store::Store* inner) : inner_(inner) {}
  int64_t job_reads() const { return job_reads_.load(); }

  absl::StatusOr<std::optional<store::KeyValue>> Get(std::string_view key) override {
    return inner_->Get(key);
  }
  absl::StatusOr<store::RangeResult> Range(const store::RangeRequest& request) override {
    if (request.prefix.starts_with(kJobPrefix) || request.prefix.starts_with(kTaskPrefix)) {
      ++job_reads_;
    }
    return inner_->Range(request);
  }
  absl::StatusOr<store::TxnResult> Commit(store::Txn txn) override {
    return inner_->Commit(std::move(txn));
  }
  absl::Status CommitAsync(store::Txn txn, TxnCallback done) override {
    return inner_->CommitAsync(std::move(txn), std::move(done));
  }
  absl::StatusOr<std::unique_ptr<store::Watcher>> Watch(std::string_view prefix,
                                                        store::Revision from) override {
    return inner_->Watch(prefix, from);
  }
  absl::Status Compact(store::Revision revision) override { return inner_->Compact(revision); }

 private:
  store::Store* const inner_;
  std::atomic<int64_t> job_reads_{0};
};

// Forwards to a store; while held, its watchers deliver nothing (what they have waits): a slow
// watch.
class HeldWatchStore final : public store::Store {
 public:
  explicit HeldWatchStore(store::Store* inner) : inner_(inner) {}

  void Hold(bool held) {
    {
      std::lock_guard<std::mutex> lock(gate_->mu);
      gate_->held = held;
    }
    gate_->cv.notify_all();
  }

  absl::StatusOr<std::optional<store::KeyValue>> Get(std::string_view key) override {
    return inner_->Get(key);
  }
  absl::StatusOr<store::RangeResult> Range(const store::RangeRequest& request) override {
    return inner_->Range(request);
  }
  absl::StatusOr<store::TxnResult> Commit(store::Txn txn) override {
    return inner_->Commit(std::move(txn));
  }
  absl::Status CommitAsync(store::Txn txn, TxnCallback done) override {
    return inner_->CommitAsync(std::move(txn), std::move(done));
  }
  absl::StatusOr<std::unique_ptr<store::Watcher>> Watch(std::string_view prefix,
                                                        store::Revision from) override {
    absl::StatusOr<std::unique_ptr<store::Watcher>> inner = inner_->Watch(prefix, from);
    if (!inner.ok()) return inner.status();
    return std::make_unique<HeldWatcher>(*std::move(inner), gate_);
  }
  absl::Status Compact(store::Revision revision) override { return inner_->Compact(revision); }

 private:
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool held = false;
  };
  class HeldWatcher final : public store::Watcher {
   public:
    HeldWatcher(std::unique_ptr<store::Watcher> inner, std::shared_ptr<Gate> gate)
        : inner_(std::move(inner)), gate_(std::move(gate)) {}
    // What comes while held waits until the hold ends.
    absl::StatusOr<std::vector<store::Event>> Next(absl::Time deadline) override {
      absl::StatusOr<std::vector<store::Event>> events = inner_->Next(deadline);
      std::unique_lock<std::mutex> lock(gate_->mu);
      gate_->cv.wait(lock, [&] { return !gate_->held || cancelled_; });
      return events;
    }
    void Cancel() override {
      {
        std::lock_guard<std::mutex> lock(gate_->mu);
        cancelled_ = true;
      }
      gate_->cv.notify_all();
      inner_->Cancel();
    }

   private:
    std::unique_ptr<store::Watcher> inner_;
    std::shared_ptr<Gate> gate_;
    bool cancelled_ = false;  // guarded by gate_->mu
  };

  store::Store* const inner_;
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
};

class JobMirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("job_mirror_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open({.data_dir = dir_.string(),
                                  .sync = store::SqliteStoreOptions::Sync::kNormal,
                                  .watch_buffer_events = 4});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    held_ = std::make_unique<HeldWatchStore>(store_.get());
  }
  void TearDown() override {
    mirror_.reset();
    StopManager();
    held_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  void StartMirror() {
    mirror_ =
        std::make_unique<JobMirror>(JobMirrorOptions{.store = held_.get(), .retry = Duration(10)});
  }
  store::Revision StoreRevision() {
    absl::StatusOr<store::RangeResult> read = store_->Range({.prefix = "/", .limit = 1});
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? read->revision : 0;
  }
  // Waits (real time, only as a hang guard) until the mirror has listed the store and applied
  // every write so far.
  void CatchUp() {
    for (int i = 0; i < 4000 && mirror_->lists() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_GT(mirror_->lists(), 0);
    const absl::Status caught_up =
        mirror_->WaitFor(StoreRevision(), absl::Now() + absl::Seconds(20));
    ASSERT_TRUE(caught_up.ok()) << caught_up;
  }

  // The leader's writes of a job, as the submission and PersistLocked make them: its spec (the
  // first time), the record, then its tasks.
  JobRecord NewRecord(int64_t id, int replicas = 1) {
    return NewJobRecord(id, "a", SimJob("10m", replicas), kNow);
  }
  void Write(JobRecord& record) {
    std::vector<store::Op> ops;
    if (submitted_.insert(record.id).second) {
      ops.push_back(store::Op::Put(SpecKey(record.id), EncodeJobSpec(record)));
    }
    ops.push_back(store::Op::Put(JobKey(record.id), EncodeJobRecord(record)));
    for (store::Op& op : TaskWrites(record)) ops.push_back(std::move(op));
    ASSERT_TRUE(store_->Commit(store::Txn::Unconditional(std::move(ops))).ok());
  }
  static void Place(JobRecord& record, int32_t task, const std::string& node) {
    TaskRuntime& runtime = record.tasks[task];
    runtime.cluster = "sim";
    runtime.placement.node = node;
    runtime.phase = TaskPhase::kRunning;
    runtime.launch_id = fmt::format("{}-{}-a0", record.id, runtime.name);
    runtime.launched = true;
    record.TaskChanged(task);
    record.status().phase = JobPhase::kRunning;
    record.SyncTaskStatus();
  }
  // The mirrored record `id`, copied out (nullopt when it has none).
  std::optional<JobRecord> Mirrored(int64_t id) {
    std::optional<JobRecord> found;
    mirror_->Read([&](const std::map<int64_t, JobRecord>& jobs) {
      if (auto it = jobs.find(id); it != jobs.end()) found = it->second;
    });
    return found;
  }

  // A manager over `store` with a simulated cluster of `nodes` 8-GPU nodes.
  void StartManager(store::Store* store, int nodes, Duration cycle_interval,
                    std::optional<std::map<int64_t, JobRecord>> stored_jobs = std::nullopt) {
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = store,
                            .clock = &clock_,
                            .timers = &clock_,
                            .profile = *profile,
                            .cycle_interval = cycle_interval,
                            .stored_jobs = std::move(stored_jobs)});
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
  void StopManager() {
    if (manager_) manager_->Stop();
    sim_.reset();
    manager_.reset();
  }
  std::string Submit(spec::JobDocument doc) {
    absl::StatusOr<SubmitResult> result = manager_->Submit(kTenant, std::move(doc));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->job.document.metadata.id : "";
  }

  fs::path dir_;
  SimulatedClock clock_{kNow};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<HeldWatchStore> held_;  // over store_: the mirror's
  std::unique_ptr<JobMirror> mirror_;
  std::unique_ptr<JobManager> manager_;
  std::set<int64_t> submitted_;  // jobs whose spec Write has stored
  std::unique_ptr<agent::SimCluster> sim_;
};

TEST_F(JobMirrorTest, ListsTheStoredRecordsThenFollowsEveryChange) {
  JobRecord placed = NewRecord(1, 2);
  Place(placed, 1, "sim-0");
  Write(placed);
  StartMirror();
  ASSERT_NO_FATAL_FAILURE(CatchUp());
  EXPECT_EQ(mirror_->lists(), 1);
  std::optional<JobRecord> listed = Mirrored(1);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->tasks[0].phase, TaskPhase::kPending);
  EXPECT_EQ(listed->tasks[1].placement.node, "sim-0");
  EXPECT_EQ(listed->status().tasks[1].node, "sim-0");
  EXPECT_TRUE(listed->stored_tasks[1].has_value());

  // A new job; the record of job 1 written alone keeps its stored task; a task placed, then one
  // back to its initial state (its key deleted, as a requeue does).
  JobRecord added = NewRecord(2);
  Write(added);
  placed.status().message = "changed";
  ASSERT_TRUE(
      store_
          ->Commit(store::Txn::Unconditional({store::Op::Put(JobKey(1), EncodeJobRecord(placed))}))
          .ok());
  Place(placed, 0, "sim-1");
  Write(placed);
  placed.tasks[1] = TaskRuntime{.name = placed.tasks[1].name};
  placed.TaskChanged(1);
  placed.SyncTaskStatus();
  Write(placed);
  ASSERT_NO_FATAL_FAILURE(CatchUp());

  EXPECT_EQ(mirror_->lists(), 1);
  ASSERT_TRUE(Mirrored(2).has_value());
  std::optional<JobRecord> followed = Mirrored(1);
  ASSERT_TRUE(followed.has_value());
  EXPECT_EQ(followed->status().message, "changed");
  EXPECT_EQ(followed->tasks[0].placement.node, "sim-1");
  EXPECT_EQ(followed->status().tasks[0].phase, TaskPhase::kRunning);
  EXPECT_EQ(followed->tasks[1].placement.node, "");
  EXPECT_EQ(followed->status().tasks[1].phase, TaskPhase::kPending);
  EXPECT_FALSE(followed->stored_tasks[1].has_value());
}

TEST_F(JobMirrorTest, AWatchWhoseHistoryIsCompactedAwayIsRecoveredByListingAgain) {
  JobRecord first = NewRecord(1);
  Write(first);
  StartMirror();
  ASSERT_NO_FATAL_FAILURE(CatchUp());
  // While its watch is held, more changes than the watch buffers, then a compaction of their
  // history: the watch cannot catch up and ends with OutOfRange.
  held_->Hold(true);
  for (int64_t id = 2; id <= 12; ++id) {
    JobRecord record = NewRecord(id);
    Write(record);
  }
  ASSERT_TRUE(store_->Compact(StoreRevision()).ok());
  held_->Hold(false);

  ASSERT_NO_FATAL_FAILURE(CatchUp());
  for (int i = 0; i < 4000 && mirror_->lists() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(mirror_->lists(), 2);
  for (int64_t id = 1; id <= 12; ++id) EXPECT_TRUE(Mirrored(id).has_value()) << id;
  // And it follows the store again.
  JobRecord after = NewRecord(13);
  Write(after);
  ASSERT_NO_FATAL_FAILURE(CatchUp());
  EXPECT_TRUE(Mirrored(13).has_value());
}

TEST_F(JobMirrorTest, TheHandOverWaitsUntilTheNewLeadersWriteIsApplied) {
  StartMirror();
  ASSERT_NO_FATAL_FAILURE(CatchUp());
  // The watch is held while the old leader's last write commits: only the wait for the
  // hand-over write makes sure it is in what the new leader takes.
  held_->Hold(true);
  JobRecord last = NewRecord(7);
  Place(last, 0, "sim-0");
  Write(last);
  const absl::StatusOr<MirroredJobs> early =
      mirror_->HandOver(*store_, "/tessera/leader/a", absl::Now() + absl::Milliseconds(20));
  EXPECT_EQ(early.status().code(), absl::StatusCode::kDeadlineExceeded) << early.status();
  std::future<absl::StatusOr<MirroredJobs>> handed = std::async(std::launch::async, [&] {
    return mirror_->HandOver(*store_, "/tessera/leader/b", absl::Now() + absl::Seconds(20));
  });
  EXPECT_EQ(handed.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  held_->Hold(false);

  absl::StatusOr<MirroredJobs> jobs = handed.get();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->jobs.size(), 1u);
  EXPECT_EQ(jobs->jobs.at(7).tasks[0].placement.node, "sim-0");
  EXPECT_EQ(jobs->stored_tasks, 1);
  absl::StatusOr<std::optional<store::KeyValue>> marker = store_->Get(kHandOverKey);
  ASSERT_TRUE(marker.ok() && marker->has_value());
  EXPECT_EQ((*marker)->value, "/tessera/leader/b");
  EXPECT_EQ(jobs->revision, (*marker)->mod_revision);
}

TEST_F(JobMirrorTest, ALeaderStartedFromTheMirroredRecordsSchedulesEveryJobAtItsFirstCycle) {
  StartMirror();
  ASSERT_NO_FATAL_FAILURE(CatchUp());
  StartManager(store_.get(), 1, Duration(20));
  const std::string running = Submit(SimJob("10m"));
  WaitForPhase(*manager_, kTenant, running, JobPhase::kRunning);
  const std::string queued = Submit(SimJob("10m"));  // the one node is full: it waits
  manager_->WaitIdle();
  StopManager();  // the old leader is gone

  absl::StatusOr<MirroredJobs> jobs =
      mirror_->HandOver(*store_, "/tessera/leader/b", absl::Now() + absl::Seconds(20));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->jobs.size(), 2u);
  // A second node, and a cycle interval the test never lets pass: only the cycle run at Start,
  // over the mirrored records, places the queued job. Nothing of the jobs is read again.
  CountingStore counting(store_.get());
  StartManager(&counting, 2, Duration(3'600'000), std::move(jobs->jobs));
  WaitForPhase(*manager_, kTenant, queued, JobPhase::kRunning);
  const JobView adopted = *manager_->Get(kTenant, running);
  EXPECT_EQ(adopted.document.status->phase, JobPhase::kRunning);
  EXPECT_EQ(adopted.document.status->tasks[0].node, "sim-0");
  EXPECT_EQ(counting.job_reads(), 0);
  // The mirrored records carry the indices too: a new job gets the next id.
  EXPECT_EQ(Submit(SimJob("1m")), "3");
}

TEST_F(JobMirrorTest, AStandbyServesTheMirroredJobsAndTheirEvents) {
  StartMirror();
  ASSERT_NO_FATAL_FAILURE(CatchUp());
  StandbyJobService standby(mirror_.get(), store_.get());
  StartManager(store_.get(), 1, Duration(20));
  const std::string id = Submit(SimJob("10m"));
  // The standby sees the job once its watch has brought the submission.
  for (int i = 0; i < 4000 && !standby.Get(kTenant, id).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  WaitForPhase(standby, kTenant, id, JobPhase::kRunning);
  absl::StatusOr<JobView> seen = standby.Get(kTenant, id);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->document.status->tasks[0].node, "sim-0");
  EXPECT_EQ(standby.Get({.tenant = "b"}, id).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<ListJobsResult> listed = standby.List(kTenant, {.limit = 10});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->jobs.size(), 1u);
  EXPECT_EQ(listed->jobs[0].document.metadata.id, id);
  EXPECT_EQ(standby.List(kTenant, {.limit = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<JobEvent>> events = standby.Events(kTenant, id);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_FALSE(events->empty());
  EXPECT_EQ(events->front().type, "Submitted");
  EXPECT_EQ(standby.Submit(kTenant, SimJob("1m")).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(standby.Ready());
}

}  // namespace
}  // namespace tessera::server

// JobManager::SubmitBatch over a real SQLite store and a simulated cluster: per-item results in
// order, the accepted jobs committed in one store transaction (several only when the store's
// limits demand it), idempotency by metadata.requestId within and across batches, and every
// accepted job durable (a restarted manager has it) and started; and the bound on the
// submissions waiting for the scheduling loop (back-pressure, ResourceExhausted).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "agent/sim/sim_cluster.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sched/profile.h"
#include "sched/testing/test_nodes.h"
#include "server/job_manager.h"
#include "server/testing/wait_for_phase.h"
#include "spec/jobspec.h"
#include "spec/request_error.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const Caller kTenant{.tenant = "a"};
constexpr int64_t kGi = int64_t{1} << 30;

class TestClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(ms_.load())); }

 private:
  std::atomic<int64_t> ms_{1'700'000'000'000};
};

// The store, counting the transactions that create jobs (those that compare a job key absent).
class CountingStore final : public store::Store {
 public:
  explicit CountingStore(store::Store* inner) : inner_(inner) {}
  absl::StatusOr<std::optional<store::KeyValue>> Get(std::string_view key) override {
    return inner_->Get(key);
  }
  absl::StatusOr<store::RangeResult> Range(const store::RangeRequest& request) override {
    return inner_->Range(request);
  }
  absl::StatusOr<store::TxnResult> Commit(store::Txn txn) override {
    Count(txn);
    return inner_->Commit(std::move(txn));
  }
  absl::Status CommitAsync(store::Txn txn, TxnCallback done) override {
    Count(txn);
    return inner_->CommitAsync(std::move(txn), std::move(done));
  }
  absl::StatusOr<std::unique_ptr<store::Watcher>> Watch(std::string_view prefix,
                                                        store::Revision from) override {
    return inner_->Watch(prefix, from);
  }
  store::TxnLimits limits() const override { return inner_->limits(); }
  absl::Status Compact(store::Revision revision) override { return inner_->Compact(revision); }
  int64_t creations() const { return creations_.load(); }

 private:
  void Count(const store::Txn& txn) {
    for (const store::Compare& compare : txn.compares) {
      if (compare.key.starts_with("/tessera/jobs/") &&
          compare.target == store::Compare::Target::kVersion && compare.number == 0) {
        ++creations_;
        return;
      }
    }
  }

  store::Store* const inner_;
  std::atomic<int64_t> creations_{0};
};

// A cluster whose launches wait until the test opens it: the loop, which launches, stalls there
// while submissions keep arriving. Everything else is the simulated cluster's.
class GatedCluster final : public Cluster {
 public:
  explicit GatedCluster(Cluster* inner) : inner_(inner) {}
  ~GatedCluster() override { Open(); }

  // Waits until a launch is held at the gate.
  void WaitForHeldLaunch() {
    std::unique_lock<std::mutex> lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(20), [&] { return held_ > 0; }))
        << "no launch reached the gate";
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

  const std::string& name() const override { return inner_->name(); }
  std::string_view backend() const override { return inner_->backend(); }
  const std::map<std::string, std::string, std::less<>>& labels() const override {
    return inner_->labels();
  }
  std::vector<Node> Inventory() const override { return inner_->Inventory(); }
  void Launch(const TaskLaunchSpec& spec) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++held_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    inner_->Launch(spec);
  }
  void Cancel(std::string_view launch_id, Duration grace) override {
    inner_->Cancel(launch_id, grace);
  }
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override {
    return inner_->Recover(known);
  }
  void Forget(std::string_view launch_id) override { inner_->Forget(launch_id); }
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream, int64_t offset,
                                   int64_t limit) const override {
    return inner_->ReadLog(launch_id, stream, offset, limit);
  }

 private:
  Cluster* const inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  int held_ = 0;
  bool open_ = false;
};

// A one-task job of 100 millicores for the simulated nodes, with `metadata` keys, in `queue`.
spec::JobDocument Job(const std::string& metadata = "", const std::string& queue = "default") {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(fmt::format(R"(
apiVersion: tessera/v1
kind: Job
metadata: {{{}}}
spec:
  queue: {}
  duration: 1h
  tolerations: [{{key: tessera.io/simulated, operator: Exists}}]
  tasks: [{{name: w, replicas: 1, resources: {{cpu: 100m}}, command: [sleep, "1"]}}]
)",
                                                                           metadata, queue));
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

class JobBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("job_batch_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    Stop();
    counting_.reset();
    sqlite_.reset();
    fs::remove_all(dir_);
  }

  void Start(store::TxnLimits limits = {}) {
    if (sqlite_ == nullptr) {
      absl::StatusOr<std::unique_ptr<store::SqliteStore>> opened =
          store::SqliteStore::Open({.data_dir = (dir_ / "store").string(),
                                    .sync = store::SqliteStoreOptions::Sync::kNormal,
                                    .limits = limits});
      ASSERT_TRUE(opened.ok()) << opened.status();
      sqlite_ = *std::move(opened);
      counting_ = std::make_unique<CountingStore>(sqlite_.get());
    }
    absl::StatusOr<Profile> profile = BuiltinProfile("default");
    ASSERT_TRUE(profile.ok());
    absl::StatusOr<std::unique_ptr<JobManager>> manager =
        JobManager::Create({.store = counting_.get(),
                            .clock = &clock_,
                            .profile = *profile,
                            .cycle_interval = Duration(20),
                            .max_queued_requests = max_queued_requests_});
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = *std::move(manager);
    sim_ = std::make_unique<agent::SimCluster>(
        agent::SimClusterOptions{.nodes = {testing::NamedGpuNode("n1", 0, 64'000, 256 * kGi)},
                                 .clock = &clock_,
                                 .tick = Duration(5)},
        manager_.get());
    Cluster* cluster = sim_.get();
    if (gated_) {
      gate_ = std::make_unique<GatedCluster>(sim_.get());
      cluster = gate_.get();
    }
    const absl::Status started = manager_->Start({cluster});
    ASSERT_TRUE(started.ok()) << started;
  }

  void Stop() {
    if (gate_) gate_->Open();  // the loop may be held at the gate
    if (manager_) manager_->Stop();
    gate_.reset();
    sim_.reset();
    manager_.reset();
  }

  SubmitBatchResult Batch(std::vector<spec::JobDocument> jobs) {
    absl::StatusOr<SubmitBatchResult> result = manager_->SubmitBatch(kTenant, std::move(jobs));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : SubmitBatchResult{};
  }

  // Waits (real time, generous bound) until the job reaches `phase`.
  void WaitFor(const std::string& id, JobPhase phase) {
    WaitForPhase(*manager_, kTenant, id, phase);
  }

  fs::path dir_;
  TestClock clock_;
  std::unique_ptr<store::SqliteStore> sqlite_;
  std::unique_ptr<CountingStore> counting_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<agent::SimCluster> sim_;
  size_t max_queued_requests_ = 100'000;  // of the next Start
  bool gated_ = false;                    // of the next Start: launches wait at gate_
  std::unique_ptr<GatedCluster> gate_;
};

TEST_F(JobBatchTest, MixedBatchAnswersPerItemInOrderAndCommitsOnce) {
  Start();
  spec::JobDocument negative = Job();
  negative.spec.tasks[0].replicas = 0;
  std::vector<spec::JobDocument> jobs;
  jobs.push_back(Job());
  jobs.push_back(Job("", "no-such-queue"));
  jobs.push_back(Job("name: twin"));
  jobs.push_back(std::move(negative));
  jobs.push_back(Job("name: twin"));
  jobs.push_back(Job());
  SubmitBatchResult results = Batch(std::move(jobs));
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(counting_->creations(), 1);

  ASSERT_TRUE(results[0].ok()) << results[0].status();
  EXPECT_EQ(results[1].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec::ErrorField(results[1].status()), "spec.queue");
  ASSERT_TRUE(results[2].ok()) << results[2].status();
  EXPECT_EQ(results[3].status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec::ErrorField(results[3].status()), "spec.tasks[0].replicas");
  EXPECT_EQ(results[4].status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(results[4].status().message(), HasSubstr("twin"));
  ASSERT_TRUE(results[5].ok()) << results[5].status();
  // Ids in item order; every accepted job is placed and started.
  const std::string first = results[0]->job.document.metadata.id;
  EXPECT_LT(std::stoll(first), std::stoll(results[2]->job.document.metadata.id));
  EXPECT_LT(std::stoll(results[2]->job.document.metadata.id),
            std::stoll(results[5]->job.document.metadata.id));
  for (size_t i : {0u, 2u, 5u}) {
    EXPECT_TRUE(results[i]->created);
    WaitFor(results[i]->job.document.metadata.id, JobPhase::kRunning);
  }
}

TEST_F(JobBatchTest, OneTransactionForAllAcceptedJobs) {
  Start();
  std::vector<spec::JobDocument> jobs;
  for (int i = 0; i < 50; ++i) jobs.push_back(Job(fmt::format("requestId: r{}", i)));
  SubmitBatchResult results = Batch(std::move(jobs));
  for (const auto& result : results) ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(counting_->creations(), 1);
  ASSERT_TRUE(manager_->Submit(kTenant, Job()).ok());
  EXPECT_EQ(counting_->creations(), 2);
}

TEST_F(JobBatchTest, RequestIdsRepeatWithinAndAcrossBatchesAndAReplayReturnsTheSameJobs) {
  Start();
  auto batch = [] {
    std::vector<spec::JobDocument> jobs;
    jobs.push_back(Job("requestId: r1"));
    jobs.push_back(Job("requestId: r2"));
    jobs.push_back(Job("requestId: r1"));  // a repeat inside the batch
    return jobs;
  };
  SubmitBatchResult first = Batch(batch());
  ASSERT_EQ(first.size(), 3u);
  for (const auto& result : first) ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(first[0]->created);
  EXPECT_TRUE(first[1]->created);
  EXPECT_FALSE(first[2]->created);
  EXPECT_EQ(first[2]->job.document.metadata.id, first[0]->job.document.metadata.id);
  EXPECT_NE(first[1]->job.document.metadata.id, first[0]->job.document.metadata.id);

  SubmitBatchResult replay = Batch(batch());
  ASSERT_EQ(replay.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(replay[i].ok()) << replay[i].status();
    EXPECT_FALSE(replay[i]->created);
    EXPECT_EQ(replay[i]->job.document.metadata.id, first[i]->job.document.metadata.id);
  }
  // Across batches and single submissions alike.
  absl::StatusOr<SubmitResult> single = manager_->Submit(kTenant, Job("requestId: r2"));
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->job.document.metadata.id, first[1]->job.document.metadata.id);
  EXPECT_EQ(manager_->List(kTenant, {})->jobs.size(), 2u);
}

TEST_F(JobBatchTest, ABatchOutsideItsBoundsIsRefusedWhole) {
  Start();
  absl::Status empty = manager_->SubmitBatch(kTenant, {}).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument) << empty;
  EXPECT_EQ(spec::ErrorField(empty), "items");
  std::vector<spec::JobDocument> jobs(kMaxSubmitBatchItems + 1, Job());
  absl::Status large = manager_->SubmitBatch(kTenant, std::move(jobs)).status();
  EXPECT_EQ(large.code(), absl::StatusCode::kInvalidArgument) << large;
  EXPECT_EQ(spec::ErrorField(large), "items");
  EXPECT_THAT(large.message(), HasSubstr("1001"));
  EXPECT_TRUE(manager_->List(kTenant, {})->jobs.empty());
}

TEST_F(JobBatchTest, ABatchLargerThanOneTransactionIsSplitAndEveryJobIsDurable) {
  // 5 entries per job (a compare, the spec, the record, the event, the request id): 3 jobs
  // per transaction.
  Start({.max_entries = 15});
  const int64_t before = counting_->creations();
  std::vector<spec::JobDocument> jobs;
  for (int i = 0; i < 10; ++i) jobs.push_back(Job(fmt::format("requestId: r{}", i)));
  SubmitBatchResult results = Batch(std::move(jobs));
  ASSERT_EQ(results.size(), 10u);
  std::vector<std::string> ids;
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    ids.push_back(result->job.document.metadata.id);
  }
  EXPECT_EQ(counting_->creations() - before, 4);  // 3 + 3 + 3 + 1
  Stop();
  Start();
  for (const std::string& id : ids) EXPECT_TRUE(manager_->Get(kTenant, id).ok()) << id;
  std::vector<spec::JobDocument> again;
  again.push_back(Job("requestId: r7"));
  SubmitBatchResult replay = Batch(std::move(again));
  ASSERT_TRUE(replay[0].ok());
  EXPECT_EQ(replay[0]->job.document.metadata.id, ids[7]);
  EXPECT_FALSE(replay[0]->created);
}

TEST_F(JobBatchTest, SubmissionsBeyondTheLoopsBacklogAreRefusedBeforeTheyAreStored) {
  max_queued_requests_ = 3;
  gated_ = true;
  Start();
  const std::string first = Batch({Job()})[0]->job.document.metadata.id;
  gate_->WaitForHeldLaunch();  // the loop is held launching `first`: nothing leaves its queue

  SubmitBatchResult two = Batch({Job(), Job()});  // two wait
  ASSERT_TRUE(two[0].ok() && two[1].ok());
  absl::StatusOr<SubmitBatchResult> too_many = manager_->SubmitBatch(kTenant, {Job(), Job()});
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kResourceExhausted) << too_many.status();
  EXPECT_THAT(too_many.status().message(), HasSubstr("2 requests wait for it (at most 3)"));
  absl::StatusOr<SubmitResult> third = manager_->Submit(kTenant, Job());  // fills the queue
  ASSERT_TRUE(third.ok()) << third.status();
  absl::StatusOr<SubmitResult> refused = manager_->Submit(kTenant, Job());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  // An explain still answers, without an estimate, and a refused job was never stored.
  absl::StatusOr<JobExplanation> explained =
      manager_->Explain(kTenant, third->job.document.metadata.id);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_FALSE(explained->estimate.has_value());
  absl::StatusOr<ListJobsResult> listed = manager_->List(kTenant, {});
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->jobs.size(), 4u);

  gate_->Open();  // the loop drains its queue: submissions are taken again
  WaitFor(third->job.document.metadata.id, JobPhase::kRunning);
  absl::StatusOr<SubmitResult> later = manager_->Submit(kTenant, Job());
  ASSERT_TRUE(later.ok()) << later.status();
  WaitFor(later->job.document.metadata.id, JobPhase::kRunning);
  WaitFor(first, JobPhase::kRunning);
}

}  // namespace
}  // namespace tessera::server

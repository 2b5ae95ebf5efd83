#include "agent/slurm/slurm_cluster.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "agent/common/testing/callback_probe.h"
#include "agent/local/system_clock.h"
#include "agent/slurm/testing/fake_slurmrestd.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tessera/common/simulated_clock.h"

namespace tessera::agent {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr auto kDeadline = std::chrono::seconds(30);

json Node(std::string name, std::string state = "idle", json flags = json::array()) {
  return {{"name", name},          {"cpus", 8},      {"real_memory", 65536}, {"gres", "gpu:h100:4"},
          {"partitions", {"gpu"}}, {"state", state}, {"state_flags", flags}};
}

// Records the observer's news and lets the test wait for it.
class Recorder final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override {
    std::lock_guard<std::mutex> lock(mu_);
    started_[std::string(launch_id)] = time;
    ++start_count_;
    changed_.notify_all();
  }
  void OnTaskEnded(const TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    ends_[end.launch_id] = end;
    ++end_count_;
    changed_.notify_all();
  }
  std::optional<TimePoint> WaitStarted(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, kDeadline, [&] { return started_.contains(id); });
    if (!started_.contains(id)) return std::nullopt;
    return started_[id];
  }
  std::optional<TaskEnd> WaitEnded(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, kDeadline, [&] { return ends_.contains(id); });
    if (!ends_.contains(id)) return std::nullopt;
    return ends_[id];
  }
  bool HasStarted(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return started_.contains(id);
  }
  int EndCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return end_count_;
  }
  int StartCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return start_count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, TimePoint> started_;
  std::map<std::string, TaskEnd> ends_;
  int end_count_ = 0;
  int start_count_ = 0;
};

// Polls `done` until it holds or the deadline passes.
bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class SlurmClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    slurm_->SetNodes(json::array({Node("node1"), Node("node2")}));
    log_dir_ =
        std::filesystem::temp_directory_path() / ("slurm-cluster-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(log_dir_);
  }
  void TearDown() override { std::filesystem::remove_all(log_dir_); }

  SlurmClusterOptions Options() {
    SlurmClusterOptions options;
    options.name = "hpc";
    options.labels = {{"site", "a"}};
    options.partition = "";
    options.poll_interval = Duration(10);
    options.active_poll_interval = Duration(10);
    options.log_dir = log_dir_.string();
    options.transport = slurm_;
    options.log = [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.emplace_back(line);
    };
    return options;
  }
  // Options on `clock` (Slurm's too) and its timers: polls every 1 s, every 200 ms while
  // Tessera's jobs are in Slurm.
  SlurmClusterOptions SimulatedOptions(SimulatedClock& clock) {
    slurm_->SetClock(&clock);
    SlurmClusterOptions options = Options();
    options.clock = &clock;
    options.timers = &clock;
    options.poll_interval = Duration(1000);
    options.active_poll_interval = Duration(200);
    return options;
  }
  // Where a cluster made by MakeFollowingTheLog finds Slurm's job-completion log.
  std::string JobCompLog() const { return (log_dir_ / "jobcomp.txt").string(); }
  // A cluster on `clock` (SimulatedOptions) that follows JobCompLog() every 5 ms.
  std::unique_ptr<SlurmCluster> MakeFollowingTheLog(SimulatedClock& clock) {
    SlurmClusterOptions options = SimulatedOptions(clock);
    options.jobcomp_file = JobCompLog();
    options.jobcomp_interval = Duration(5);
    absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
        SlurmCluster::Create(std::move(options), &recorder_);
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    return cluster.ok() ? *std::move(cluster) : nullptr;
  }
  std::unique_ptr<SlurmCluster> Make() {
    absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
        SlurmCluster::Create(Options(), &recorder_);
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    return cluster.ok() ? *std::move(cluster) : nullptr;
  }
  TaskLaunchSpec Spec(std::string id, std::string node = "node2") {
    TaskLaunchSpec spec;
    spec.launch_id = std::move(id);
    spec.job_id = "j1";
    spec.placement.node = std::move(node);
    spec.placement.gpus = {0, 1};
    spec.command = {"/bin/sh", "-c", "echo hi"};
    return spec;
  }
  int64_t WaitSubmitted(SlurmCluster& cluster, const std::string& id) {
    EXPECT_TRUE(WaitUntil([&] { return cluster.JobIdOf(id).has_value(); })) << id;
    return cluster.JobIdOf(id).value_or(0);
  }
  std::vector<std::string> Logged() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  std::shared_ptr<testing::FakeSlurm> slurm_ = std::make_shared<testing::FakeSlurm>();
  Recorder recorder_;
  std::filesystem::path log_dir_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(SlurmClusterTest, InventoryFollowsSlurm) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->backend(), "slurm");
  EXPECT_EQ(cluster->labels().at("tessera.io/cluster"), "hpc");
  std::vector<tessera::Node> nodes = cluster->Inventory();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].cluster, "hpc");
  EXPECT_EQ(nodes[0].labels.at("tessera.io/cluster"), "hpc");
  EXPECT_EQ(nodes[0].labels.at("site"), "a");
  EXPECT_EQ(nodes[0].gpus.size(), 4u);

  json broken = Node("node3");
  broken["cpus"] = "lots";
  slurm_->SetNodes(json::array({Node("node1", "down"), Node("node2", "idle", {"DRAIN"}), broken}));
  ASSERT_TRUE(WaitUntil([&] {
    nodes = cluster->Inventory();
    return nodes.size() == 2 && nodes[0].condition == NodeCondition::kDown;
  }));
  EXPECT_TRUE(nodes[1].unschedulable);
  EXPECT_TRUE(WaitUntil([&] {
    for (const std::string& line : Logged()) {
      if (line == "slurm node node3: cpus: must be an integer, got \"lots\"") return true;
    }
    return false;
  }));

  // Slurm unreachable: the last inventory stays.
  slurm_->SetDown(true);
  EXPECT_TRUE(WaitUntil([&] {
    for (const std::string& line : Logged()) {
      if (absl::StrContains(line, "reading the node list")) return true;
    }
    return false;
  }));
  EXPECT_EQ(cluster->Inventory().size(), 2u);
}

// A node as Slurm lists it while its jobs hold `cpus` CPUs, `mib` MiB and `gpus` GPUs.
json Busy(std::string name, int cpus, int mib, int gpus) {
  json node = Node(std::move(name), "mixed");
  node["alloc_cpus"] = cpus;
  node["alloc_memory"] = mib;
  node["gres_used"] =
      gpus == 0 ? "gpu:h100:0(IDX:N/A)" : fmt::format("gpu:h100:{}(IDX:0-{})", gpus, gpus - 1);
  return node;
}

std::optional<tessera::Node> Find(const SlurmCluster& cluster, const std::string& name) {
  for (tessera::Node& node : cluster.Inventory()) {
    if (node.name == name) return std::move(node);
  }
  return std::nullopt;
}

int UnhealthyGpus(const tessera::Node& node) {
  int count = 0;
  for (const GpuDevice& d : node.gpus) count += d.healthy ? 0 : 1;
  return count;
}

TEST_F(SlurmClusterTest, ForeignJobsAreTakenOutOfAllocatable) {
  slurm_->SetNodes(json::array({Node("node1"), Busy("node2", 6, 4096, 2)}));
  std::unique_ptr<SlurmCluster> cluster = Make();
  ASSERT_NE(cluster, nullptr);
  std::optional<tessera::Node> node2 = Find(*cluster, "node2");
  ASSERT_TRUE(node2.has_value());
  EXPECT_EQ(node2->capacity.cpu, 8000);
  EXPECT_EQ(node2->allocatable.cpu, 2000);
  EXPECT_EQ(node2->allocatable.memory, (65536 - 4096) * (int64_t{1} << 20));
  EXPECT_EQ(node2->allocatable.gpu, 2000);
  EXPECT_EQ(UnhealthyGpus(*node2), 2);
  EXPECT_FALSE(node2->gpus[2].healthy || node2->gpus[3].healthy) << "from the highest index down";
  EXPECT_EQ(Find(*cluster, "node1")->allocatable, Find(*cluster, "node1")->capacity);

  // The foreign job ends: the node is whole again.
  slurm_->SetNodes(json::array({Node("node1"), Busy("node2", 0, 0, 0)}));
  ASSERT_TRUE(WaitUntil([&] {
    std::optional<tessera::Node> node = Find(*cluster, "node2");
    return node.has_value() && node->allocatable == node->capacity && UnhealthyGpus(*node) == 0;
  }));
}

TEST_F(SlurmClusterTest, TesserasRunningJobsAreNotTakenOutTwice) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  ASSERT_NE(cluster, nullptr);
  TaskLaunchSpec spec = Spec("j1-w-0-a1");  // node2, devices 0 and 1
  spec.cpu = 2000;
  spec.memory = int64_t{2048} << 20;
  cluster->Launch(spec);
  const int64_t job = WaitSubmitted(*cluster, "j1-w-0-a1");
  // Slurm's 5 CPUs, 3 GiB and 3 GPUs hold Tessera's 2 CPUs, 2 GiB and 2 GPUs, whether or not
  // the agent has seen the job start yet.
  slurm_->SetNodes(json::array({Node("node1"), Busy("node2", 5, 3072, 3)}));
  ASSERT_TRUE(WaitUntil([&] { return Find(*cluster, "node2")->allocatable.cpu == 5000; }));
  EXPECT_EQ(recorder_.StartCount(), 0);
  slurm_->SetJob(job, "RUNNING");
  ASSERT_TRUE(recorder_.WaitStarted("j1-w-0-a1").has_value());
  std::optional<tessera::Node> node2 = Find(*cluster, "node2");
  EXPECT_EQ(node2->allocatable.cpu, 5000);
  EXPECT_EQ(node2->allocatable.memory, (65536 - 1024) * (int64_t{1} << 20));
  EXPECT_EQ(node2->allocatable.gpu, 3000);
  ASSERT_EQ(UnhealthyGpus(*node2), 1);
  EXPECT_FALSE(node2->gpus[3].healthy) << "a device Tessera's task does not hold";

  // Once it has ended and Slurm's node list no longer holds it, the foreign job alone is taken
  // out.
  slurm_->SetJob(job, "COMPLETED");
  ASSERT_TRUE(recorder_.WaitEnded("j1-w-0-a1").has_value());
  slurm_->SetNodes(json::array({Node("node1"), Busy("node2", 3, 1024, 1)}));
  ASSERT_TRUE(WaitUntil([&] {
    std::optional<tessera::Node> node = Find(*cluster, "node2");
    return node->allocatable.cpu == 5000 && node->allocatable.gpu == 3000;
  }));
  EXPECT_EQ(Find(*cluster, "node2")->allocatable.memory, (65536 - 1024) * (int64_t{1} << 20));
}

// The destruction contract (tessera/cluster/cluster.h): the destructor stops and joins the poll
// thread before it returns, so nothing calls back afterwards. Each round destroys a cluster polling
// every millisecond with tasks submitted, on odd rounds while slurmrestd is unreachable (the poller
// is logging).
TEST_F(SlurmClusterTest, DestroyingABusyClusterJoinsItsPollerBeforeReturning) {
  std::vector<std::shared_ptr<testing::CallbackProbe>> probes;
  for (int round = 0; round < 20; ++round) {
    auto probe = std::make_shared<testing::CallbackProbe>();
    probes.push_back(probe);
    auto observer = std::make_unique<testing::ProbeObserver>(probe);
    SlurmClusterOptions options = Options();
    options.poll_interval = Duration(1);
    options.log = testing::Log(probe);
    absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
        SlurmCluster::Create(std::move(options), observer.get());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const std::string job = "r" + std::to_string(round);
    for (int task = 0; task < 3; ++task) {
      (*cluster)->Launch(Spec(job + "-w-" + std::to_string(task) + "-a1"));
    }
    if (round == 0) {  // one round at least has called back before it is destroyed
      slurm_->SetJob(WaitSubmitted(**cluster, "r0-w-0-a1"), "RUNNING");
      ASSERT_TRUE(WaitUntil([&] { return probe->calls() > 0; }));
    }
    slurm_->SetDown(round % 2 == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4));
    cluster->reset();
    probe->ClusterGone();
    observer.reset();  // a late observer call is a use after free under ASan
    slurm_->SetDown(false);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time for a stray thread to call
  for (size_t round = 0; round < probes.size(); ++round) {
    EXPECT_EQ(probes[round]->late_calls(), 0) << "round " << round;
  }
  EXPECT_GT(probes[0]->calls(), 0);
}

TEST_F(SlurmClusterTest, CreateFailsWhenSlurmCannotBeRead) {
  slurm_->SetDown(true);
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
      SlurmCluster::Create(Options(), &recorder_);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(cluster.status().message(), HasSubstr("connection refused"));
}

TEST_F(SlurmClusterTest, CreateFailsForAPartitionWithoutNodes) {
  SlurmClusterOptions options = Options();
  options.partition = "nosuch";
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Create(options, &recorder_);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cluster.status().message(), HasSubstr("--slurm-partition"));
  EXPECT_THAT(cluster.status().message(), HasSubstr("nosuch"));
}

TEST_F(SlurmClusterTest, LaunchRunsToSuccess) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("j1-w-0-a1"));
  const int64_t job = WaitSubmitted(*cluster, "j1-w-0-a1");
  const json submitted = slurm_->Submissions().at(0)["job"];
  EXPECT_EQ(submitted["nodelist"], "node2");
  EXPECT_EQ(submitted["gres"], "gpu:2");
  EXPECT_EQ(submitted["environment"]["TESSERA_TASK_ID"], "j1-w-0-a1");
  EXPECT_FALSE(recorder_.HasStarted("j1-w-0-a1"));

  slurm_->SetJob(job, "RUNNING");
  EXPECT_EQ(recorder_.WaitStarted("j1-w-0-a1"), TimePoint(Duration(1'000'000)));
  slurm_->SetJob(job, "COMPLETED");
  std::optional<TaskEnd> end = recorder_.WaitEnded("j1-w-0-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded);
  EXPECT_EQ(end->exit_code, 0);
  EXPECT_EQ(end->time, TimePoint(Duration(1'010'000)));
  cluster->Forget("j1-w-0-a1");
  EXPECT_FALSE(cluster->JobIdOf("j1-w-0-a1").has_value());
}

TEST_F(SlurmClusterTest, FastJobReportsStartThenEnd) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("fast"));
  const int64_t job = WaitSubmitted(*cluster, "fast");
  slurm_->SetJob(job, "FAILED", 3 << 8);
  std::optional<TaskEnd> end = recorder_.WaitEnded("fast");
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(recorder_.HasStarted("fast"));
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "Error");
  EXPECT_EQ(end->exit_code, 3);
}

TEST_F(SlurmClusterTest, RefusedSubmissionIsStartFailed) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  slurm_->Refuse("Requested node configuration is not available");
  cluster->Launch(Spec("refused"));
  std::optional<TaskEnd> end = recorder_.WaitEnded("refused");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_EQ(end->message, "Slurm refused the job: Requested node configuration is not available");
}

// A submission lost on its way (no reply, and no job in Slurm's list) is sent once more; a
// second loss fails the task.
TEST_F(SlurmClusterTest, ASubmissionLostOnItsWayIsSentOnceMore) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  slurm_->LoseSubmissions(1);
  cluster->Launch(Spec("lost-once"));
  const int64_t job = WaitSubmitted(*cluster, "lost-once");
  EXPECT_EQ(slurm_->Submissions().size(), 1u);
  slurm_->SetJob(job, "COMPLETED");
  std::optional<TaskEnd> end = recorder_.WaitEnded("lost-once");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded) << end->reason << ": " << end->message;

  slurm_->LoseSubmissions(2);
  cluster->Launch(Spec("lost-twice"));
  end = recorder_.WaitEnded("lost-twice");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_EQ(slurm_->Submissions().size(), 1u);
}

TEST_F(SlurmClusterTest, UnrunnableSpecIsStartFailedAtOnce) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  TaskLaunchSpec spec = Spec("bad");
  spec.command.clear();
  cluster->Launch(spec);
  std::optional<TaskEnd> end = recorder_.WaitEnded("bad");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_THAT(end->message, HasSubstr("command: empty"));
  EXPECT_THAT(slurm_->Submissions(), IsEmpty());
}

TEST_F(SlurmClusterTest, AStartedJobThatSlurmRequeuesIsLostAndCancelled) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("r1"));
  const int64_t job = WaitSubmitted(*cluster, "r1");
  slurm_->SetJob(job, "RUNNING");
  ASSERT_TRUE(recorder_.WaitStarted("r1").has_value());
  slurm_->SetJob(job, "PENDING");  // its node failed: Slurm queued it again
  std::optional<TaskEnd> end = recorder_.WaitEnded("r1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "Lost");
  EXPECT_THAT(end->message, HasSubstr("Slurm requeued job"));
  ASSERT_TRUE(WaitUntil([&] { return !slurm_->Signals().empty(); }));
  EXPECT_THAT(slurm_->Signals(), ElementsAre(fmt::format("{}:cancel", job)));
}

TEST_F(SlurmClusterTest, CancelSignalsThenKillsAfterTheGrace) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("c1"));
  const int64_t job = WaitSubmitted(*cluster, "c1");
  slurm_->SetJob(job, "RUNNING");
  ASSERT_TRUE(recorder_.WaitStarted("c1").has_value());
  cluster->Cancel("c1", Duration(50));
  std::optional<TaskEnd> end = recorder_.WaitEnded("c1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled);
  EXPECT_THAT(slurm_->Signals(),
              ElementsAre(fmt::format("{}:TERM", job), fmt::format("{}:cancel", job)));
}

TEST_F(SlurmClusterTest, CancelAfterTermEndsCancelledWhateverTheExit) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("c2"));
  const int64_t job = WaitSubmitted(*cluster, "c2");
  slurm_->SetJob(job, "RUNNING");
  cluster->Cancel("c2", std::chrono::hours(1));
  ASSERT_TRUE(WaitUntil([&] { return !slurm_->Signals().empty(); }));
  slurm_->SetJob(job, "FAILED", 7 << 8);  // the program's TERM handler exits 7
  std::optional<TaskEnd> end = recorder_.WaitEnded("c2");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled);
  EXPECT_THAT(slurm_->Signals(), ElementsAre(fmt::format("{}:TERM", job)));
}

TEST_F(SlurmClusterTest, CancelWithoutGraceIsSlurmsCancel) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("c3"));
  const int64_t job = WaitSubmitted(*cluster, "c3");
  cluster->Cancel("c3", Duration(0));
  std::optional<TaskEnd> end = recorder_.WaitEnded("c3");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled);
  EXPECT_FALSE(recorder_.HasStarted("c3"));  // cancelled while pending
  EXPECT_THAT(slurm_->Signals(), ElementsAre(fmt::format("{}:cancel", job)));
  cluster->Cancel("unknown", Duration(0));
}

TEST_F(SlurmClusterTest, JobSlurmForgotIsLost) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("gone"));
  const int64_t job = WaitSubmitted(*cluster, "gone");
  slurm_->RemoveJob(job);
  std::optional<TaskEnd> end = recorder_.WaitEnded("gone");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "Lost");
  EXPECT_THAT(end->message, HasSubstr(fmt::format("Slurm no longer knows job {}", job)));
}

// The pace of the job polls follows Tessera's work in Slurm, on the injected clock and timers: a
// job just submitted is polled for an active interval later, every active interval while it is
// in Slurm, and once it ended the polls fall back to the idle interval. A poll in which nothing
// changed is answered 304 and reads no job list; each state change is reported once.
TEST_F(SlurmClusterTest, PollsAtTheActiveIntervalWhileAJobIsInSlurmAndReadsOnlyChanges) {
  SimulatedClock clock(TimePoint(std::chrono::seconds(1'000'000)));
  SlurmClusterOptions options = SimulatedOptions(clock);
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster =
      SlurmCluster::Create(std::move(options), &recorder_);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const TimePoint start = clock.Now();
  // The poll thread has re-armed its poll `wait` from now.
  auto polled = [&](Duration wait) {
    return WaitUntil([&] { return clock.NextDue() == clock.Now() + wait; });
  };
  ASSERT_TRUE(polled(Duration(1000)));  // nothing of Tessera's in Slurm: idle

  (*cluster)->Launch(Spec("p1"));
  const int64_t job = WaitSubmitted(**cluster, "p1");
  ASSERT_TRUE(polled(Duration(200)));  // the submission brought the poll forward
  slurm_->SetJob(job, "RUNNING");
  clock.Advance(Duration(200));
  ASSERT_TRUE(polled(Duration(200)));
  ASSERT_TRUE(recorder_.WaitStarted("p1").has_value());
  // Polls within the second of the change read the list again (Slurm's test is per second);
  // from the next second on, nothing changed: 304, no list.
  while (clock.Now() < start + Duration(1200)) {
    clock.Advance(Duration(200));
    ASSERT_TRUE(polled(Duration(200)));
  }
  const int lists = slurm_->JobLists();
  const int unchanged = slurm_->UnchangedReplies();
  for (int i = 0; i < 3; ++i) {
    clock.Advance(Duration(200));
    ASSERT_TRUE(polled(Duration(200)));
  }
  EXPECT_EQ(slurm_->JobLists(), lists);
  EXPECT_EQ(slurm_->UnchangedReplies(), unchanged + 3);

  slurm_->SetJob(job, "COMPLETED");
  clock.Advance(Duration(200));
  ASSERT_TRUE(polled(Duration(1000)));  // nothing outstanding any more: idle
  std::optional<TaskEnd> end = recorder_.WaitEnded("p1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded);
  EXPECT_EQ(recorder_.StartCount(), 1);
  EXPECT_EQ(recorder_.EndCount(), 1);
  EXPECT_EQ(slurm_->JobLists(), lists + 1);
  cluster->reset();
}

// Beside many jobs Slurm keeps (others', finished), reading each of Tessera's few jobs is
// cheaper than the list: after the first whole list, the job is followed by GET /job/{id}.
TEST_F(SlurmClusterTest, BesideManyOtherJobsEachOfTesserasJobsIsReadAlone) {
  for (int i = 0; i < 100; ++i) slurm_->AddJob("theirs", "", "COMPLETED");
  std::unique_ptr<SlurmCluster> cluster = Make();
  cluster->Launch(Spec("alone"));
  const int64_t job = WaitSubmitted(*cluster, "alone");
  ASSERT_TRUE(WaitUntil([&] { return slurm_->JobLists() > 0; }));
  slurm_->SetJob(job, "RUNNING");
  ASSERT_TRUE(recorder_.WaitStarted("alone").has_value());
  const int lists = slurm_->JobLists();
  slurm_->SetJob(job, "COMPLETED");
  std::optional<TaskEnd> end = recorder_.WaitEnded("alone");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded);
  EXPECT_EQ(slurm_->JobLists(), lists);
  EXPECT_GT(slurm_->JobReads(), 0);
  EXPECT_EQ(recorder_.StartCount(), 1);
  EXPECT_EQ(recorder_.EndCount(), 1);
}

// Following Slurm's job-completion log, a job's end is read the moment Slurm logs it: one GET
// /job/{id}, no poll (the simulated clock never reaches one) and no read of the list.
TEST_F(SlurmClusterTest, AnEndInSlurmsJobCompletionLogIsReadAtOnceWithoutAPoll) {
  SimulatedClock clock(TimePoint(std::chrono::seconds(1'000'000)));
  std::unique_ptr<SlurmCluster> cluster = MakeFollowingTheLog(clock);
  ASSERT_NE(cluster, nullptr);
  const std::string jobcomp = JobCompLog();
  cluster->Launch(Spec("n1"));
  const int64_t job = WaitSubmitted(*cluster, "n1");
  // With the log, a submission is followed at the idle pace: the ends come from the log.
  ASSERT_TRUE(WaitUntil([&] { return clock.NextDue() == clock.Now() + Duration(1000); }));
  const int lists = slurm_->JobLists();
  auto logged = [&](int64_t id) {
    std::ofstream(jobcomp, std::ios::app) << "JobId=" << id << " JobState=COMPLETED\n";
  };
  logged(job + 1000);  // not Tessera's: not even read
  slurm_->SetJob(job, "COMPLETING");
  logged(job);
  ASSERT_TRUE(WaitUntil([&] { return slurm_->JobReads() == 1; }));
  ASSERT_TRUE(WaitUntil([&] { return clock.NextDue() == clock.Now() + kNoticeRetry; }));
  slurm_->SetJob(job, "COMPLETED");
  clock.Advance(kNoticeRetry);  // still ending when read: read again shortly
  std::optional<TaskEnd> end = recorder_.WaitEnded("n1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded);
  EXPECT_EQ(recorder_.StartCount(), 1);
  EXPECT_EQ(slurm_->JobReads(), 2);
  EXPECT_EQ(slurm_->JobLists(), lists);
  logged(job);  // logged again (a requeued job's second end): seen ending, no read
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  cluster.reset();
  EXPECT_EQ(slurm_->JobReads(), 2);
  EXPECT_EQ(recorder_.EndCount(), 1);
}

// A line that tells the end whole (COMPLETED, its exit code and start) needs no read at all.
TEST_F(SlurmClusterTest, AnEndTheJobCompletionLogTellsWholeIsReportedAsLogged) {
  SimulatedClock clock(TimePoint(std::chrono::seconds(1'000'000)));
  std::unique_ptr<SlurmCluster> cluster = MakeFollowingTheLog(clock);
  ASSERT_NE(cluster, nullptr);
  const std::string jobcomp = JobCompLog();
  cluster->Launch(Spec("w1"));
  const int64_t job = WaitSubmitted(*cluster, "w1");
  std::ofstream(jobcomp, std::ios::app)
      << "JobId=" << job
      << " UserId=root(0) Name=w1 JobState=COMPLETED StartTime=2026-12-07T19:22:13 "
         "EndTime=2026-12-07T19:22:14 NodeList=node2 DerivedExitCode=0:0 ExitCode=3:0\n";
  std::optional<TaskEnd> end = recorder_.WaitEnded("w1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "Error");
  EXPECT_EQ(end->exit_code, 3);
  EXPECT_TRUE(recorder_.WaitStarted("w1").has_value());
  cluster.reset();
  EXPECT_EQ(slurm_->JobReads(), 0);
}

KnownLaunch Known(std::string id) {
  KnownLaunch known;
  known.spec.launch_id = std::move(id);
  return known;
}

TEST_F(SlurmClusterTest, RecoverReconcilesWithSlurm) {
  const int64_t running = slurm_->AddJob("r-1", "tessera:r-1", "RUNNING");
  const int64_t done = slurm_->AddJob("d-1", "tessera:d-1", "COMPLETED");
  const int64_t orphan = slurm_->AddJob("o-1", "tessera:o-1", "RUNNING");
  const int64_t users = slurm_->AddJob("o-1", "", "RUNNING");  // a user's job, same name
  std::unique_ptr<SlurmCluster> cluster = Make();
  std::vector<std::string> kept = cluster->Recover({Known("r-1"), Known("d-1"), Known("never-1")});
  EXPECT_THAT(kept, ElementsAre("r-1"));
  EXPECT_EQ(cluster->JobIdOf("r-1"), running);
  EXPECT_EQ(recorder_.WaitEnded("d-1")->phase, TaskPhase::kSucceeded);
  EXPECT_EQ(recorder_.WaitEnded("never-1")->reason, "LostOnRestart");
  EXPECT_THAT(slurm_->Signals(), ElementsAre(fmt::format("{}:cancel", orphan)));
  EXPECT_EQ(slurm_->JobState(users), "RUNNING");
  EXPECT_EQ(slurm_->JobState(done), "COMPLETED");
  EXPECT_TRUE(recorder_.WaitStarted("r-1").has_value());  // not started as far as Tessera knew

  // A reconnect: the control plane now knows a launch made since, and no longer r-1.
  cluster->Launch(Spec("n-1"));
  const int64_t fresh = WaitSubmitted(*cluster, "n-1");
  kept = cluster->Recover({Known("n-1")});
  EXPECT_THAT(kept, ElementsAre("n-1"));
  EXPECT_EQ(cluster->JobIdOf("n-1"), fresh);
  EXPECT_THAT(slurm_->Signals(),
              ElementsAre(fmt::format("{}:cancel", orphan), fmt::format("{}:cancel", running)));
}

TEST_F(SlurmClusterTest, RecoverWhileSlurmIsDownKeepsTheKnownUntilItAnswers) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  const int64_t running = slurm_->AddJob("r-2", "tessera:r-2", "RUNNING");
  const int64_t orphan = slurm_->AddJob("o-2", "tessera:o-2", "PENDING");
  slurm_->SetDown(true);
  std::vector<std::string> kept = cluster->Recover({Known("r-2"), Known("lost-2")});
  EXPECT_THAT(kept, UnorderedElementsAre("r-2", "lost-2"));
  slurm_->SetDown(false);
  EXPECT_EQ(recorder_.WaitEnded("lost-2")->reason, "LostOnRestart");
  ASSERT_TRUE(WaitUntil([&] { return cluster->JobIdOf("r-2") == running; }));
  ASSERT_TRUE(WaitUntil([&] { return !slurm_->Signals().empty(); }));
  EXPECT_THAT(slurm_->Signals(), ElementsAre(fmt::format("{}:cancel", orphan)));
}

TEST_F(SlurmClusterTest, ReadLog) {
  std::unique_ptr<SlurmCluster> cluster = Make();
  EXPECT_EQ(cluster->ReadLog("nobody", LogStream::kStdout, 0, 100).status().code(),
            absl::StatusCode::kNotFound);
  cluster->Launch(Spec("l-1"));
  const int64_t job = WaitSubmitted(*cluster, "l-1");
  EXPECT_EQ(cluster->ReadLog("l-1", LogStream::kStdout, 0, 100).status().code(),
            absl::StatusCode::kNotFound);  // not started: no log yet
  slurm_->SetJob(job, "RUNNING");
  ASSERT_TRUE(recorder_.WaitStarted("l-1").has_value());
  absl::StatusOr<LogChunk> chunk = cluster->ReadLog("l-1", LogStream::kStdout, 0, 100);
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(chunk.status().message(), HasSubstr("not readable on the agent's host"));

  std::ofstream(log_dir_ / "tessera-l-1.stdout.log") << "hello\nworld\n";
  chunk = cluster->ReadLog("l-1", LogStream::kStdout, 6, 100);
  ASSERT_TRUE(chunk.ok()) << chunk.status();
  EXPECT_EQ(chunk->data, "world\n");
  EXPECT_EQ(chunk->next_offset, 12);
  EXPECT_FALSE(chunk->end);
  slurm_->SetJob(job, "COMPLETED");
  ASSERT_TRUE(recorder_.WaitEnded("l-1").has_value());
  chunk = cluster->ReadLog("l-1", LogStream::kStdout, 0, 5);
  EXPECT_EQ(chunk->data, "hello");
  EXPECT_FALSE(chunk->end);
  chunk = cluster->ReadLog("l-1", LogStream::kStdout, 5, 100);
  EXPECT_TRUE(chunk->end);
  cluster->Forget("l-1");
  chunk = cluster->ReadLog("l-1", LogStream::kStdout, 0, 100);
  ASSERT_TRUE(chunk.ok());
  EXPECT_TRUE(chunk->end);
}

TEST(SlurmClusterOptionsTest, FlagsOverrideTheEnvironment) {
  const std::map<std::string, std::string, std::less<>> env = {
      {"SLURM_REST_URL", "http://env:6820"},
      {"SLURM_JWT", "env-token"},
      {"SLURM_REST_USER", "envuser"},
      {"SLURM_REST_API_VERSION", "v0.0.41"}};
  const EnvLookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  SlurmClusterOptions flags;
  absl::StatusOr<SlurmClusterOptions> merged = SlurmClusterOptions::FromEnvironment(flags, lookup);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->url, "http://env:6820");
  EXPECT_EQ(merged->jwt, "env-token");
  EXPECT_EQ(merged->user, "envuser");
  EXPECT_EQ(merged->api_version, "v0.0.41");

  flags.url = "http://flag:1";
  flags.jwt = "flag-token";
  flags.user = "flaguser";
  flags.api_version = "v0.0.38";
  merged = SlurmClusterOptions::FromEnvironment(flags, lookup);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->url, "http://flag:1");
  EXPECT_EQ(merged->jwt, "flag-token");
  EXPECT_EQ(merged->user, "flaguser");
  EXPECT_EQ(merged->api_version, "v0.0.38");
}

TEST(SlurmClusterOptionsTest, ATokenFileWinsAndFlagsWinOverTheEnvironment) {
  std::map<std::string, std::string, std::less<>> env = {{"SLURM_REST_URL", "http://env:6820"},
                                                         {"SLURM_JWT", "env-token"}};
  const EnvLookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  SlurmClusterOptions flags;
  flags.jwt_file = "/etc/tessera/slurm.jwt";
  absl::StatusOr<SlurmClusterOptions> merged = SlurmClusterOptions::FromEnvironment(flags, lookup);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->jwt_file, "/etc/tessera/slurm.jwt");
  EXPECT_EQ(merged->jwt, "");

  env["SLURM_JWT_FILE"] = "/run/env.jwt";
  merged = SlurmClusterOptions::FromEnvironment(SlurmClusterOptions{}, lookup);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->jwt_file, "/run/env.jwt");
  EXPECT_EQ(merged->jwt, "");

  flags = SlurmClusterOptions{};
  flags.jwt = "flag-token";  // a flag's token wins over the environment's file
  merged = SlurmClusterOptions::FromEnvironment(flags, lookup);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->jwt, "flag-token");
  EXPECT_EQ(merged->jwt_file, "");
}

TEST(SlurmClusterOptionsTest, MissingOrBadSettings) {
  const EnvLookup empty = [](std::string_view) { return std::nullopt; };
  SlurmClusterOptions flags;
  absl::Status status = SlurmClusterOptions::FromEnvironment(flags, empty).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("--slurm-url"));
  EXPECT_THAT(status.message(), HasSubstr("SLURM_REST_URL"));
  flags.url = "http://h:1";
  status = SlurmClusterOptions::FromEnvironment(flags, empty).status();
  EXPECT_THAT(status.message(), HasSubstr("--slurm-jwt"));
  EXPECT_THAT(status.message(), HasSubstr("SLURM_JWT"));
  flags.jwt = "t";
  absl::StatusOr<SlurmClusterOptions> merged = SlurmClusterOptions::FromEnvironment(flags, empty);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->api_version, "auto");
  EXPECT_FALSE(merged->user.empty());  // the agent's own user
  for (const char* unsupported : {"0.0.38", "v0.0.37", "v0.0.44", "latest"}) {
    flags.api_version = unsupported;
    status = SlurmClusterOptions::FromEnvironment(flags, empty).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << unsupported;
    EXPECT_THAT(status.message(), HasSubstr("--slurm-api-version")) << unsupported;
    EXPECT_THAT(status.message(), HasSubstr("SLURM_REST_API_VERSION")) << unsupported;
    EXPECT_THAT(status.message(), HasSubstr(unsupported));
  }
  for (const char* supported : {"auto", "v0.0.38", "v0.0.39", "v0.0.43"}) {
    flags.api_version = supported;
    EXPECT_TRUE(SlurmClusterOptions::FromEnvironment(flags, empty).ok()) << supported;
  }
}

TEST(SlurmClusterOptionsTest, BadUrl) {
  SlurmClusterOptions options;
  options.url = "slurm-ctl:6820";
  options.jwt = "t";
  options.user = "u";
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Create(options, nullptr);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cluster.status().message(), HasSubstr("http(s)://host[:port]"));
}

}  // namespace
}  // namespace tessera::agent

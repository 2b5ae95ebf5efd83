// LocalCluster over real processes, under the real task supervisor.
#include "agent/local/local_cluster.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "agent/common/testing/callback_probe.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

namespace fs = std::filesystem;

class RecordingObserver final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override {
    std::lock_guard<std::mutex> lock(mu_);
    started_.emplace_back(launch_id);
  }
  void OnTaskEnded(const tessera::TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    ended_.push_back(end);
    cv_.notify_all();
  }
  // The ends reported for `launch_id`, once there are at least `count` (or after 60 s).
  std::vector<tessera::TaskEnd> WaitForEndsOf(std::string_view launch_id, size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    std::vector<tessera::TaskEnd> ends;
    cv_.wait_for(lock, std::chrono::seconds(60), [&] {
      ends.clear();
      for (const tessera::TaskEnd& end : ended_) {
        if (end.launch_id == launch_id) ends.push_back(end);
      }
      return ends.size() >= count;
    });
    return ends;
  }
  std::vector<std::string> started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> started_;
  std::vector<tessera::TaskEnd> ended_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A temporary directory and a LocalCluster over it, under the real supervisor.
class LocalClusterRecoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("local_cluster_recover_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(
        {.inventory = {.node_name = "here"},
         .task_dir = (dir_ / "tasks").string(),
         .supervisor = TESSERA_TASK_SUPERVISOR},
        &observer_);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }
  void TearDown() override {
    cluster_.reset();
    std::error_code ignored;  // a task that outlived its cluster may still be writing its files
    fs::remove_all(dir_, ignored);
  }
  static KnownLaunch Known(std::string launch_id, std::string script) {
    return {.spec = {.launch_id = launch_id,
                     .job_id = launch_id.substr(0, launch_id.find('-')),
                     .task_name = "main-0",
                     .placement = {.node = "here"},
                     .command = {"sh", "-c", std::move(script)}}};
  }

  fs::path dir_;
  RecordingObserver observer_;
  std::unique_ptr<LocalCluster> cluster_;
};

// Recover called again on a cluster that stayed up (its agent reconnected after the control
// plane was away): a task still running is kept, not launched again; one that ended meanwhile
// is told again, not run again.
TEST_F(LocalClusterRecoverTest, RecoverAgainKeepsRunningTasksAndRetellsEndedOnes) {
  const std::string marker = (dir_ / "ran").string();
  const KnownLaunch sleeper = Known("1-main-0-a0", "sleep 60");
  const KnownLaunch once = Known("2-main-0-a0", "echo once >> " + marker);
  cluster_->Launch(sleeper.spec);
  cluster_->Launch(once.spec);
  ASSERT_EQ(observer_.WaitForEndsOf("2-main-0-a0", 1).size(), 1u);

  EXPECT_EQ(cluster_->Recover({sleeper, once}), std::vector<std::string>{"1-main-0-a0"});
  const std::vector<tessera::TaskEnd> ends = observer_.WaitForEndsOf("2-main-0-a0", 2);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[1].phase, TaskPhase::kSucceeded) << ends[1].message;
  EXPECT_EQ(ReadFile(marker), "once\n");
  EXPECT_EQ(observer_.started(), (std::vector<std::string>{"1-main-0-a0", "2-main-0-a0"}));
  EXPECT_TRUE(observer_.WaitForEndsOf("1-main-0-a0", 0).empty()) << "the sleeper still runs";
  cluster_->Cancel("1-main-0-a0", Duration(0));
  EXPECT_EQ(observer_.WaitForEndsOf("1-main-0-a0", 1).size(), 1u);
}

// Recover called again without a task the cluster still runs (the control plane gave it up
// while it could not reach the cluster): the task is killed.
TEST_F(LocalClusterRecoverTest, RecoverAgainKillsARunningTaskTheControlPlaneGaveUp) {
  cluster_->Launch(Known("3-main-0-a0", "sleep 60").spec);
  EXPECT_TRUE(cluster_->Recover({}).empty());
  const std::vector<tessera::TaskEnd> ends = observer_.WaitForEndsOf("3-main-0-a0", 1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].phase, TaskPhase::kCancelled) << ends[0].message;
}

// After a restart, a launch the executor has no record of never ran (the supervisor's start
// gate): the cluster launches it, and it runs exactly once.
TEST_F(LocalClusterRecoverTest, LaunchWithoutARecordIsStartedOnRecovery) {
  const std::string marker = (dir_ / "ran").string();
  const KnownLaunch known = Known("7-main-0-a0", "echo once >> " + marker);
  EXPECT_EQ(cluster_->Recover({known}), std::vector<std::string>{"7-main-0-a0"});
  const std::vector<tessera::TaskEnd> ends = observer_.WaitForEndsOf("7-main-0-a0", 1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].phase, TaskPhase::kSucceeded) << ends[0].message;
  EXPECT_EQ(observer_.started(), std::vector<std::string>{"7-main-0-a0"});
  EXPECT_EQ(ReadFile(marker), "once\n");
}

// The destruction contract (tessera/cluster/cluster.h): the destructor joins the executor's reaper
// before it returns, so nothing calls back afterwards. Each round destroys a cluster whose tasks
// are ending, or about to.
TEST_F(LocalClusterRecoverTest, DestroyingABusyClusterJoinsItsThreadsBeforeReturning) {
  std::vector<std::shared_ptr<testing::CallbackProbe>> probes;
  for (int round = 0; round < 10; ++round) {
    auto probe = std::make_shared<testing::CallbackProbe>();
    probes.push_back(probe);
    auto observer = std::make_unique<testing::ProbeObserver>(probe);
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
        LocalCluster::Create({.inventory = {.node_name = "here"},
                              .task_dir = (dir_ / fmt::format("round-{}", round)).string(),
                              .supervisor = TESSERA_TASK_SUPERVISOR},
                             observer.get());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    for (int task = 0; task < 4; ++task) {
      const std::string id = fmt::format("{}{}-main-0-a0", round, task);
      (*cluster)->Launch(Known(id, fmt::format("sleep 0.00{}", task)).spec);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4 * 3));
    cluster->reset();
    probe->ClusterGone();
    observer.reset();  // a late observer call is a use after free under ASan
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time for a stray thread to call
  for (size_t round = 0; round < probes.size(); ++round) {
    EXPECT_EQ(probes[round]->late_calls(), 0) << "round " << round;
  }
  // The tasks outlive their cluster (their supervisors write the exit files): give them a few
  // seconds to end before the directory is removed (a task that never started writes none).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int round = 0; round < 10; ++round) {
    for (int task = 0; task < 4; ++task) {
      const fs::path exit_file =
          dir_ / fmt::format("round-{}", round) / fmt::format("{}{}-main-0-a0.exit", round, task);
      while (!fs::exists(exit_file) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }
}

}  // namespace
}  // namespace tessera::agent

// LocalCluster over real processes, under the real task supervisor.
#include "server/local_cluster.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "fmt/format.h"
#include "gtest/gtest.h"

namespace tessera::server {
namespace {

namespace fs = std::filesystem;

class RecordingObserver final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override {
    std::lock_guard<std::mutex> lock(mu_);
    started_.emplace_back(launch_id);
  }
  void OnTaskEnded(const TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    ended_.push_back(end);
    cv_.notify_all();
  }
  std::optional<TaskEnd> WaitForEnd() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return !ended_.empty(); });
    if (ended_.empty()) return std::nullopt;
    return ended_.front();
  }
  std::vector<std::string> started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> started_;
  std::vector<TaskEnd> ended_;
};

// After a restart, a launch the executor has no record of never ran (the supervisor's start
// gate): the cluster launches it, and it runs exactly once.
TEST(LocalClusterTest, LaunchWithoutARecordIsStartedOnRecovery) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("local_cluster_test_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string marker = (dir / "ran").string();
  RecordingObserver observer;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(
      {.inventory = {.node_name = "here"},
       .task_dir = (dir / "tasks").string(),
       .supervisor = TESSERA_TASK_SUPERVISOR},
      &observer);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const KnownLaunch known{
      .spec = {.launch_id = "7-main-0-a0",
               .job_id = "7",
               .task_name = "main-0",
               .placement = {.node = "here"},
               .command = {"sh", "-c", "echo once >> " + marker}}};
  const std::vector<std::string> running = (*cluster)->Recover({known});
  EXPECT_EQ(running, std::vector<std::string>{"7-main-0-a0"});
  const std::optional<TaskEnd> end = observer.WaitForEnd();
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded) << end->message;
  EXPECT_EQ(observer.started(), std::vector<std::string>{"7-main-0-a0"});
  std::ifstream in(marker);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "once\n");
  cluster->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::server

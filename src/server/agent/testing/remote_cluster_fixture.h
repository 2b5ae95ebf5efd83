// The fixture of the RemoteCluster tests: AgentClusters over a real SQLite store in a temporary
// folder on a manual clock, channels that record what the server sends an agent, an observer
// that records what the clusters report, and builders of agent protocol messages. Test-only.
#pragma once

#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "server/agent/agent_clusters.h"
#include "server/agent/remote_cluster.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::server::testing {

namespace v1 = agent::v1;

// The agent's end of a session, as the server sees it: what was sent, and the close.
class RecordingChannel final : public AgentChannel {
 public:
  void Send(v1::ServerMessage message) override { sent.push_back(std::move(message)); }
  void Close(absl::Status status) override { closed = std::move(status); }
  std::vector<v1::ServerMessage> sent;
  absl::Status closed;
};

// A session's channel that another thread reads: hands over the log requests sent on it.
class LogRequestChannel final : public AgentChannel {
 public:
  void Send(v1::ServerMessage message) override {
    if (!message.has_log_request()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(message.log_request());
    }
    sent_.notify_all();
  }
  void Close(absl::Status) override {}
  // Waits for the next log request (the test's timeout ends a test that never gets one).
  v1::LogRequest NextLogRequest() {
    std::unique_lock<std::mutex> lock(mu_);
    sent_.wait(lock, [this] { return !requests_.empty(); });
    v1::LogRequest request = std::move(requests_.front());
    requests_.pop_front();
    return request;
  }

 private:
  std::mutex mu_;
  std::condition_variable sent_;
  std::deque<v1::LogRequest> requests_;
};

inline v1::LogChunk Answer(const v1::LogRequest& request, std::string data, bool end) {
  v1::LogChunk chunk;
  chunk.set_epoch(request.epoch());
  chunk.set_request_id(request.request_id());
  chunk.set_next_offset(request.offset() + static_cast<int64_t>(data.size()));
  chunk.set_data(std::move(data));
  chunk.set_end(end);
  return chunk;
}

class RecordingObserver final : public TaskObserver, public InventoryObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint) override {
    started.emplace_back(launch_id);
  }
  void OnTaskEnded(const TaskEnd& end) override { ended.push_back(end); }
  void OnNodesChanged(const Cluster&, std::vector<Node> nodes) override {
    for (Node& node : nodes) changes.push_back(std::move(node));
  }
  std::vector<std::string> started;
  std::vector<TaskEnd> ended;
  std::vector<Node> changes;
};

inline v1::Node ProtoNode(std::string name, uint32_t id, int gpus = 8) {
  v1::Node node;
  node.set_id(id);
  node.set_name(std::move(name));
  node.set_cpu(64000);
  node.set_memory(512LL << 30);
  node.set_allocatable_cpu(64000);
  node.set_allocatable_memory(512LL << 30);
  for (int i = 0; i < gpus; ++i) {
    v1::GpuDevice* gpu = node.add_gpus();
    gpu->set_index(i);
    gpu->set_model("H100");
    gpu->set_healthy(true);
  }
  node.set_ready(true);
  return node;
}

inline v1::Inventory FullInventory(uint64_t epoch, int nodes, std::string prefix = "n") {
  v1::Inventory inventory;
  inventory.set_epoch(epoch);
  inventory.set_full(true);
  for (int i = 0; i < nodes; ++i) *inventory.add_nodes() = ProtoNode(prefix + std::to_string(i), i);
  return inventory;
}

inline v1::Register Hello(std::string cluster, uint64_t previous = 0) {
  v1::Register request;
  request.set_cluster(std::move(cluster));
  request.set_backend("sim");
  (*request.mutable_labels())["region"] = "east";
  request.set_previous_epoch(previous);
  return request;
}

inline TaskLaunchSpec Launch(std::string id, std::string node) {
  TaskLaunchSpec spec;
  spec.launch_id = std::move(id);
  spec.job_id = "j";
  spec.task_name = "worker-0";
  spec.placement.node = std::move(node);
  spec.command = {"true"};
  return spec;
}

class RemoteClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("remote_cluster_test_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    OpenStore();
  }
  void TearDown() override {
    clusters_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void OpenStore() {
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open({.data_dir = (dir_ / "store").string()});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  // AgentClusters over the store, with 1 s heartbeats, 3 s timeout, 10 s grace.
  void MakeClusters(Duration log_timeout = Duration(10000)) {
    names_ = std::make_unique<NodeNames>();
    clusters_ = std::make_unique<AgentClusters>(AgentClustersOptions{
        .heartbeat_interval = Duration(1000),
        .unreachable_timeout = Duration(3000),
        .lost_grace = Duration(10000),
        .log_timeout = log_timeout,
        .rules = {.known_gpu_models = {"H100"}},
        .clock = &clock_,
        .store = store_.get(),
        .node_names = names_.get(),
        .reserved_names = reserved_,
        .task_observer = &observer_,
        .inventory_observer = &observer_,
        .attach = [this](Cluster* cluster) { attached_.push_back(cluster); }});
    ASSERT_TRUE(clusters_->Load().ok());
  }
  // Registers `cluster`, sends a full inventory of `nodes` and answers the resync with
  // `running`; returns the cluster and the epoch.
  std::pair<RemoteCluster*, uint64_t> Connect(AgentChannel& channel, std::string cluster,
                                              int nodes, std::vector<std::string> running = {},
                                              uint64_t previous = 0) {
    absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> attached =
        clusters_->Attach(&channel, Hello(cluster, previous));
    EXPECT_TRUE(attached.ok()) << attached.status();
    auto [remote, epoch] = *attached;
    EXPECT_TRUE(remote->OnInventory(epoch, FullInventory(epoch, nodes, cluster + "-n")).ok());
    v1::ResyncReport report;
    report.set_epoch(epoch);
    for (const std::string& id : running) report.add_running(id);
    EXPECT_TRUE(remote->OnResyncReport(epoch, report).ok());
    return {remote, epoch};
  }
  v1::Heartbeat Beat(uint64_t epoch, int nodes) {
    v1::Heartbeat heartbeat;
    heartbeat.set_epoch(epoch);
    for (int i = 0; i < nodes; ++i) {
      heartbeat.add_node_id(i);
      heartbeat.add_cpu(1000 * i);
    }
    return heartbeat;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
  ManualClock clock_{TimePoint(Duration(1'000'000))};
  RecordingObserver observer_;
  std::unique_ptr<NodeNames> names_;
  std::unique_ptr<AgentClusters> clusters_;
  std::set<std::string, std::less<>> reserved_;  // names of the server's config file
  std::vector<Cluster*> attached_;
};

}  // namespace tessera::server::testing

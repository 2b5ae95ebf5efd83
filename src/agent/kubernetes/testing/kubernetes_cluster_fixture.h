// The fixture of the KubernetesCluster tests: the fixture API server on loopback with one GPU
// node and one CPU node, a cluster over it, an observer that records what it hears, and helpers
// that build launch specs and wait for pods. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/kubernetes/kubernetes_cluster.h"
#include "agent/kubernetes/pod_manifest.h"
#include "agent/kubernetes/pod_names.h"
#include "agent/kubernetes/testing/fake_api_server.h"

namespace tessera::agent::k8s::testing {

inline constexpr char kNs[] = "tessera";
// How long a test waits for something that happens in milliseconds; only a hang reaches it.
inline constexpr auto kPatience = std::chrono::seconds(30);

// Polls `condition` until it holds (true) or kPatience passes (false).
inline bool Eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

class RecordingObserver final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back("started " + std::string(launch_id));
  }
  void OnTaskEnded(const TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back("ended " + end.launch_id);
    ends_[end.launch_id] = end;
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::optional<TaskEnd> End(const std::string& id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ends_.find(id);
    if (it == ends_.end()) return std::nullopt;
    return it->second;
  }
  // Waits for the task's end.
  std::optional<TaskEnd> AwaitEnd(const std::string& id) const {
    Eventually([&] { return End(id).has_value(); });
    return End(id);
  }
  bool Started(const std::string& id) const {
    std::vector<std::string> all = events();
    return std::find(all.begin(), all.end(), "started " + id) != all.end();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> events_;
  std::map<std::string, TaskEnd> ends_;
};

inline TaskLaunchSpec Spec(const std::string& launch_id, const std::string& node,
                            std::vector<int32_t> gpus = {}) {
  TaskLaunchSpec spec;
  spec.launch_id = launch_id;
  spec.job_id = launch_id.substr(0, launch_id.find('-'));
  spec.task_name = "worker-0";
  spec.placement.node = node;
  for (int32_t gpu : gpus) spec.placement.gpus.push_back(gpu);
  spec.command = {"python", "train.py"};
  spec.args = {"--epochs", "3"};
  spec.env = {{"MODE", "test"}};
  spec.working_dir = "/work";
  spec.time_limit = std::chrono::minutes(90);
  spec.termination_grace = std::chrono::seconds(5);
  return spec;
}

// Rank `rank` of a job of `nodes.size()` tasks, one per node.
inline TaskLaunchSpec GangSpec(const std::string& job, int32_t rank,
                                const std::vector<std::string>& nodes) {
  TaskLaunchSpec spec =
      Spec(job + "-worker-" + std::to_string(rank) + "-a1", nodes.at(rank));
  spec.task_name = "worker-" + std::to_string(rank);
  spec.peer_nodes = nodes;
  spec.rank = rank;
  return spec;
}

// The value of the pod's container env variable `name` ("" when missing).
inline std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& var : pod["spec"]["containers"][0]["env"]) {
    if (var["name"] == name) return var["value"].get<std::string>();
  }
  return "";
}

inline size_t CountRequests(const std::vector<std::string>& requests, const std::string& prefix) {
  return std::count_if(requests.begin(), requests.end(),
                       [&](const std::string& r) { return r.starts_with(prefix); });
}

class KubernetesClusterTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer({}); }

  void StartServer(FakeApiServerOptions options) {
    absl::StatusOr<std::unique_ptr<FakeApiServer>> server = FakeApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->AddNode({.name = "gpu-1",
                      .gpus = 4,
                      .gpu_product = "NVIDIA-A100-SXM4-80GB",
                      .gpu_memory_mib = 81920,
                      .labels = {{"tessera.io/pool", "a100"}}});
    server_->AddNode({.name = "cpu-1", .cpu = "16", .memory = "32Gi"});
  }

  KubernetesClusterOptions Options() {
    KubernetesClusterOptions options;
    options.name = "k8s-test";
    options.labels = {{"region", "eu"}};
    options.api.server = server_->url();
    options.api.token = "test-token";
    options.default_image = "busybox:1.36";
    options.retry_backoff = std::chrono::milliseconds(10);
    options.watch_timeout_seconds = 30;
    options.log = [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.emplace_back(line);
    };
    return options;
  }

  void CreateCluster(KubernetesClusterOptions options) {
    absl::StatusOr<std::unique_ptr<KubernetesCluster>> cluster =
        KubernetesCluster::Create(std::move(options), &observer_);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }
  void CreateCluster() { CreateCluster(Options()); }

  std::optional<Node> FindNode(const std::string& name) const {
    for (Node& node : cluster_->Inventory()) {
      if (node.name == name) return node;
    }
    return std::nullopt;
  }

  // Waits until the fixture holds the launch's pod.
  std::optional<Json> AwaitPod(const std::string& launch_id) {
    const std::string name = PodNameForLaunch(launch_id);
    Eventually([&] { return server_->GetPod(kNs, name).has_value(); });
    return server_->GetPod(kNs, name);
  }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // A pod as an earlier agent would have created it, in `phase`.
  Json TesseraPod(const std::string& launch_id, const std::string& phase) {
    absl::StatusOr<Json> pod = BuildPod(
        Spec(launch_id, "gpu-1"),
        {.kube_namespace = kNs, .default_image = "busybox", .cluster = "k8s-test"}, {});
    EXPECT_TRUE(pod.ok());
    (*pod)["status"] = {{"phase", phase}};
    if (phase == "Succeeded") {
      (*pod)["status"]["containerStatuses"] =
          Json::array({{{"name", "task"},
                        {"state", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}}}});
    }
    return *pod;
  }

  // Members are destroyed in reverse order: the cluster first, so its threads are joined while
  // the log and the observer they write into still exist.
  std::unique_ptr<FakeApiServer> server_;
  RecordingObserver observer_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::unique_ptr<KubernetesCluster> cluster_;
};

}  // namespace tessera::agent::k8s::testing

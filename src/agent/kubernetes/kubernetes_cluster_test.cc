// KubernetesCluster end to end against the fixture API server on loopback: inventory, launch,
// the pod lifecycle as the observer hears it, cancel, watch recovery, Recover, logs, TLS and
// credentials.
#include "agent/kubernetes/kubernetes_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "agent/common/testing/callback_probe.h"
#include "agent/kubernetes/pod_manifest.h"
#include "agent/kubernetes/pod_names.h"
#include "agent/kubernetes/rendezvous.h"
#include "agent/kubernetes/testing/fake_api_server.h"
#include "agent/kubernetes/testing/test_certificates.h"

namespace tessera::agent {
namespace {

using k8s::Json;
using k8s::testing::FakeApiServer;
using k8s::testing::FakeApiServerOptions;
using k8s::testing::FakeNode;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

constexpr char kNs[] = "tessera";
// How long a test waits for something that happens in milliseconds; only a hang reaches it.
constexpr auto kPatience = std::chrono::seconds(30);

// Polls `condition` until it holds (true) or kPatience passes (false).
bool Eventually(const std::function<bool()>& condition) {
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

TaskLaunchSpec Spec(const std::string& launch_id, const std::string& node,
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
TaskLaunchSpec GangSpec(const std::string& job, int32_t rank,
                                const std::vector<std::string>& nodes) {
  TaskLaunchSpec spec =
      Spec(job + "-worker-" + std::to_string(rank) + "-a1", nodes.at(rank));
  spec.task_name = "worker-" + std::to_string(rank);
  spec.peer_nodes = nodes;
  spec.rank = rank;
  return spec;
}

// The value of the pod's container env variable `name` ("" when missing).
std::string EnvOf(const Json& pod, const std::string& name) {
  for (const Json& var : pod["spec"]["containers"][0]["env"]) {
    if (var["name"] == name) return var["value"].get<std::string>();
  }
  return "";
}

size_t CountRequests(const std::vector<std::string>& requests, const std::string& prefix) {
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
    const std::string name = k8s::PodNameForLaunch(launch_id);
    Eventually([&] { return server_->GetPod(kNs, name).has_value(); });
    return server_->GetPod(kNs, name);
  }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // A pod as an earlier agent would have created it, in `phase`.
  Json TesseraPod(const std::string& launch_id, const std::string& phase) {
    absl::StatusOr<Json> pod = k8s::BuildPod(
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

TEST_F(KubernetesClusterTest, InventoryComesFromTheNodes) {
  CreateCluster();
  EXPECT_EQ(cluster_->backend(), "kubernetes");
  EXPECT_EQ(cluster_->labels().at("tessera.io/cluster"), "k8s-test");
  std::optional<Node> gpu = FindNode("gpu-1");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->cluster, "k8s-test");
  EXPECT_EQ(gpu->pool, "a100");
  EXPECT_EQ(gpu->labels.at("tessera.io/cluster"), "k8s-test");
  EXPECT_EQ(gpu->labels.at("region"), "eu");
  EXPECT_EQ(gpu->labels.at("kubernetes.io/hostname"), "gpu-1");
  EXPECT_EQ(gpu->condition, NodeCondition::kReady);
  EXPECT_EQ(gpu->capacity.cpu, 8000);
  EXPECT_EQ(gpu->capacity.memory, int64_t{64} << 30);
  EXPECT_EQ(gpu->capacity.gpu, 4000);
  ASSERT_EQ(gpu->gpus.size(), 4u);
  EXPECT_EQ(gpu->gpus[3].index, 3);
  EXPECT_EQ(gpu->gpus[3].model, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(gpu->gpus[3].memory, int64_t{81920} << 20);
  std::optional<Node> cpu = FindNode("cpu-1");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->capacity.cpu, 16000);
  EXPECT_TRUE(cpu->gpus.empty());
}

TEST_F(KubernetesClusterTest, InventoryFollowsNodeChanges) {
  CreateCluster();
  server_->SetNodeReady("gpu-1", false);
  EXPECT_TRUE(Eventually([&] { return FindNode("gpu-1")->condition == NodeCondition::kDown; }));
  server_->SetNodeUnschedulable("cpu-1", true);
  EXPECT_TRUE(Eventually([&] { return FindNode("cpu-1")->unschedulable; }));
  server_->AddNode({.name = "cpu-2"});
  EXPECT_TRUE(Eventually([&] { return FindNode("cpu-2").has_value(); }));
  server_->DeleteNode("cpu-1");
  EXPECT_TRUE(Eventually([&] { return !FindNode("cpu-1").has_value(); }));
  server_->SetNodeReady("gpu-1", true);
  EXPECT_TRUE(Eventually([&] { return FindNode("gpu-1")->condition == NodeCondition::kReady; }));
}

TEST_F(KubernetesClusterTest, MalformedNodesAreSkippedAndLogged) {
  CreateCluster();
  Json bad = k8s::testing::NodeObject({.name = "bad-1"});
  bad["status"]["allocatable"]["cpu"] = "lots";
  server_->PutNode(bad);
  // A good node added after the bad one shows the bad one's event was handled.
  server_->AddNode({.name = "cpu-2"});
  ASSERT_TRUE(Eventually([&] { return FindNode("cpu-2").has_value(); }));
  EXPECT_FALSE(FindNode("bad-1").has_value());
  EXPECT_THAT(Log(), Contains(AllOf(HasSubstr("bad-1"), HasSubstr("status.allocatable.cpu"))));

  // A node that turns malformed keeps its last good state.
  Json broken = k8s::testing::NodeObject({.name = "cpu-1", .cpu = "16"});
  broken["spec"]["taints"] = "not a list";
  server_->PutNode(broken);
  server_->AddNode({.name = "cpu-3"});
  ASSERT_TRUE(Eventually([&] { return FindNode("cpu-3").has_value(); }));
  ASSERT_TRUE(FindNode("cpu-1").has_value());
  EXPECT_EQ(FindNode("cpu-1")->capacity.cpu, 16000);
}

// Usage is read on the backend's thread; a short interval makes the refreshes come quickly.
KubernetesClusterOptions WithUsageInterval(KubernetesClusterOptions options) {
  options.usage_interval = std::chrono::milliseconds(10);
  return options;
}

std::optional<NodeUsage> FindUsage(const std::vector<NodeUsage>& usage,
                                           const std::string& node) {
  for (const NodeUsage& entry : usage) {
    if (entry.node == node) return entry;
  }
  return std::nullopt;
}

TEST_F(KubernetesClusterTest, UsageComesFromTheMetricsApi) {
  server_->SetNodeMetrics("gpu-1", "123456789n", "1048576Ki");  // as metrics-server writes it
  server_->SetNodeMetrics("cpu-1", "2", "1Gi");
  server_->SetNodeMetrics("elsewhere", "1", "1Gi");  // not in the inventory
  CreateCluster(WithUsageInterval(Options()));
  ASSERT_TRUE(Eventually([&] { return cluster_->Usage().size() == 2; }));
  const std::vector<NodeUsage> usage = cluster_->Usage();
  std::optional<NodeUsage> gpu = FindUsage(usage, "gpu-1");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->cpu, 124);  // millicores, rounded up
  EXPECT_EQ(gpu->memory, int64_t{1} << 30);
  EXPECT_THAT(gpu->gpu_utilization, IsEmpty());
  EXPECT_FALSE(gpu->power_watts.has_value());
  std::optional<NodeUsage> cpu = FindUsage(usage, "cpu-1");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->cpu, 2000);
  EXPECT_FALSE(FindUsage(usage, "elsewhere").has_value());

  // Each refresh replaces the last read; a node that leaves the inventory leaves the usage.
  server_->SetNodeMetrics("cpu-1", "500m", "2Gi");
  EXPECT_TRUE(Eventually([&] { return FindUsage(cluster_->Usage(), "cpu-1")->cpu == 500; }));
  server_->DeleteNode("cpu-1");
  EXPECT_TRUE(Eventually([&] { return !FindUsage(cluster_->Usage(), "cpu-1").has_value(); }));
  EXPECT_THAT(Log(), Contains(HasSubstr("node usage: read from GET "
                                        "/apis/metrics.k8s.io/v1beta1/nodes every 10ms")));
}

TEST_F(KubernetesClusterTest, WithoutTheMetricsApiUsageIsEmptyUntilItAppears) {
  CreateCluster(WithUsageInterval(Options()));
  const auto metrics_requests = [&] {
    return CountRequests(server_->requests(), "GET /apis/metrics.k8s.io/v1beta1/nodes");
  };
  ASSERT_TRUE(Eventually([&] { return metrics_requests() >= 3; }));  // read again and again
  EXPECT_THAT(cluster_->Usage(), IsEmpty());
  const auto unavailable = [](const std::vector<std::string>& log) {
    return std::count_if(log.begin(), log.end(), [](const std::string& line) {
      return line.starts_with("node usage is not reported: ") &&
             line.find("GET /apis/metrics.k8s.io/v1beta1/nodes: 404 NotFound") != line.npos;
    });
  };
  EXPECT_EQ(unavailable(Log()), 1) << "logged once";
  EXPECT_THAT(Log(), Contains(HasSubstr("metrics-server")));

  server_->SetNodeMetrics("gpu-1", "250m", "1Gi");
  ASSERT_TRUE(Eventually([&] { return cluster_->Usage().size() == 1; }));
  EXPECT_EQ(cluster_->Usage()[0].cpu, 250);
  EXPECT_THAT(Log(), Contains(HasSubstr("node usage: read from")));
}

// The destruction contract (tessera/cluster/cluster.h): the destructor stops and joins the
// informer, worker and usage threads before it returns, so nothing calls back afterwards. Each
// round destroys a cluster while its threads are busy: pods being created and deleted, a node
// flapping, usage read every millisecond.
TEST_F(KubernetesClusterTest, DestroyingABusyClusterJoinsItsThreadsBeforeReturning) {
  server_->SetNodeMetrics("cpu-1", "1", "1Gi");
  std::atomic<bool> flapping{true};
  std::thread flap([&] {
    for (bool ready = false; flapping.load(); ready = !ready) {
      server_->SetNodeReady("gpu-1", ready);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::shared_ptr<testing::CallbackProbe>> probes;
  for (int round = 0; round < 20; ++round) {
    auto probe = std::make_shared<testing::CallbackProbe>();
    probes.push_back(probe);
    auto observer = std::make_unique<testing::ProbeObserver>(probe);
    KubernetesClusterOptions options = Options();
    options.usage_interval = std::chrono::milliseconds(1);
    options.log = testing::Log(probe);
    absl::StatusOr<std::unique_ptr<KubernetesCluster>> cluster =
        KubernetesCluster::Create(std::move(options), observer.get());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const std::string job = "r" + std::to_string(round);
    for (int task = 0; task < 4; ++task) {
      (*cluster)->Launch(Spec(job + "-t" + std::to_string(task) + "-a0", "cpu-1"));
    }
    (*cluster)->Cancel(job + "-t0-a0", Duration::zero());
    if (round == 0) {  // one round at least has called back before it is destroyed
      ASSERT_TRUE(Eventually([&] { return probe->calls() > 0; }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4));
    cluster->reset();
    probe->ClusterGone();
    observer.reset();  // a late observer call is a use after free under ASan
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // time for a stray thread to call
  flapping = false;
  flap.join();
  for (size_t round = 0; round < probes.size(); ++round) {
    EXPECT_EQ(probes[round]->late_calls(), 0) << "round " << round;
  }
  EXPECT_GT(probes[0]->calls(), 0);
}

TEST_F(KubernetesClusterTest, MalformedMetricsEntriesAreSkippedAndLogged) {
  Json bad = {{"metadata", {{"name", "gpu-1"}}}, {"usage", {{"cpu", "lots"}, {"memory", "1Gi"}}}};
  server_->PutNodeMetrics(bad);
  server_->SetNodeMetrics("cpu-1", "1", "1Gi");
  CreateCluster(WithUsageInterval(Options()));
  ASSERT_TRUE(Eventually([&] { return cluster_->Usage().size() == 1; }));
  EXPECT_EQ(cluster_->Usage()[0].node, "cpu-1");
  EXPECT_THAT(Log(), Contains(AllOf(HasSubstr("node usage skipped"),
                                    HasSubstr("items[0].usage.cpu: \"lots\" is not a quantity"))));
}

TEST_F(KubernetesClusterTest, LaunchRunsAPodBoundToTheNode) {
  CreateCluster();
  cluster_->Launch(Spec("train7-worker-0-a1", "gpu-1", {0, 2}));
  std::optional<Json> pod = AwaitPod("train7-worker-0-a1");
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ((*pod)["spec"]["nodeName"], "gpu-1");
  EXPECT_EQ((*pod)["spec"]["restartPolicy"], "Never");
  EXPECT_EQ((*pod)["spec"]["activeDeadlineSeconds"], 5400);
  EXPECT_EQ((*pod)["spec"]["terminationGracePeriodSeconds"], 5);
  const Json& container = (*pod)["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "busybox:1.36");
  EXPECT_EQ(container["command"], Json({"python", "train.py"}));
  EXPECT_EQ(container["args"], Json({"--epochs", "3"}));
  EXPECT_EQ(container["workingDir"], "/work");
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ((*pod)["metadata"]["labels"]["tessera.io/launch-id"], "train7-worker-0-a1");
  EXPECT_EQ((*pod)["metadata"]["labels"]["tessera.io/cluster"], "k8s-test");
  EXPECT_EQ((*pod)["metadata"]["annotations"]["tessera.io/launch-id"], "train7-worker-0-a1");
  EXPECT_FALSE(observer_.Started("train7-worker-0-a1"));

  server_->SetPodRunning(kNs, "train7-worker-0-a1");
  EXPECT_TRUE(Eventually([&] { return observer_.Started("train7-worker-0-a1"); }));
  server_->SetPodSucceeded(kNs, "train7-worker-0-a1");
  std::optional<TaskEnd> end = observer_.AwaitEnd("train7-worker-0-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded);
  EXPECT_EQ(end->exit_code, 0);
  EXPECT_THAT(observer_.events(),
              ElementsAre("started train7-worker-0-a1", "ended train7-worker-0-a1"));
}

TEST_F(KubernetesClusterTest, PodEndsMapToTaskEnds) {
  CreateCluster();
  struct Case {
    std::string launch_id;
    std::function<void(const std::string& pod)> kubelet;
    TaskPhase phase;
    std::optional<int32_t> exit_code;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"fail-t-a1", [&](const std::string& p) { server_->SetPodFailed(kNs, p, 3); },
       TaskPhase::kFailed, 3, "Error"},
      {"oom-t-a1", [&](const std::string& p) { server_->SetPodFailed(kNs, p, 137, "OOMKilled"); },
       TaskPhase::kFailed, 137, "Killed"},
      {"late-t-a1", [&](const std::string& p) { server_->SetPodDeadlineExceeded(kNs, p); },
       TaskPhase::kFailed, 137, "TimeLimitExceeded"},
      {"gone-t-a1", [&](const std::string& p) { server_->RemovePod(kNs, p); }, TaskPhase::kFailed,
       std::nullopt, "Lost"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.launch_id);
    cluster_->Launch(Spec(c.launch_id, "cpu-1"));
    ASSERT_TRUE(AwaitPod(c.launch_id).has_value());
    server_->SetPodRunning(kNs, c.launch_id);
    ASSERT_TRUE(Eventually([&] { return observer_.Started(c.launch_id); }));
    c.kubelet(c.launch_id);
    std::optional<TaskEnd> end = observer_.AwaitEnd(c.launch_id);
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->phase, c.phase);
    EXPECT_EQ(end->exit_code, c.exit_code);
    EXPECT_EQ(end->reason, c.reason);
  }
}

TEST_F(KubernetesClusterTest, AnImageThatCannotBePulledIsAStartFailure) {
  CreateCluster();
  cluster_->Launch(Spec("img-t-a1", "cpu-1"));
  ASSERT_TRUE(AwaitPod("img-t-a1").has_value());
  server_->SetPodWaiting(kNs, "img-t-a1", "InvalidImageName");
  std::optional<TaskEnd> end = observer_.AwaitEnd("img-t-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_THAT(end->message, HasSubstr("InvalidImageName"));
  EXPECT_TRUE(Eventually([&] { return !server_->GetPod(kNs, "img-t-a1").has_value(); }));
  EXPECT_FALSE(observer_.Started("img-t-a1"));
}

TEST_F(KubernetesClusterTest, CancelDeletesThePodWithTheGrace) {
  CreateCluster();
  cluster_->Launch(Spec("c1-t-a1", "gpu-1", {1}));
  ASSERT_TRUE(AwaitPod("c1-t-a1").has_value());
  server_->SetPodRunning(kNs, "c1-t-a1");
  ASSERT_TRUE(Eventually([&] { return observer_.Started("c1-t-a1"); }));
  cluster_->Cancel("c1-t-a1", std::chrono::seconds(7));
  ASSERT_TRUE(Eventually([&] {
    std::optional<Json> pod = server_->GetPod(kNs, "c1-t-a1");
    return pod.has_value() && (*pod)["metadata"].contains("deletionTimestamp");
  }));
  EXPECT_THAT(server_->requests(),
              Contains("DELETE /api/v1/namespaces/tessera/pods/c1-t-a1?gracePeriodSeconds=7"));
  EXPECT_FALSE(observer_.End("c1-t-a1").has_value());  // the grace runs
  server_->FinishDeletions();
  std::optional<TaskEnd> end = observer_.AwaitEnd("c1-t-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled);
}

TEST_F(KubernetesClusterTest, CancelRightAfterLaunchEndsCancelled) {
  CreateCluster();
  cluster_->Launch(Spec("c2-t-a1", "cpu-1"));
  cluster_->Cancel("c2-t-a1", std::chrono::seconds(0));
  std::optional<TaskEnd> end = observer_.AwaitEnd("c2-t-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kCancelled);
  EXPECT_TRUE(Eventually([&] { return !server_->GetPod(kNs, "c2-t-a1").has_value(); }));
}

TEST_F(KubernetesClusterTest, RejectedCreateIsAStartFailureWithTheApiMessage) {
  CreateCluster();
  cluster_->Launch(Spec("r1-t-a1", "no-such-node"));
  std::optional<TaskEnd> end = observer_.AwaitEnd("r1-t-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_THAT(end->message, AllOf(HasSubstr("422"), HasSubstr("spec.nodeName")));
}

TEST_F(KubernetesClusterTest, LaunchWithoutAnImageFailsBeforeAnyRequest) {
  KubernetesClusterOptions options = Options();
  options.default_image = "";
  CreateCluster(std::move(options));
  cluster_->Launch(Spec("i1-t-a1", "cpu-1"));
  std::optional<TaskEnd> end = observer_.AwaitEnd("i1-t-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_THAT(end->message, HasSubstr("TESSERA_IMAGE"));
  for (const std::string& request : server_->requests()) {
    EXPECT_THAT(request, Not(HasSubstr("POST")));
  }
  // The task's own env names the image.
  TaskLaunchSpec spec = Spec("i2-t-a1", "cpu-1");
  spec.env["TESSERA_IMAGE"] = "pytorch/pytorch:2.3";
  cluster_->Launch(spec);
  std::optional<Json> pod = AwaitPod("i2-t-a1");
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ((*pod)["spec"]["containers"][0]["image"], "pytorch/pytorch:2.3");
}

TEST_F(KubernetesClusterTest, NodeWatchRelistsAfterGone) {
  CreateCluster();
  ASSERT_TRUE(Eventually([&] { return cluster_->node_informer_for_test().watches() >= 1; }));
  server_->HoldWatchEvents(true);
  server_->SetNodeReady("gpu-1", false);
  server_->CompactHistory();
  server_->CloseWatches();
  // Only a new list can show the change: the held watch never delivers it.
  EXPECT_TRUE(Eventually([&] { return FindNode("gpu-1")->condition == NodeCondition::kDown; }));
  EXPECT_GE(cluster_->node_informer_for_test().lists(), 1);
  server_->HoldWatchEvents(false);
}

TEST_F(KubernetesClusterTest, PodDeletedWhileTheWatchWasDownIsLost) {
  CreateCluster();
  cluster_->Launch(Spec("w1-t-a1", "cpu-1"));
  ASSERT_TRUE(AwaitPod("w1-t-a1").has_value());
  server_->SetPodRunning(kNs, "w1-t-a1");
  ASSERT_TRUE(Eventually([&] { return observer_.Started("w1-t-a1"); }));
  server_->HoldWatchEvents(true);
  server_->RemovePod(kNs, "w1-t-a1");
  server_->CompactHistory();
  server_->CloseWatches();
  std::optional<TaskEnd> end = observer_.AwaitEnd("w1-t-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "Lost");
  EXPECT_GE(cluster_->pod_informer_for_test().lists(), 1);
  server_->HoldWatchEvents(false);
}

TEST_F(KubernetesClusterTest, WatchReconnectsAfterTheStreamEnds) {
  CreateCluster();
  // A change seen through the watch shows the stream is open.
  server_->SetNodeUnschedulable("cpu-1", true);
  ASSERT_TRUE(Eventually([&] { return FindNode("cpu-1")->unschedulable; }));
  const int64_t watches = cluster_->node_informer_for_test().watches();
  server_->CloseWatches();
  ASSERT_TRUE(Eventually([&] { return cluster_->node_informer_for_test().watches() > watches; }));
  server_->SetNodeUnschedulable("gpu-1", true);
  EXPECT_TRUE(Eventually([&] { return FindNode("gpu-1")->unschedulable; }));
  EXPECT_EQ(cluster_->node_informer_for_test().lists(), 0);  // no relist was needed
}

TEST_F(KubernetesClusterTest, RecoverKeepsKnownEndsFinishedAndDeletesUnknownPods) {
  server_->PutPod(TesseraPod("a-t-a1", "Running"));    // known, running
  server_->PutPod(TesseraPod("b-t-a1", "Running"));    // unknown: deleted
  server_->PutPod(TesseraPod("c-t-a1", "Succeeded"));  // known, ended while the agent was away
  server_->PutPod(TesseraPod("e-t-a1", "Succeeded"));  // unknown, ended: kept for its logs
  CreateCluster();
  std::vector<KnownLaunch> known = {
      {.spec = Spec("a-t-a1", "gpu-1"), .start_time = TimePoint(Duration(1))},
      {.spec = Spec("c-t-a1", "gpu-1"), .start_time = TimePoint(Duration(1))},
      {.spec = Spec("d-t-a1", "gpu-1"), .start_time = TimePoint(Duration(1))},  // no pod
  };
  EXPECT_THAT(cluster_->Recover(known), ElementsAre("a-t-a1"));
  std::optional<TaskEnd> c = observer_.AwaitEnd("c-t-a1");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->phase, TaskPhase::kSucceeded);
  std::optional<TaskEnd> d = observer_.AwaitEnd("d-t-a1");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->reason, "LostOnRestart");
  EXPECT_TRUE(Eventually([&] { return !server_->GetPod(kNs, "b-t-a1").has_value(); }));
  EXPECT_TRUE(server_->GetPod(kNs, "a-t-a1").has_value());
  EXPECT_TRUE(server_->GetPod(kNs, "e-t-a1").has_value());
  EXPECT_FALSE(observer_.Started("a-t-a1"));  // the control plane knew it had started

  // The recovered task is followed like a launched one.
  server_->SetPodSucceeded(kNs, "a-t-a1");
  std::optional<TaskEnd> a = observer_.AwaitEnd("a-t-a1");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->phase, TaskPhase::kSucceeded);
}

TEST_F(KubernetesClusterTest, RecoverAfterAReconnectDropsWhatTheControlPlaneForgot) {
  CreateCluster();
  cluster_->Launch(Spec("k-t-a1", "cpu-1"));
  cluster_->Launch(Spec("u-t-a1", "cpu-1"));
  ASSERT_TRUE(AwaitPod("k-t-a1").has_value());
  ASSERT_TRUE(AwaitPod("u-t-a1").has_value());
  server_->SetPodRunning(kNs, "k-t-a1");
  ASSERT_TRUE(Eventually([&] { return observer_.Started("k-t-a1"); }));
  EXPECT_THAT(cluster_->Recover({{.spec = Spec("k-t-a1", "cpu-1")}}), ElementsAre("k-t-a1"));
  EXPECT_TRUE(Eventually([&] { return !server_->GetPod(kNs, "u-t-a1").has_value(); }));
  EXPECT_FALSE(observer_.End("u-t-a1").has_value());  // unknown to the control plane: no end
  // A second reconnect after the task ended reports the end again.
  server_->SetPodFailed(kNs, "k-t-a1", 2);
  ASSERT_TRUE(observer_.AwaitEnd("k-t-a1").has_value());
  const size_t events = observer_.events().size();
  EXPECT_THAT(cluster_->Recover({{.spec = Spec("k-t-a1", "cpu-1")}}), IsEmpty());
  EXPECT_TRUE(Eventually([&] { return observer_.events().size() == events + 1; }));
  EXPECT_EQ(observer_.events().back(), "ended k-t-a1");
}

TEST_F(KubernetesClusterTest, ReadLogReadsThePodLog) {
  CreateCluster();
  cluster_->Launch(Spec("l-t-a1", "cpu-1"));
  ASSERT_TRUE(AwaitPod("l-t-a1").has_value());
  absl::StatusOr<LogChunk> pending =
      cluster_->ReadLog("l-t-a1", LogStream::kStdout, 0, 100);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ(pending->data, "");
  EXPECT_FALSE(pending->end);

  server_->SetPodRunning(kNs, "l-t-a1");
  server_->AppendPodLog(kNs, "l-t-a1", "hello\nworld\n");
  absl::StatusOr<LogChunk> first =
      cluster_->ReadLog("l-t-a1", LogStream::kStdout, 0, 6);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->data, "hello\n");
  EXPECT_EQ(first->next_offset, 6);
  EXPECT_FALSE(first->end);
  server_->SetPodSucceeded(kNs, "l-t-a1");
  absl::StatusOr<LogChunk> rest =
      cluster_->ReadLog("l-t-a1", LogStream::kStdout, 6, 100);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(rest->data, "world\n");
  EXPECT_EQ(rest->next_offset, 12);
  EXPECT_TRUE(rest->end);

  EXPECT_EQ(cluster_->ReadLog("l-t-a1", LogStream::kStderr, 0, 10).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(cluster_->ReadLog("nope-t-a1", LogStream::kStdout, 0, 10).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(KubernetesClusterTest, EndedPodsOfForgottenTasksAreCollected) {
  KubernetesClusterOptions options = Options();
  options.ended_pod_ttl = Duration(0);
  options.gc_interval = std::chrono::milliseconds(20);
  CreateCluster(std::move(options));
  cluster_->Launch(Spec("g-t-a1", "cpu-1"));
  ASSERT_TRUE(AwaitPod("g-t-a1").has_value());
  server_->SetPodSucceeded(kNs, "g-t-a1");
  ASSERT_TRUE(observer_.AwaitEnd("g-t-a1").has_value());
  // Kept while the control plane may still read its log.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(server_->GetPod(kNs, "g-t-a1").has_value());
  cluster_->Forget("g-t-a1");
  EXPECT_TRUE(Eventually([&] { return !server_->GetPod(kNs, "g-t-a1").has_value(); }));
}

TEST_F(KubernetesClusterTest, AMultiTaskJobMeetsThroughAHeadlessService) {
  CreateCluster();
  // A single task gets no Service.
  cluster_->Launch(Spec("solo-t-a1", "cpu-1"));
  std::optional<Json> solo = AwaitPod("solo-t-a1");
  ASSERT_TRUE(solo.has_value());
  EXPECT_FALSE((*solo)["spec"].contains("subdomain"));
  EXPECT_EQ(EnvOf(*solo, "MASTER_ADDR"), "");

  const std::vector<std::string> nodes = {"gpu-1", "cpu-1"};
  cluster_->Launch(GangSpec("gang", 0, nodes));
  cluster_->Launch(GangSpec("gang", 1, nodes));
  std::optional<Json> rank0 = AwaitPod("gang-worker-0-a1");
  std::optional<Json> rank1 = AwaitPod("gang-worker-1-a1");
  ASSERT_TRUE(rank0.has_value());
  ASSERT_TRUE(rank1.has_value());
  EXPECT_THAT(server_->ServiceNames(kNs), ElementsAre("gang"));
  std::optional<Json> service = server_->GetService(kNs, "gang");
  ASSERT_TRUE(service.has_value());
  EXPECT_EQ((*service)["spec"]["clusterIP"], "None");
  EXPECT_EQ((*service)["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ((*service)["spec"]["selector"],
            Json::parse(R"({"tessera.io/job":"gang","tessera.io/cluster":"k8s-test"})"));
  EXPECT_EQ((*service)["spec"]["ports"][0]["port"], 29500);
  EXPECT_EQ((*service)["metadata"]["labels"]["app.kubernetes.io/managed-by"], "tessera");
  // The Service selects the pods (as a real endpoints controller would match them).
  for (const Json* pod : {&*rank0, &*rank1}) {
    for (const auto& [key, value] : (*service)["spec"]["selector"].items()) {
      EXPECT_EQ((*pod)["metadata"]["labels"][key], value) << key;
    }
  }

  // Created once, before the job's first pod.
  const std::vector<std::string> requests = server_->requests();
  const std::string post_service = "POST /api/v1/namespaces/tessera/services";
  EXPECT_EQ(CountRequests(requests, post_service), 1u);
  auto service_at = std::find(requests.begin(), requests.end(), post_service);
  auto gang_pod_at = std::find(service_at, requests.end(), "POST /api/v1/namespaces/tessera/pods");
  EXPECT_NE(gang_pod_at, requests.end());

  for (const auto& [pod, rank] : {std::pair(&*rank0, 0), std::pair(&*rank1, 1)}) {
    SCOPED_TRACE(rank);
    EXPECT_EQ((*pod)["spec"]["hostname"], "gang-" + std::to_string(rank));
    EXPECT_EQ((*pod)["spec"]["subdomain"], "gang");
    EXPECT_EQ(EnvOf(*pod, "MASTER_ADDR"), "gang-0.gang");
    EXPECT_EQ(EnvOf(*pod, "MASTER_PORT"), "29500");
    EXPECT_EQ(EnvOf(*pod, "WORLD_SIZE"), "2");
    EXPECT_EQ(EnvOf(*pod, "RANK"), std::to_string(rank));
  }

  // The Service stays while a task of the job runs, and goes with the last one.
  server_->SetPodRunning(kNs, "gang-worker-0-a1");
  server_->SetPodRunning(kNs, "gang-worker-1-a1");
  server_->SetPodSucceeded(kNs, "gang-worker-0-a1");
  ASSERT_TRUE(observer_.AwaitEnd("gang-worker-0-a1").has_value());
  EXPECT_TRUE(server_->GetService(kNs, "gang").has_value());
  server_->SetPodFailed(kNs, "gang-worker-1-a1", 1);
  ASSERT_TRUE(observer_.AwaitEnd("gang-worker-1-a1").has_value());
  EXPECT_TRUE(Eventually([&] { return !server_->GetService(kNs, "gang").has_value(); }));
  EXPECT_EQ(CountRequests(server_->requests(), "DELETE /api/v1/namespaces/tessera/services/gang"),
            1u);
  // The ended pods stay for their logs.
  EXPECT_TRUE(server_->GetPod(kNs, "gang-worker-0-a1").has_value());

  // A later attempt of the job creates the Service again.
  TaskLaunchSpec retry = GangSpec("gang", 0, nodes);
  retry.launch_id = "gang-worker-0-a2";
  cluster_->Launch(retry);
  ASSERT_TRUE(AwaitPod("gang-worker-0-a2").has_value());
  EXPECT_TRUE(server_->GetService(kNs, "gang").has_value());
}

TEST_F(KubernetesClusterTest, CancellingAMultiTaskJobDeletesItsService) {
  CreateCluster();
  const std::vector<std::string> nodes = {"gpu-1", "cpu-1"};
  for (int32_t rank : {0, 1}) cluster_->Launch(GangSpec("cg", rank, nodes));
  ASSERT_TRUE(AwaitPod("cg-worker-0-a1").has_value());
  ASSERT_TRUE(AwaitPod("cg-worker-1-a1").has_value());
  ASSERT_TRUE(server_->GetService(kNs, "cg").has_value());
  for (const char* id : {"cg-worker-0-a1", "cg-worker-1-a1"}) {
    cluster_->Cancel(id, Duration(0));
  }
  for (const char* id : {"cg-worker-0-a1", "cg-worker-1-a1"}) {
    std::optional<TaskEnd> end = observer_.AwaitEnd(id);
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->phase, TaskPhase::kCancelled);
  }
  EXPECT_TRUE(Eventually([&] { return !server_->GetService(kNs, "cg").has_value(); }));
}

TEST_F(KubernetesClusterTest, AServiceOfTheSameNameIsReusedOnlyWhenItSelectsTheJob) {
  const k8s::PodTemplate pod_template{.kube_namespace = kNs, .cluster = "k8s-test"};
  // Left by an earlier agent: used as it is.
  server_->PutService(k8s::BuildRendezvousService("mine", pod_template));
  // Someone else's: the launch cannot use it.
  Json theirs = k8s::BuildRendezvousService("theirs", pod_template);
  theirs["spec"]["selector"] = {{"app", "web"}};
  server_->PutService(theirs);
  CreateCluster();
  const std::vector<std::string> nodes = {"gpu-1", "cpu-1"};
  cluster_->Launch(GangSpec("mine", 0, nodes));
  ASSERT_TRUE(AwaitPod("mine-worker-0-a1").has_value());
  EXPECT_FALSE(observer_.End("mine-worker-0-a1").has_value());

  cluster_->Launch(GangSpec("theirs", 0, nodes));
  std::optional<TaskEnd> end = observer_.AwaitEnd("theirs-worker-0-a1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->reason, "StartFailed");
  EXPECT_THAT(end->message,
              AllOf(HasSubstr("service theirs"), HasSubstr("does not select this job's pods")));
  EXPECT_FALSE(server_->GetPod(kNs, "theirs-worker-0-a1").has_value());

  // Neither is deleted while a job uses it or when it is not Tessera's: the last launch of
  // "mine" ends after the failed one, so the worker has handled both ends when "mine" goes.
  server_->SetPodSucceeded(kNs, "mine-worker-0-a1");
  ASSERT_TRUE(observer_.AwaitEnd("mine-worker-0-a1").has_value());
  EXPECT_TRUE(Eventually([&] { return !server_->GetService(kNs, "mine").has_value(); }));
  EXPECT_TRUE(server_->GetService(kNs, "theirs").has_value());
  EXPECT_EQ(CountRequests(server_->requests(), "DELETE /api/v1/namespaces/tessera/services/theirs"),
            0u);
}

TEST_F(KubernetesClusterTest, RecoverDeletesTheServicesOfUnknownJobs) {
  const k8s::PodTemplate pod_template{.kube_namespace = kNs, .cluster = "k8s-test"};
  const std::vector<std::string> nodes = {"gpu-1", "cpu-1"};
  std::vector<KnownLaunch> known;
  for (int32_t rank : {0, 1}) {
    TaskLaunchSpec spec = GangSpec("live", rank, nodes);
    absl::StatusOr<Json> pod = k8s::BuildPod(
        spec, {.kube_namespace = kNs, .default_image = "busybox", .cluster = "k8s-test"}, {});
    ASSERT_TRUE(pod.ok()) << pod.status();
    (*pod)["status"] = {{"phase", "Running"}};
    server_->PutPod(*pod);
    known.push_back({.spec = spec, .start_time = TimePoint(Duration(1))});
  }
  server_->PutService(k8s::BuildRendezvousService("live", pod_template));
  server_->PutService(k8s::BuildRendezvousService("orphan", pod_template));
  server_->PutService(k8s::BuildRendezvousService(
      "elsewhere", {.kube_namespace = kNs, .cluster = "another-cluster"}));
  CreateCluster();
  EXPECT_THAT(cluster_->Recover(known),
              UnorderedElementsAre("live-worker-0-a1", "live-worker-1-a1"));
  EXPECT_TRUE(Eventually([&] { return !server_->GetService(kNs, "orphan").has_value(); }));
  EXPECT_THAT(server_->ServiceNames(kNs), UnorderedElementsAre("elsewhere", "live"));

  // The known job's Service is followed like one this agent created.
  server_->SetPodSucceeded(kNs, "live-worker-0-a1");
  server_->SetPodSucceeded(kNs, "live-worker-1-a1");
  EXPECT_TRUE(Eventually([&] { return !server_->GetService(kNs, "live").has_value(); }));
  EXPECT_THAT(server_->ServiceNames(kNs), ElementsAre("elsewhere"));
}

TEST_F(KubernetesClusterTest, BadTokenIsAClearError) {
  KubernetesClusterOptions options = Options();
  options.api.token = "wrong";
  absl::StatusOr<std::unique_ptr<KubernetesCluster>> cluster =
      KubernetesCluster::Create(std::move(options), &observer_);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(cluster.status().message()),
              AllOf(HasSubstr("GET /api/v1/nodes"), HasSubstr("401 Unauthorized"),
                    HasSubstr("credentials")));
}

TEST_F(KubernetesClusterTest, BadOptionsAreRefused) {
  KubernetesClusterOptions options = Options();
  options.api.kube_namespace = "Not_A_Namespace";
  EXPECT_EQ(KubernetesCluster::Create(options, &observer_).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = Options();
  options.api.server = "";
  EXPECT_EQ(KubernetesCluster::Create(options, &observer_).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = Options();
  options.usage_interval = Duration::zero();
  EXPECT_EQ(KubernetesCluster::Create(options, &observer_).status().message(),
            "kubernetes cluster k8s-test: usage_interval: must be > 0");
}

TEST_F(KubernetesClusterTest, UnreachableServerIsUnavailable) {
  KubernetesClusterOptions options = Options();
  const std::string url = server_->url();
  server_.reset();
  options.api.server = url;
  options.timeouts.connect = std::chrono::seconds(2);
  absl::StatusOr<std::unique_ptr<KubernetesCluster>> cluster =
      KubernetesCluster::Create(std::move(options), &observer_);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(cluster.status().message()), HasSubstr("connection failed"));
}

class KubernetesClusterTlsTest : public KubernetesClusterTest {
 protected:
  void SetUp() override {
    absl::StatusOr<k8s::testing::TestPki> pki = k8s::testing::MakeTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    StartServer({.token = "",
                 .tls_cert_pem = pki_.server_cert_pem,
                 .tls_key_pem = pki_.server_key_pem,
                 .client_ca_pem = pki_.ca_pem});
  }
  KubernetesClusterOptions TlsOptions() {
    KubernetesClusterOptions options = Options();
    options.api.token = "";
    options.api.ca_data = pki_.ca_pem;
    options.api.client_certificate_data = pki_.client_cert_pem;
    options.api.client_key_data = pki_.client_key_pem;
    return options;
  }
  k8s::testing::TestPki pki_;
};

TEST_F(KubernetesClusterTlsTest, ClientCertificateOverVerifiedTls) {
  ASSERT_THAT(server_->url(), HasSubstr("https://"));
  CreateCluster(TlsOptions());
  EXPECT_TRUE(FindNode("gpu-1").has_value());
  cluster_->Launch(Spec("tls-t-a1", "cpu-1"));
  EXPECT_TRUE(AwaitPod("tls-t-a1").has_value());
}

TEST_F(KubernetesClusterTlsTest, UntrustedServerCertificateIsRefused) {
  KubernetesClusterOptions options = TlsOptions();
  options.api.ca_data = "";
  absl::StatusOr<std::unique_ptr<KubernetesCluster>> cluster =
      KubernetesCluster::Create(std::move(options), &observer_);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(cluster.status().message()), HasSubstr("certificate"));
}

TEST_F(KubernetesClusterTlsTest, InsecureSkipVerifyAcceptsTheServer) {
  KubernetesClusterOptions options = TlsOptions();
  options.api.ca_data = "";
  options.api.insecure_skip_verify = true;
  CreateCluster(std::move(options));
  EXPECT_TRUE(FindNode("gpu-1").has_value());
}

TEST_F(KubernetesClusterTlsTest, WithoutAClientCertificateTheServerRefuses) {
  KubernetesClusterOptions options = TlsOptions();
  options.api.client_certificate_data = "";
  options.api.client_key_data = "";
  EXPECT_FALSE(KubernetesCluster::Create(std::move(options), &observer_).ok());
}

}  // namespace
}  // namespace tessera::agent

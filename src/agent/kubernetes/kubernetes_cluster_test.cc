// KubernetesCluster end to end against the fixture API server on loopback: inventory, usage,
// launch, the pod lifecycle as the observer hears it, cancel, watch recovery, Recover and logs.
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
#include "agent/kubernetes/testing/kubernetes_cluster_fixture.h"
#include "agent/kubernetes/testing/test_certificates.h"

namespace tessera::agent {
namespace {

using k8s::testing::CountRequests;
using k8s::testing::EnvOf;
using k8s::testing::Eventually;
using k8s::testing::GangSpec;
using k8s::testing::KubernetesClusterTest;
using k8s::testing::kNs;
using k8s::testing::Spec;
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

}  // namespace
}  // namespace tessera::agent

// Tessera over a Kubernetes API server, end to end: a real `tessera server` (no cluster of its
// own) and a real `tessera agent --backend kubernetes` whose kubeconfig points at the fixture
// API server (src/agent/kubernetes/testing/fake_api_server.h) running in this test. No
// Kubernetes API server can run here; the fixture speaks its REST wire format (list, watch,
// create, delete, resourceVersion) and the test plays the kubelet: it moves the pods the agent
// creates to Running and Succeeded. A gang submitted through Tessera becomes pods bound to the
// nodes Tessera chose with their GPU limits and its rendezvous (a headless Service, MASTER_ADDR
// and the rest) and succeeds; a cancel deletes the pod; a node that
// turns NotReady in Kubernetes is NotReady in Tessera.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/kubernetes/testing/fake_api_server.h"
#include "agent_process.h"
#include "agent_server_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rest_api.h"

namespace tessera::integration {
namespace {

using agent::k8s::testing::FakeApiServer;
using agent::k8s::testing::FakeNode;

constexpr char kCluster[] = "k8s";
constexpr char kNamespace[] = "tessera";
constexpr char kToken[] = "agent-sa-token";

// A job of `replicas` tasks with `gpus` GPUs each, on cluster `kCluster`.
Json KubernetesJob(std::string_view name, int replicas, int gpus) {
  return ClusterGpuJob(name, kCluster, replicas, gpus, "python train.py");
}

class AgentKubernetesE2eTest : public AgentServerTest {
 protected:
  AgentKubernetesE2eTest() : AgentServerTest("tessera-agent-k8s") {}

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FakeApiServer>> fixture =
        FakeApiServer::Start({.token = kToken});
    ASSERT_TRUE(fixture.ok()) << fixture.status();
    fixture_ = *std::move(fixture);
    for (const char* name : {"gpu-0", "gpu-1"}) {
      fixture_->AddNode({.name = name,
                         .gpus = 4,
                         .gpu_product = "NVIDIA-A100-SXM4-80GB",
                         .gpu_memory_mib = 81920});
    }
    std::ofstream(dir_.Sub("kubeconfig"))
        << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
        << "clusters: [{name: fixture, cluster: {server: \"" << fixture_->url() << "\"}}]\n"
        << "users: [{name: agent, user: {token: " << kToken << "}}]\n"
        << "contexts: [{name: test, context: {cluster: fixture, user: agent}}]\n";
    AgentServerTest::SetUp();
    if (HasFatalFailure()) return;
    agent_ = &AddAgent(kCluster, "kubernetes",
                       {"--kubeconfig", dir_.Sub("kubeconfig"), "--kube-namespace", kNamespace,
                        "--kube-image", "registry.example/train:1"});
    ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  }

  // Waits until the fixture holds `count` pods; their names.
  std::vector<std::string> AwaitPods(size_t count) const {
    std::vector<std::string> names;
    WaitUntil([&] {
      names = fixture_->PodNames(kNamespace);
      return names.size() >= count;
    });
    return names;
  }

  std::unique_ptr<FakeApiServer> fixture_;
  AgentProcess* agent_ = nullptr;
};

TEST_F(AgentKubernetesE2eTest, JobsRunAsPodsOnTheChosenNodesAndNodeStateFollowsKubernetes) {
  const RestApi api = Rest();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 2); }))
      << ClusterItem(api, kCluster).dump();
  EXPECT_EQ(ClusterItem(api, kCluster)["backend"], "kubernetes");
  for (const Json& node : ClusterNodes(api, kCluster)) {
    ASSERT_EQ(node["gpus"].size(), 4u) << node.dump();
  }

  // A gang of two 4-GPU tasks: one pod per task, bound to Tessera's node, with the GPU limit.
  const std::string id = SubmitOk(KubernetesJob("train", 2, 4));
  const std::vector<std::string> pods = AwaitPods(2);
  ASSERT_EQ(pods.size(), 2u);
  const Json placed = api.Job(id).body;
  std::set<std::string> chosen;
  for (const Json& task : placed["status"]["tasks"]) chosen.insert(task.value("node", ""));
  std::set<std::string> bound;
  for (const std::string& name : pods) {
    std::optional<Json> pod = fixture_->GetPod(kNamespace, name);
    ASSERT_TRUE(pod.has_value());
    bound.insert((*pod)["spec"].value("nodeName", ""));
    const Json& container = (*pod)["spec"]["containers"][0];
    EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "4") << pod->dump();
    EXPECT_EQ(container["image"], "registry.example/train:1") << pod->dump();
  }
  EXPECT_EQ(bound, chosen) << placed.dump();
  EXPECT_EQ(bound.size(), 2u);

  // The gang meets through its headless Service: one rank each, the same rank 0 address.
  const std::vector<std::string> services = fixture_->ServiceNames(kNamespace);
  ASSERT_EQ(services.size(), 1u);
  std::map<std::string, std::string> host_of_rank;
  std::set<std::string> master_addrs;
  for (const std::string& name : pods) {
    const Json pod = *fixture_->GetPod(kNamespace, name);
    std::map<std::string, std::string> env;
    for (const Json& var : pod["spec"]["containers"][0]["env"]) {
      env[var.value("name", "")] = var.value("value", "");
    }
    EXPECT_EQ(pod["spec"].value("subdomain", ""), services[0]) << pod.dump();
    EXPECT_EQ(env["WORLD_SIZE"], "2") << pod.dump();
    host_of_rank[env["RANK"]] = pod["spec"].value("hostname", "");
    master_addrs.insert(env["MASTER_ADDR"]);
  }
  ASSERT_EQ(host_of_rank.size(), 2u);
  EXPECT_TRUE(host_of_rank.contains("0") && host_of_rank.contains("1"));
  EXPECT_EQ(master_addrs, (std::set<std::string>{host_of_rank["0"] + "." + services[0]}));

  // The kubelet runs them: Running, then Succeeded.
  for (const std::string& name : pods) fixture_->SetPodRunning(kNamespace, name);
  ASSERT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");
  for (const std::string& name : pods) fixture_->SetPodSucceeded(kNamespace, name);
  const Json done = api.WaitForEnd(id);
  ASSERT_EQ(done["status"]["phase"], "Succeeded") << done.dump();
  EXPECT_EQ(done["status"]["cluster"], kCluster);
  EXPECT_TRUE(WaitUntil([&] { return fixture_->ServiceNames(kNamespace).empty(); }));

  // A cancel deletes the pod.
  const std::string long_id = SubmitOk(KubernetesJob("long", 1, 1));
  std::string long_pod;
  ASSERT_TRUE(WaitUntil([&] {
    for (const std::string& name : fixture_->PodNames(kNamespace)) {
      if (std::find(pods.begin(), pods.end(), name) == pods.end()) long_pod = name;
    }
    return !long_pod.empty();
  }));
  fixture_->SetPodRunning(kNamespace, long_pod);
  ASSERT_EQ(api.WaitForPhase(long_id, {"Running"})["status"]["phase"], "Running");
  ASSERT_EQ(api.Post("/api/v1/jobs/" + long_id + "/cancel", "").status, 200);
  ASSERT_TRUE(WaitUntil([&] {
    fixture_->FinishDeletions();
    return !fixture_->GetPod(kNamespace, long_pod).has_value();
  }));
  EXPECT_EQ(api.WaitForEnd(long_id)["status"]["phase"], "Cancelled");

  // A node that turns NotReady in Kubernetes is NotReady in Tessera.
  fixture_->SetNodeReady("gpu-1", false);
  EXPECT_TRUE(WaitUntil([&] { return NodeReady(api, kCluster, "gpu-1", false); }));
  fixture_->SetNodeReady("gpu-1", true);
  EXPECT_TRUE(WaitUntil([&] { return NodeReady(api, kCluster, "gpu-1", true); }));
}

}  // namespace
}  // namespace tessera::integration

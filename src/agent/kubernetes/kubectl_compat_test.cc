// Keeps the fixture API server honest: the real kubectl lists, watches, creates and deletes
// through it, reads a pod's log and the node metrics (kubectl top), with the same kubeconfig
// (TLS, a CA, a bearer token) that LoadKubeconfig reads for KubernetesCluster. Skipped when
// kubectl is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "agent/kubernetes/api_access.h"
#include "agent/kubernetes/kubernetes_cluster.h"
#include "agent/kubernetes/testing/fake_api_server.h"
#include "agent/kubernetes/testing/test_certificates.h"

namespace tessera::agent {
namespace {

namespace fs = std::filesystem;
using k8s::testing::FakeApiServer;
using ::testing::AllOf;
using ::testing::HasSubstr;

struct Output {
  int status = -1;
  std::string text;
};

class KubectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("kubectl version --client >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "kubectl is not installed";
    }
    absl::StatusOr<k8s::testing::TestPki> pki = k8s::testing::MakeTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status();
    absl::StatusOr<std::unique_ptr<FakeApiServer>> server = FakeApiServer::Start(
        {.tls_cert_pem = pki->server_cert_pem, .tls_key_pem = pki->server_key_pem});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->AddNode({.name = "gpu-1", .gpus = 8, .gpu_product = "NVIDIA-H100-80GB-HBM3"});
    std::string pattern = (fs::temp_directory_path() / "tessera-kubectl-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    kubeconfig_ = dir_ + "/config";
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\ncurrent-context: fixture\n"
                               << "clusters:\n- name: fixture\n  cluster:\n    server: "
                               << server_->url() << "\n    certificate-authority-data: "
                               << absl::Base64Escape(pki->ca_pem) << "\n"
                               << "users:\n- name: agent\n  user:\n    token: test-token\n"
                               << "contexts:\n- name: fixture\n  context: {cluster: fixture, "
                                  "user: agent, namespace: tessera}\n";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  Output Kubectl(const std::string& args) {
    const std::string command =
        "KUBECONFIG=" + kubeconfig_ + " kubectl --request-timeout=20s " + args + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    Output out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.text.append(buffer, n);
    out.status = pclose(pipe);
    return out;
  }

  std::unique_ptr<FakeApiServer> server_;
  std::string dir_;
  std::string kubeconfig_;
};

TEST_F(KubectlTest, ListsNodes) {
  Output nodes = Kubectl("get nodes -o name");
  EXPECT_EQ(nodes.status, 0) << nodes.text;
  EXPECT_EQ(nodes.text, "node/gpu-1\n");
  Output json = Kubectl("get node gpu-1 -o jsonpath={.status.allocatable.nvidia\\\\.com/gpu}");
  EXPECT_EQ(json.status, 0) << json.text;
  EXPECT_EQ(json.text, "8");
}

TEST_F(KubectlTest, CreatesWatchesAndDeletesPods) {
  const std::string pod = dir_ + "/pod.yaml";
  std::ofstream(pod) << "apiVersion: v1\nkind: Pod\nmetadata: {name: hello, labels: {app: x}}\n"
                        "spec:\n  nodeName: gpu-1\n  restartPolicy: Never\n"
                        "  containers: [{name: task, image: busybox, command: [echo, hi]}]\n";
  // The fixture serves no OpenAPI schema for client-side validation.
  Output created = Kubectl("create --validate=false -f " + pod);
  ASSERT_EQ(created.status, 0) << created.text;
  EXPECT_EQ(created.text, "pod/hello created\n");
  EXPECT_TRUE(server_->GetPod("tessera", "hello").has_value());
  Output again = Kubectl("create --validate=false -f " + pod);
  EXPECT_NE(again.status, 0);
  EXPECT_THAT(again.text, HasSubstr("AlreadyExists"));

  Output listed = Kubectl("get pods -l app=x -o jsonpath={.items[*].spec.nodeName}");
  EXPECT_EQ(listed.text, "gpu-1");
  EXPECT_EQ(Kubectl("get pods -l app=y -o name").text, "");

  server_->SetPodRunning("tessera", "hello");
  server_->AppendPodLog("tessera", "hello", "hi\n");
  Output log = Kubectl("logs hello");
  EXPECT_EQ(log.status, 0) << log.text;
  EXPECT_EQ(log.text, "hi\n");

  // A watch started from the current state sees the phase change and the deletion.
  const std::string command = "KUBECONFIG=" + kubeconfig_ +
                              " kubectl get pods --watch --output-watch-events "
                              "-o jsonpath='{.type} {.object.status.phase}{\"\\n\"}' 2>&1";
  FILE* watch = popen(command.c_str(), "r");
  char line[512];
  ASSERT_NE(fgets(line, sizeof(line), watch), nullptr);
  EXPECT_STREQ(line, "ADDED Running\n");
  server_->SetPodSucceeded("tessera", "hello");
  ASSERT_NE(fgets(line, sizeof(line), watch), nullptr);
  EXPECT_STREQ(line, "MODIFIED Succeeded\n");
  Output deleted = Kubectl("delete pod hello");
  EXPECT_EQ(deleted.status, 0) << deleted.text;
  ASSERT_NE(fgets(line, sizeof(line), watch), nullptr);
  EXPECT_STREQ(line, "DELETED Succeeded\n");
  server_->CloseWatches();  // ends kubectl's watch; it then exits
  pclose(watch);
  EXPECT_FALSE(server_->GetPod("tessera", "hello").has_value());
}

// kubectl top reads the metrics API as the backend does (and finds it missing as it would on a
// cluster without metrics-server).
TEST_F(KubectlTest, TopNodesReadsTheNodeMetrics) {
  Output missing = Kubectl("top nodes");
  EXPECT_NE(missing.status, 0);
  EXPECT_THAT(missing.text, HasSubstr("Metrics API not available"));
  server_->SetNodeMetrics("gpu-1", "123456789n", "1048576Ki");
  Output top = Kubectl("top nodes --no-headers");
  EXPECT_EQ(top.status, 0) << top.text;
  EXPECT_THAT(top.text, AllOf(HasSubstr("gpu-1"), HasSubstr("124m"), HasSubstr("1024Mi")));
}

// The kubeconfig kubectl uses is one the backend reads too.
TEST_F(KubectlTest, TheSameKubeconfigDrivesTheBackend) {
  absl::StatusOr<KubernetesApiAccess> access = LoadKubeconfig(kubeconfig_);
  ASSERT_TRUE(access.ok()) << access.status();
  class Observer : public TaskObserver {
    void OnTaskStarted(std::string_view, TimePoint) override {}
    void OnTaskEnded(const TaskEnd&) override {}
  } observer;
  absl::StatusOr<std::unique_ptr<KubernetesCluster>> cluster =
      KubernetesCluster::Create({.name = "fixture", .api = *access}, &observer);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ((*cluster)->Inventory().size(), 1u);
  EXPECT_EQ((*cluster)->Inventory()[0].gpus.size(), 8u);
}

}  // namespace
}  // namespace tessera::agent

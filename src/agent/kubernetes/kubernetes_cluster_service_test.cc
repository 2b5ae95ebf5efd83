// KubernetesCluster end to end against the fixture API server on loopback: multi-task jobs and
// their headless services, credentials, bad options and TLS.
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

#include "agent/kubernetes/api_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/kubernetes/testing/fake_api_server.h"

namespace tessera::agent::k8s {
namespace {

using testing::FakeApiServer;
using ::testing::HasSubstr;

class ApiClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<FakeApiServer>> server = FakeApiServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->AddNode({.name = "n1"});
  }
  std::unique_ptr<KubernetesApiClient> Client(KubernetesApiAccess access) {
    absl::StatusOr<std::unique_ptr<KubernetesApiClient>> client =
        KubernetesApiClient::Create(access);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }
  KubernetesApiAccess Access() { return {.server = server_->url(), .token = "test-token"}; }

  std::unique_ptr<FakeApiServer> server_;
};

TEST_F(ApiClientTest, ServerUrls) {
  for (std::string bad :
       {"10.0.0.1:6443", "ftp://x", "https://", "https://h:0", "https://h:x", "https://[::1"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(KubernetesApiClient::Create({.server = bad}).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  for (std::string good : {"https://h", "https://[::1]:6443", "http://h:8080/prefix/"}) {
    EXPECT_TRUE(KubernetesApiClient::Create({.server = good}).ok()) << good;
  }
  EXPECT_FALSE(
      KubernetesApiClient::Create({.server = "https://h", .ca_file = "/nonexistent"}).ok());
  EXPECT_THAT(std::string(KubernetesApiClient::Create({.server = "https://h",
                                                       .client_certificate_data = "x",
                                                       .client_key_data = "y"})
                              .status()
                              .message()),
              HasSubstr("client-certificate: not a PEM certificate"));
}

TEST_F(ApiClientTest, GetPostDelete) {
  std::unique_ptr<KubernetesApiClient> client = Client(Access());
  absl::StatusOr<Json> nodes = client->Get("/api/v1/nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ((*nodes)["items"][0]["metadata"]["name"], "n1");
  EXPECT_EQ(client->Get("/api/v1/nodes/n2").status().code(), absl::StatusCode::kNotFound);

  const Json pod = {{"metadata", {{"name", "p1"}}},
                    {"spec", {{"containers", {{{"name", "task"}, {"image", "busybox"}}}}}}};
  absl::StatusOr<Json> created = client->Post("/api/v1/namespaces/ns/pods", pod);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["status"]["phase"], "Pending");
  EXPECT_EQ(client->Post("/api/v1/namespaces/ns/pods", pod).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(client->Delete("/api/v1/namespaces/ns/pods/p1", {{"gracePeriodSeconds", "0"}}).ok());
  EXPECT_FALSE(server_->GetPod("ns", "p1").has_value());
  EXPECT_EQ(client->Delete("/api/v1/namespaces/ns/pods/p1").status().code(),
            absl::StatusCode::kNotFound);
}

// The fixture's services, through the client: the verbs the rendezvous uses.
TEST_F(ApiClientTest, ServicesCreateGetListDelete) {
  std::unique_ptr<KubernetesApiClient> client = Client(Access());
  const std::string path = "/api/v1/namespaces/ns/services";
  auto service = [](const std::string& name, const std::string& cluster) {
    return Json{{"metadata", {{"name", name}, {"labels", {{"tessera.io/cluster", cluster}}}}},
                {"spec",
                 {{"clusterIP", "None"},
                  {"selector", {{"tessera.io/job", name}}},
                  {"ports", {{{"name", "rendezvous"}, {"port", 29500}}}}}}};
  };
  absl::StatusOr<Json> created = client->Post(path, service("s1", "a"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["kind"], "Service");
  EXPECT_EQ((*created)["metadata"]["namespace"], "ns");
  EXPECT_FALSE((*created)["metadata"].value("uid", "").empty());
  EXPECT_EQ((*created)["spec"]["clusterIP"], "None");  // headless: kept
  Json with_ip = service("s2", "b");
  with_ip["spec"].erase("clusterIP");
  absl::StatusOr<Json> other = client->Post(path, with_ip);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_THAT((*other)["spec"]["clusterIP"].get<std::string>(), ::testing::StartsWith("10.96."));

  absl::Status duplicate = client->Post(path, service("s1", "a")).status();
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(duplicate.message()), HasSubstr("services \"s1\" already exists"));
  for (const char* bad : {"1s", "S1", "s_1", "s1-"}) {
    SCOPED_TRACE(bad);
    absl::Status invalid = client->Post(path, service(bad, "a")).status();
    EXPECT_EQ(invalid.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(invalid.message()), HasSubstr("metadata.name"));
  }
  Json bad_port = service("s3", "a");
  bad_port["spec"]["ports"][0]["port"] = 70000;
  EXPECT_THAT(std::string(client->Post(path, bad_port).status().message()),
              HasSubstr("spec.ports[0].port"));

  absl::StatusOr<Json> one = client->Get(path + "/s1");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)["spec"]["selector"]["tessera.io/job"], "s1");
  absl::StatusOr<Json> list = client->Get(path, {{"labelSelector", "tessera.io/cluster=b"}});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ((*list)["kind"], "ServiceList");
  ASSERT_EQ((*list)["items"].size(), 1u);
  EXPECT_EQ((*list)["items"][0]["metadata"]["name"], "s2");
  EXPECT_EQ((*client->Get("/api/v1/services"))["items"].size(), 2u);
  EXPECT_EQ((*client->Get("/api/v1/namespaces/other/services"))["items"].size(), 0u);

  EXPECT_TRUE(client->Delete(path + "/s1").ok());
  EXPECT_FALSE(server_->GetService("ns", "s1").has_value());
  EXPECT_EQ(client->Get(path + "/s1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client->Delete(path + "/s1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(server_->ServiceNames("ns"), std::vector<std::string>{"s2"});
}

TEST_F(ApiClientTest, PathPrefixAndQueryEncoding) {
  KubernetesApiAccess access = Access();
  access.server += "/";
  std::unique_ptr<KubernetesApiClient> client = Client(access);
  ASSERT_TRUE(client->Get("/api/v1/pods", {{"labelSelector", "a=b,!c"}}).ok());
  EXPECT_EQ(server_->requests().back(), "GET /api/v1/pods?labelSelector=a%3Db%2C%21c");
  EXPECT_EQ(PercentEncode("a b/c~"), "a%20b%2Fc~");
}

TEST_F(ApiClientTest, TheTokenFileIsReadForEveryRequest) {
  std::string path = (std::filesystem::temp_directory_path() / "tessera-token-XXXXXX").string();
  close(mkstemp(path.data()));
  std::ofstream(path) << "test-token\n";
  KubernetesApiAccess access = Access();
  access.token = "";
  access.token_file = path;
  std::unique_ptr<KubernetesApiClient> client = Client(access);
  EXPECT_TRUE(client->Get("/api/v1/nodes").ok());
  std::ofstream(path) << "rotated-and-wrong";
  EXPECT_EQ(client->Get("/api/v1/nodes").status().code(), absl::StatusCode::kUnauthenticated);
  std::filesystem::remove(path);
  EXPECT_THAT(std::string(client->Get("/api/v1/nodes").status().message()),
              HasSubstr("cannot be read"));
}

TEST_F(ApiClientTest, WatchStreamsLinesUntilStopped) {
  std::unique_ptr<KubernetesApiClient> client = Client(Access());
  std::vector<std::string> lines;
  std::mutex mu;
  std::thread watcher([&] {
    absl::Status status = client->Watch("/api/v1/nodes", {{"watch", "1"}, {"resourceVersion", "0"}},
                                        [&](std::string_view line) {
                                          std::lock_guard<std::mutex> lock(mu);
                                          lines.emplace_back(line);
                                          return true;
                                        });
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  });
  server_->AddNode({.name = "n2"});
  for (int i = 0; i < 6000; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (lines.size() >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  client->Stop();
  watcher.join();
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr(R"("type":"ADDED")"));
  EXPECT_THAT(lines[1], HasSubstr(R"("name":"n2")"));
  EXPECT_EQ(client->Get("/api/v1/nodes").status().code(), absl::StatusCode::kCancelled);
}

TEST_F(ApiClientTest, WatchFromAnExpiredVersionSaysGone) {
  server_->AddNode({.name = "n2"});
  server_->CompactHistory();
  std::unique_ptr<KubernetesApiClient> client = Client(Access());
  std::vector<std::string> lines;
  absl::Status status = client->Watch("/api/v1/nodes", {{"watch", "1"}, {"resourceVersion", "1"}},
                                      [&](std::string_view line) {
                                        lines.emplace_back(line);
                                        return true;
                                      });
  EXPECT_TRUE(status.ok()) << status;
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr(R"("code":410)"));
}

}  // namespace
}  // namespace tessera::agent::k8s

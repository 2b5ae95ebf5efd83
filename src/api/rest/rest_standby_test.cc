// RestServer as a standby's REST port, over real HTTP on loopback: alive but not ready, serving
// the job reads of its service, and sending everything else to the leader with a 307 that a
// client follows with the same method and body.
#include <httplib.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "api/rest/rest_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/auth/authenticator.h"
#include "server/testing/in_memory_job_service.h"
#include "spec/jobspec.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::api {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kJob[] = R"({"apiVersion": "tessera/v1", "kind": "Job",
  "metadata": {"name": "train"},
  "spec": {"tasks": [{"name": "main", "resources": {"cpu": "1"}, "command": ["true"]}]}})";

class RestStandbyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path() / "tessera-standby-XXXXXX";
    dir_ = mkdtemp(pattern.data());
    auto store = store::SqliteStore::Open({.data_dir = dir_});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto auth = server::Authenticator::Create(store_.get());
    ASSERT_TRUE(auth.ok()) << auth.status();
    auth_ = *std::move(auth);
    token_ = auth_->IssueToken("team-a", server::Role::kTenant)->token;
    absl::StatusOr<spec::JobDocument> job = spec::ParseJobDocument(kJob);
    ASSERT_TRUE(job.ok()) << job.status();
    ASSERT_TRUE(service_.Submit({.tenant = "team-a"}, *job).ok());
    server_ =
        std::make_unique<RestServer>(RestServer::Options{.service = &service_,
                                                         .auth = auth_.get(),
                                                         .threads = 4,
                                                         .max_watch_streams = 1,
                                                         .standby_leader = [this] {
                                                           std::lock_guard<std::mutex> lock(mu_);
                                                           return leader_;
                                                         }});
    ASSERT_TRUE(server_->Start("127.0.0.1", 0).ok());
  }
  void TearDown() override {
    server_.reset();
    service_.Shutdown();
    auth_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void SetLeader(std::string url) {
    std::lock_guard<std::mutex> lock(mu_);
    leader_ = std::move(url);
  }
  httplib::Client Client() {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_bearer_token_auth(token_);
    return client;
  }

  std::string dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<server::Authenticator> auth_;
  std::string token_;
  SimulatedClock clock_{TimePoint(Duration(1'700'000'000'000))};
  server::testing::InMemoryJobService service_{&clock_};
  std::mutex mu_;
  std::string leader_;
  std::unique_ptr<RestServer> server_;
};

TEST_F(RestStandbyTest, IsAliveButNotReady) {
  httplib::Client client = Client();
  httplib::Result health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  SetLeader("http://127.0.0.1:1");
  httplib::Result ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_THAT(ready->body, HasSubstr("a standby: the leader is http://127.0.0.1:1"));
}

TEST_F(RestStandbyTest, ServesTheReadsOfJobs) {
  SetLeader("http://127.0.0.1:1");
  httplib::Client client = Client();
  httplib::Result list = client.Get("/api/v1/jobs");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200) << list->body;
  EXPECT_EQ(list->get_header_value("X-Tessera-Leader"), "http://127.0.0.1:1");
  const Json items = Json::parse(list->body)["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["metadata"]["name"], "train");

  httplib::Result job = client.Get("/api/v1/jobs/1");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->status, 200) << job->body;
  EXPECT_EQ(Json::parse(job->body)["metadata"]["id"], "1");
  httplib::Result events = client.Get("/api/v1/jobs/1/events");
  ASSERT_TRUE(events);
  EXPECT_EQ(events->status, 200) << events->body;
  EXPECT_EQ(Json::parse(events->body)["items"][0]["type"], "Submitted");

  // Reads are authenticated as on the leader; a standby serves them without a leader too.
  SetLeader("");
  httplib::Client anonymous("127.0.0.1", server_->port());
  httplib::Result refused = anonymous.Get("/api/v1/jobs");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  httplib::Result missing = client.Get("/api/v1/jobs/2");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(RestStandbyTest, WithoutALeaderAsksToRetryWhatItDoesNotServe) {
  httplib::Result result = Client().Post("/api/v1/jobs", kJob, "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 503);
  EXPECT_EQ(result->get_header_value("Retry-After"), "1");
  EXPECT_EQ(result->get_header_value("X-Tessera-Standby"), "true");
  EXPECT_THAT(result->body, HasSubstr("no leader"));
}

TEST_F(RestStandbyTest, SendsEverythingElseToTheLeader) {
  SetLeader("http://127.0.0.1:1");
  httplib::Client client = Client();
  for (const char* path : {"/api/v1/jobs/1/logs", "/api/v1/jobs/1/explain", "/api/v1/watch",
                           "/api/v1/queues", "/api/v1/nodes", "/metrics", "/no/such/route"}) {
    httplib::Result result = client.Get(path);
    ASSERT_TRUE(result) << path;
    EXPECT_EQ(result->status, 307) << path;
    EXPECT_EQ(result->get_header_value("Location"), std::string("http://127.0.0.1:1") + path);
  }
  httplib::Result cancel = client.Delete("/api/v1/jobs/1");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 307);
}

TEST_F(RestStandbyTest, AClientFollowsTheRedirectWithItsMethodAndBody) {
  httplib::Server leader;
  std::string received;
  leader.Post("/api/v1/jobs", [&](const httplib::Request& req, httplib::Response& res) {
    received = req.body + " " + req.get_param_value("dryRun");
    res.status = 201;
    res.set_content("{\"id\":\"1\"}", "application/json");
  });
  const int port = leader.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { leader.listen_after_bind(); });
  while (!leader.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  SetLeader("http://127.0.0.1:" + std::to_string(port));

  httplib::Client client = Client();
  httplib::Result redirect =
      client.Post("/api/v1/jobs?dryRun=true", "{\"a\":1}", "application/json");
  ASSERT_TRUE(redirect);
  EXPECT_EQ(redirect->status, 307);
  EXPECT_EQ(redirect->get_header_value("Location"),
            "http://127.0.0.1:" + std::to_string(port) + "/api/v1/jobs?dryRun=true");

  client.set_follow_location(true);
  httplib::Result followed =
      client.Post("/api/v1/jobs?dryRun=true", "{\"a\":1}", "application/json");
  ASSERT_TRUE(followed);
  EXPECT_EQ(followed->status, 201);
  EXPECT_EQ(received, "{\"a\":1} true");
  leader.stop();
  serving.join();
}

TEST_F(RestStandbyTest, StopFreesThePortForTheLeadersServer) {
  const int port = server_->port();
  server_->Stop();
  httplib::Server next;
  EXPECT_TRUE(next.bind_to_port("127.0.0.1", port));
}

}  // namespace
}  // namespace tessera::api

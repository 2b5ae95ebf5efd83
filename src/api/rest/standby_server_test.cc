// StandbyServer over real HTTP on loopback: a standby is alive but not ready, and sends every
// API request to the leader with a 307 that a client follows with the same method and body.
#include "api/rest/standby_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

namespace tessera::api {
namespace {

using ::testing::HasSubstr;

class StandbyServerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(standby_.Start("127.0.0.1", 0).ok()); }
  httplib::Client Client() { return httplib::Client("127.0.0.1", standby_.port()); }

  StandbyServer standby_;
};

TEST_F(StandbyServerTest, IsAliveButNotReady) {
  httplib::Client client = Client();
  httplib::Result health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  standby_.SetLeader("http://127.0.0.1:1");
  httplib::Result ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_THAT(ready->body, HasSubstr("http://127.0.0.1:1"));
}

TEST_F(StandbyServerTest, WithoutALeaderAsksToRetry) {
  httplib::Result result = Client().Post("/api/v1/jobs", "{}", "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 503);
  EXPECT_EQ(result->get_header_value("Retry-After"), "1");
  EXPECT_EQ(result->get_header_value("X-Tessera-Standby"), "true");
  EXPECT_THAT(result->body, HasSubstr("no leader"));
}

TEST_F(StandbyServerTest, SendsRequestsToTheLeaderWithTheirMethodAndBody) {
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
  standby_.SetLeader("http://127.0.0.1:" + std::to_string(port));

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

TEST_F(StandbyServerTest, StopFreesThePortForTheLeadersServer) {
  const int port = standby_.port();
  standby_.Stop();
  httplib::Server next;
  EXPECT_TRUE(next.bind_to_port("127.0.0.1", port));
}

}  // namespace
}  // namespace tessera::api

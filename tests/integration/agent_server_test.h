// AgentServerTest: the fixture of the agent integration tests. SetUp starts a real `tessera
// server` with no cluster of its own (WriteAgentServerConfig: agents heartbeat every 200 ms, a
// silent cluster is Unreachable after 600 ms, its tasks lost 2 s later) in a temporary
// directory; a test adds `tessera agent` processes with AddAgent. A restarted server serves gRPC
// on its first port, so the agents find it again. When a test fails, TearDown
// prints the tail of the server's log and of every agent's. Agents are stopped before the
// server.
//
// A derived fixture sets agents_extra_ (lines of the `agents:` section), lost_grace_ or
// config_extra_ (top-level YAML) before calling AgentServerTest::SetUp, and returns when that has a fatal
// failure (HasFatalFailure()).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent_process.h"
#include "gtest/gtest.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"

namespace tessera::integration {

class AgentServerTest : public ::testing::Test {
 protected:
  explicit AgentServerTest(std::string_view dir_prefix) : dir_(dir_prefix) {}

  void SetUp() override;
  void TearDown() override;

  // An agent of `cluster` on this server with the admin token, logging into the test's
  // directory; not started. It lives until the test ends.
  AgentProcess& AddAgent(std::string cluster, std::string backend,
                         std::vector<std::string> extra_args = {}, std::string data_dir = "");

  // The REST API as the admin.
  RestApi Rest() const;
  // POST /api/v1/jobs, expecting 201; the new job's id ("" on failure).
  std::string SubmitOk(const Json& job) const;
  // GET /api/v1/jobs/{id}/events: the items (an empty array on failure).
  Json Events(const std::string& id) const;

  TempDir dir_;
  std::string agents_extra_;
  std::string lost_grace_ = "2s";
  std::string config_extra_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

}  // namespace tessera::integration

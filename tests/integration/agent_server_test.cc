#include "agent_server_test.h"

#include <fstream>
#include <iostream>
#include <utility>

namespace tessera::integration {
namespace {

std::string Tail(const std::string& log) {
  return log.substr(log.size() > 6000 ? log.size() - 6000 : 0);
}

}  // namespace

void AgentServerTest::SetUp() {
  const std::string config = dir_.Sub("server.yaml");
  WriteAgentServerConfig(config, agents_extra_, lost_grace_);
  std::ofstream(config, std::ios::app) << config_extra_;
  server_ = std::make_unique<ServerProcess>(ServerOptions{.data_dir = dir_.Sub("data"),
                                                          .log_dir = dir_.path(),
                                                          .config_path = config,
                                                          .extra_args = {"--rate-limit", "0"},
                                                          .keep_grpc_port = true});
  const absl::Status started = server_->Start();
  ASSERT_TRUE(started.ok()) << started;
}

void AgentServerTest::TearDown() {
  if (HasFailure() && server_ != nullptr) {
    std::cerr << "--- server log (tail) ---\n" << Tail(server_->Log());
    for (const auto& agent : agents_) {
      std::cerr << "--- agent " << agent->options().cluster << " log (tail) ---\n"
                << Tail(agent->Log());
    }
  }
  agents_.clear();
  server_.reset();
}

AgentProcess& AgentServerTest::AddAgent(std::string cluster, std::string backend,
                                        std::vector<std::string> extra_args,
                                        std::string data_dir) {
  agents_.push_back(std::make_unique<AgentProcess>(
      AgentProcessOptions{.server = server_->grpc_target(),
                          .cluster = std::move(cluster),
                          .backend = std::move(backend),
                          .token = server_->admin_token(),
                          .log_dir = dir_.path(),
                          .data_dir = std::move(data_dir),
                          .extra_args = std::move(extra_args)}));
  return *agents_.back();
}

RestApi AgentServerTest::Rest() const {
  return RestApi(server_->host(), server_->http_port(), server_->admin_token());
}

std::string AgentServerTest::SubmitOk(const Json& job) const {
  const HttpAnswer answer = Rest().Submit(job);
  EXPECT_EQ(answer.status, 201) << answer.text;
  return answer.body["metadata"].value("id", "");
}

Json AgentServerTest::Events(const std::string& id) const {
  const HttpAnswer answer = Rest().Get("/api/v1/jobs/" + id + "/events");
  return answer.status == 200 ? answer.body["items"] : Json::array();
}

}  // namespace tessera::integration

// Agent sessions over TLS: a real `tessera server` whose gRPC port serves TLS (grpcTls, with a
// self-signed certificate that openssl makes for 127.0.0.1) and real `tessera agent --backend
// sim` processes. An agent given the certificate as its CA (--tls-ca) registers and its nodes
// appear; a plaintext agent at the same port never registers and says to give --tls-ca. Every
// wait is bounded and generous; nothing asserts on timing.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent_process.h"
#include "gtest/gtest.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"

namespace tessera::integration {
namespace {

class AgentTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string make_cert = absl::StrCat(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 ",
        "-addext subjectAltName=IP:127.0.0.1 -keyout '", dir_.Sub("key.pem"), "' -out '",
        dir_.Sub("cert.pem"), "' > '", dir_.Sub("openssl.log"), "' 2>&1");
    ASSERT_EQ(std::system(make_cert.c_str()), 0) << make_cert;
    WriteAgentServerConfig(dir_.Sub("server.yaml"));
    std::ofstream(dir_.Sub("server.yaml"), std::ios::app)
        << "grpcTls:\n"
        << "  certFile: " << dir_.Sub("cert.pem") << "\n"
        << "  keyFile: " << dir_.Sub("key.pem") << "\n";
    server_ = std::make_unique<ServerProcess>(ServerOptions{.data_dir = dir_.Sub("data"),
                                                            .log_dir = dir_.path(),
                                                            .config_path = dir_.Sub("server.yaml")});
    const absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }

  void TearDown() override {
    if (!HasFailure() || server_ == nullptr) return;
    std::cerr << "--- server log (tail) ---\n" << Tail(server_->Log());
  }

  static std::string Tail(const std::string& log) {
    return log.substr(log.size() > 6000 ? log.size() - 6000 : 0);
  }

  AgentProcessOptions Agent(const std::string& cluster) const {
    return AgentProcessOptions{.server = server_->grpc_target(),
                               .cluster = cluster,
                               .backend = "sim",
                               .token = server_->admin_token(),
                               .log_dir = dir_.path(),
                               .extra_args = {"--sim-node-count", "2"}};
  }

  TempDir dir_{"tessera-agent-tls"};
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(AgentTlsTest, AnAgentTrustingTheServersCertificateRegisters) {
  AgentProcessOptions options = Agent("tls-a");
  options.extra_args.insert(options.extra_args.end(), {"--tls-ca", dir_.Sub("cert.pem")});
  AgentProcess agent(options);
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  const RestApi api(server_->host(), server_->http_port(), server_->admin_token());
  EXPECT_TRUE(WaitUntil([&] { return ClusterIs(api, "tls-a", true, 2); }))
      << ClusterItem(api, "tls-a").dump();
}

TEST_F(AgentTlsTest, APlaintextAgentAtATlsPortIsToldToGiveTheCa) {
  AgentProcess agent(Agent("plain"));
  EXPECT_FALSE(agent.Start(std::chrono::seconds(5)).ok());
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(agent.Log(), "give --tls-ca"); }))
      << agent.Log();
  const RestApi api(server_->host(), server_->http_port(), server_->admin_token());
  EXPECT_TRUE(ClusterItem(api, "plain").is_null());
}

}  // namespace
}  // namespace tessera::integration

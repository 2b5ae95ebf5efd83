// Agent sessions over TLS: a real `tessera server` whose gRPC port serves TLS (grpcTls, with a
// self-signed certificate that openssl makes for 127.0.0.1) and real `tessera agent --backend
// sim` processes. An agent given the certificate as its CA (--tls-ca) registers and its nodes
// appear; a plaintext agent at the same port never registers and says to give --tls-ca. Every
// wait is bounded and generous; nothing asserts on timing.
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent_process.h"
#include "agent_server_test.h"
#include "gtest/gtest.h"
#include "rest_api.h"

namespace tessera::integration {
namespace {

class AgentTlsTest : public AgentServerTest {
 protected:
  AgentTlsTest() : AgentServerTest("tessera-agent-tls") {}

  void SetUp() override {
    const std::string make_cert = absl::StrCat(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 ",
        "-addext subjectAltName=IP:127.0.0.1 -keyout '", dir_.Sub("key.pem"), "' -out '",
        dir_.Sub("cert.pem"), "' > '", dir_.Sub("openssl.log"), "' 2>&1");
    ASSERT_EQ(std::system(make_cert.c_str()), 0) << make_cert;
    config_extra_ = absl::StrCat("grpcTls:\n  certFile: ", dir_.Sub("cert.pem"),
                                 "\n  keyFile: ", dir_.Sub("key.pem"), "\n");
    AgentServerTest::SetUp();
  }
};

TEST_F(AgentTlsTest, AnAgentTrustingTheServersCertificateRegisters) {
  AgentProcess& agent =
      AddAgent("tls-a", "sim", {"--sim-node-count", "2", "--tls-ca", dir_.Sub("cert.pem")});
  ASSERT_TRUE(agent.Start().ok()) << agent.Log();
  const RestApi api = Rest();
  EXPECT_TRUE(WaitUntil([&] { return ClusterIs(api, "tls-a", true, 2); }))
      << ClusterItem(api, "tls-a").dump();
}

TEST_F(AgentTlsTest, APlaintextAgentAtATlsPortIsToldToGiveTheCa) {
  AgentProcess& agent = AddAgent("plain", "sim", {"--sim-node-count", "2"});
  EXPECT_FALSE(agent.Start(std::chrono::seconds(5)).ok());
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(agent.Log(), "give --tls-ca"); }))
      << agent.Log();
  EXPECT_TRUE(ClusterItem(Rest(), "plain").is_null());
}

}  // namespace
}  // namespace tessera::integration

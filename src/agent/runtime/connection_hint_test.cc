#include "agent/runtime/connection_hint.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;

TEST(ConnectionHintTest, NamesTheLikelyMismatch) {
  struct Case {
    std::string message;  // as gRPC words it
    bool tls;
    std::string hint;  // "" for none
  };
  for (const Case& c : std::vector<Case>{
           {"Socket closed", false, "give --tls-ca"},
           {"Socket closed", true, ""},
           {"failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9090: "
            "Ssl handshake failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version "
            "number",
            true, "does not serve TLS: drop --tls-ca"},
           {"failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9090: "
            "Ssl handshake failed: SSL_ERROR_SSL: error:0A000086:SSL routines::certificate "
            "verify failed",
            true, "not signed by the --tls-ca given"},
           {"failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:8080: "
            "Trying to connect an http1.x server",
            false, "not its REST one"},
           {"failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:9090: "
            "Failed to connect to remote host: Connection refused",
            false, ""},
       }) {
    const std::string hint = ConnectionHint(absl::UnavailableError(c.message), c.tls);
    if (c.hint.empty()) {
      EXPECT_EQ(hint, "") << c.message;
    } else {
      EXPECT_THAT(hint, HasSubstr(c.hint)) << c.message;
    }
  }
  EXPECT_EQ(ConnectionHint(absl::CancelledError("Socket closed"), false), "");
}

}  // namespace
}  // namespace tessera::agent

// TestPki: a throw-away certificate authority with a server certificate for 127.0.0.1 /
// localhost and a client certificate, all PEM, for TLS tests on loopback (as a kubeadm
// cluster's API server and admin kubeconfig would use). Keys are EC P-256; certificates are
// valid from an hour ago for a day. Thread-safe (no shared state).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace tessera::agent::k8s::testing {

struct TestPki {
  std::string ca_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
  std::string client_cert_pem;  // CN "tessera-agent", signed by the CA
  std::string client_key_pem;
};

absl::StatusOr<TestPki> MakeTestPki();

}  // namespace tessera::agent::k8s::testing

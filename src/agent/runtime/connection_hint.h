// ConnectionHint: what to try when an agent's session with the server ends on a connection
// error that gRPC describes only in transport terms ("Socket closed", "wrong version number").
// The usual causes are a mismatch between the agent's flags and the server: TLS on one side
// only, a CA that did not sign the server's certificate, or --server naming the REST port.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace tessera::agent {

// "; <what to try>" for a status whose message shows one of those causes, "" otherwise.
// `tls`: the agent connects with TLS (--tls-ca given). Pure; thread-safe.
std::string ConnectionHint(const absl::Status& status, bool tls);

}  // namespace tessera::agent

#include "agent/runtime/connection_hint.h"

#include "absl/strings/match.h"

namespace tessera::agent {

std::string ConnectionHint(const absl::Status& status, bool tls) {
  if (status.code() != absl::StatusCode::kUnavailable) return "";
  const std::string message(status.message());
  if (absl::StrContains(message, "http1.x server")) {
    return "; --server must be the server's gRPC address (grpcAddr), not its REST one";
  }
  if (!tls && absl::StrContains(message, "Socket closed")) {
    return "; if the server's gRPC port serves TLS (grpcTls), give --tls-ca";
  }
  if (tls && absl::StrContains(message, "wrong version number")) {
    return "; the server's gRPC port does not serve TLS: drop --tls-ca, or give the server grpcTls";
  }
  if (tls && absl::StrContains(message, "certificate verify failed")) {
    return "; the server's certificate is not signed by the --tls-ca given, or does not name the "
           "--server host";
  }
  return "";
}

}  // namespace tessera::agent

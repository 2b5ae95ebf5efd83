// GrpcServer: the gRPC API (proto/tessera/v1/jobs.proto, service tessera.v1.JobService) over
// the control plane's JobService, with the semantics of the REST API (docs/api.md).
//
// Every call is authenticated from its "authorization" metadata ("Bearer <token>"; missing,
// malformed or unknown → UNAUTHENTICATED), then admitted by the caller's tenant's rate limit
// when one is configured (over the limit → RESOURCE_EXHAUSTED with the trailer
// "retry-after-ms": milliseconds until a request is admitted again). The service's errors map
// code for code onto gRPC statuses; when one field is at fault (a job document that does not
// validate, a bad request field) its path is the trailer "field" (grpc_status.h).
// Job documents above 1 MiB are RESOURCE_EXHAUSTED, like the REST API's 413; messages above
// Options::max_message_bytes are refused by gRPC itself (RESOURCE_EXHAUSTED).
//
// WatchJobEvents holds one server thread per open stream and polls the service's EventStream,
// so that a client's cancellation and Stop() end it within a fraction of a second
// (Stop → UNAVAILABLE, the client should reconnect).
//
// The listener is plaintext unless Options names a TLS certificate and key; bind a plaintext
// listener to loopback or put a TLS proxy in front of it, since the bearer tokens travel with
// every call.
//
// Thread-safety: Start, Stop and port may be called from any thread; Start at most once.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/job_service.h"

namespace grpc {
class Server;
class ServerCredentials;
class Service;
}  // namespace grpc

namespace tessera::api {

class GrpcServer {
 public:
  struct Options {
    server::JobService* service = nullptr;        // required; outlives the server
    server::Authenticator* auth = nullptr;        // required; outlives the server
    server::RateLimiter* rate_limiter = nullptr;  // nullptr: no rate limit
    int max_message_bytes = 4 << 20;              // largest request message accepted
    // More services on the same port (the agent protocol's); each outlives the server.
    std::vector<grpc::Service*> more_services;
    // PEM files: both set serves TLS, both empty plaintext.
    std::string tls_cert_file;
    std::string tls_key_file;
  };

  explicit GrpcServer(Options options);
  // Stops the server (Stop()).
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // Listens on `address` ("host:port"; port 0 picks a free one, see port()) and serves until
  // Stop. InvalidArgument when a required option is missing or a TLS file cannot be read;
  // FailedPrecondition when already
  // started or stopped; Unavailable when the address cannot be bound.
  absl::Status Start(const std::string& address);

  // The bound port; 0 before a successful Start.
  int port() const { return port_.load(); }  // NOLINT(readability-identifier-naming)

  // Stops accepting calls, ends open watch streams (UNAVAILABLE), gives unary calls in flight
  // a short grace period, then cancels what is left and returns once every handler is done.
  // Idempotent.
  void Stop();

 private:
  class Service;

  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials() const;

  const Options options_;
  std::unique_ptr<Service> service_;
  std::mutex mu_;  // serialises Start and Stop
  std::unique_ptr<grpc::Server> server_;
  bool started_ = false;
  std::atomic<int> port_{0};
};

}  // namespace tessera::api

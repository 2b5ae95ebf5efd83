// RestServer: the control plane's REST/JSON API (docs/api.md, docs/openapi.yaml) over HTTP/1.1,
// serving a JobService.
//
// Every /api/v1 request is authenticated with its bearer token (Authenticator), then admitted
// by the caller's tenant bucket (RateLimiter), then served; /healthz, /readyz and /metrics need
// no token. Request bodies above Options::max_body_bytes are refused with 413. Errors are the
// JSON body of json_views.h with the HTTP status that maps the absl code. Hostile query
// parameters (non-numeric, negative or out-of-range numbers) are 400 naming the parameter.
//
// The HTTP transport is an HttpFrontEnd (http_front_end.h): idle and slow connections cost no
// thread; each request header must arrive within Options::header_timeout and its body within
// Options::body_timeout (else the connection is closed), a kept-alive connection is closed after
// Options::keep_alive_timeout without a request. Requests run on Options::threads worker
// threads with at most Options::max_queued_requests waiting; beyond that, and beyond
// Options::max_connections open connections, the answer is 503 with Retry-After: 1 (the error
// body, code UNAVAILABLE). An open watch stream (GET /api/v1/watch) holds its worker thread
// until the client goes away or the server stops, so at most Options::max_watch_streams are
// open at once (more: 503) and the rest stay for requests.
//
// Standby (Options::standby_leader set): the REST port of a standby replica of a highly
// available control plane (docs/operations.md), over a service that answers reads from mirrored
// state (server/standby_job_service.h). It serves, authenticated and rate limited as above,
// GET (and HEAD) of /api/v1/jobs, /api/v1/jobs/{id} and /api/v1/jobs/{id}/events, and /healthz;
// /readyz answers 503 naming the leader (a standby is never ready, so that a load balancer sends
// traffic to the leader alone); every other request — writes, explain, logs, watch, queues,
// nodes, clusters, tokens, metrics, unknown routes — gets 307 Temporary Redirect to the leader's
// URL with the same path and query (a 307 keeps the method and the body, so a client re-sends a
// submission to the leader as it was), or 503 with Retry-After: 1 while no leader is known.
// Every answer carries X-Tessera-Standby: true (a client that knows other replicas may try the
// next one when the standby knows no leader) and X-Tessera-Leader: the leader's URL, when one
// is known.
//
// Lifecycle: construct, Start (binds synchronously, then serves on its own threads), Stop (or
// destroy). A server is started at most once. Stop ends open watch streams, closes idle
// connections at once and waits for in-flight requests.
// Thread-safety: Start and Stop from one owner thread; port() from any thread after Start.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/job_service.h"
#include "tessera/common/clock.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace tessera::api {

class RestServer {
 public:
  struct Options {
    server::JobService* service = nullptr;        // required; outlives the server
    server::Authenticator* auth = nullptr;        // required; outlives the server
    server::RateLimiter* rate_limiter = nullptr;  // nullptr: no rate limit
    // Where http_requests_total{method,route,code} is registered and what /metrics serves;
    // nullptr: no metrics (/metrics answers 404).
    prometheus::Registry* metrics = nullptr;
    size_t max_body_bytes = size_t{1} << 20;
    int threads = 32;            // worker threads, >= 2
    int max_watch_streams = 16;  // open watch streams at once, < threads
    int max_queued_requests = 256;  // requests waiting for a worker thread, >= 0
    int max_connections = 10'000;   // open connections at once, >= 1
    Duration header_timeout = std::chrono::seconds(10);  // a whole request header, > 0
    Duration body_timeout = std::chrono::seconds(30);    // a whole request body, > 0
    Duration keep_alive_timeout = std::chrono::seconds(30);  // idle between two requests, > 0
    // Set on a standby (see above): the leader's base URL ("http://10.0.0.5:8080"; "" while
    // none is known), asked at each request from a worker thread. nullptr: not a standby.
    std::function<std::string()> standby_leader;
  };

  // REQUIRES: options.service and options.auth are not null.
  explicit RestServer(Options options);
  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // Binds host:port (port 0: an ephemeral port, see port()) and starts serving. Errors:
  // Unavailable when the address cannot be bound ("address already in use"), InvalidArgument
  // for bad options, FailedPrecondition when already started.
  absl::Status Start(const std::string& host, int port);

  // The bound port; 0 before Start.
  int port() const;

  // Stops serving and waits for the serving thread. Idempotent.
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::api

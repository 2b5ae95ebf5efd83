// StandbyServer: the REST port of a standby replica of a highly available control plane
// (docs/operations.md). A standby serves no API of its own: it sends every client to the
// leader, whose base URL the election reports (SetLeader).
//
//   GET /healthz   200 "ok": the process is alive.
//   GET /readyz    503 {"error": ...} naming the leader: a standby is never ready, so that a
//                  load balancer (a Kubernetes Service) sends traffic to the leader alone.
//   anything else  307 Temporary Redirect to the leader's URL with the same path and query,
//                  and X-Tessera-Leader: the URL. A 307 keeps the method and the body, so a
//                  client re-sends a submission to the leader as it was. While no leader is
//                  known: 503 with Retry-After: 1 and X-Tessera-Standby: true (a client that
//                  knows other replicas tries the next one).
//
// Lifecycle: Start binds (errors as HttpFrontEnd::Start), Stop (or destroy) closes the port.
// Thread-safety: Start and Stop from one owner thread; SetLeader and port() from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "api/rest/http_front_end.h"

namespace tessera::api {

class StandbyServer {
 public:
  StandbyServer();
  ~StandbyServer();

  absl::Status Start(const std::string& host, int port);
  void Stop();
  int port() const;
  // The leader's base URL ("http://10.0.0.5:8080"); "" while none is known.
  void SetLeader(std::string url);

 private:
  void Handle(HttpRequest& request, HttpResponse& response);
  std::string Leader() const;

  mutable std::mutex mu_;
  std::string leader_;
  std::unique_ptr<HttpFrontEnd> front_;
};

}  // namespace tessera::api

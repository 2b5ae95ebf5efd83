// KubernetesApiClient: one HTTP(S) connection to a Kubernetes API server, speaking its REST
// wire format (JSON bodies, Status objects on failure, watch streams of JSON lines).
//
// TLS: an https server's certificate is checked against KubernetesApiAccess::ca_file /
// ca_data (only those certificates are trusted; with neither, the system's), or not at all
// with insecure_skip_verify. A client certificate authenticates when one is given; a bearer
// token (or the token file, re-read before every request) otherwise.
//
// Errors: transport failures are Unavailable ("kubernetes API https://...: GET /api/v1/nodes:
// connection failed ..."); answers that are not a success map through ApiError
// (api_status.h); an answer that should be JSON and is not is Internal; requests after Stop()
// are Cancelled.
//
// Thread-safety: one request at a time (callers keep one client per thread); Stop() may be
// called from any thread and aborts the request in flight, including a watch.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/kubernetes/api_access.h"
#include "agent/kubernetes/internal/json_fields.h"
#include "tessera/common/clock.h"

namespace httplib {
class ClientImpl;
}

namespace tessera::agent::k8s {

using Query = std::vector<std::pair<std::string, std::string>>;

struct ApiClientTimeouts {
  Duration connect{std::chrono::seconds(10)};
  Duration read{std::chrono::seconds(30)};
  // A watch waits this long for a line before the connection counts as broken; longer than
  // the watch's timeoutSeconds, so the server ends a quiet watch first.
  Duration watch_read{std::chrono::minutes(6)};
};

class KubernetesApiClient {
 public:
  // Errors: InvalidArgument for a malformed server URL or unreadable CA / client certificate.
  static absl::StatusOr<std::unique_ptr<KubernetesApiClient>> Create(
      const KubernetesApiAccess& access, ApiClientTimeouts timeouts = {});
  ~KubernetesApiClient();
  KubernetesApiClient(const KubernetesApiClient&) = delete;
  KubernetesApiClient& operator=(const KubernetesApiClient&) = delete;

  // `path` is the API path ("/api/v1/nodes"); the server's path prefix is added.
  absl::StatusOr<Json> Get(std::string_view path, const Query& query = {});
  absl::StatusOr<Json> Post(std::string_view path, const Json& body);
  absl::StatusOr<Json> Delete(std::string_view path, const Query& query = {});
  // A plain-text answer (a container log).
  absl::StatusOr<std::string> GetText(std::string_view path, const Query& query = {});

  // GETs a watch stream and calls `on_line` with every non-empty line (a JSON event) until the
  // server ends the stream (OK), `on_line` returns false (OK), the request fails (its error)
  // or Stop() is called (Cancelled).
  absl::Status Watch(std::string_view path, const Query& query,
                     const std::function<bool(std::string_view line)>& on_line);

  // Aborts the request in flight and every later one. Idempotent.
  void Stop();

  const std::string& server() const { return server_; }

 private:
  KubernetesApiClient(std::string server, std::string path_prefix,
                      std::unique_ptr<httplib::ClientImpl> http, KubernetesApiAccess access,
                      ApiClientTimeouts timeouts, std::string temp_ca_file);
  std::string Url(std::string_view path, const Query& query) const;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> RequestHeaders(bool json) const;
  absl::Status TransportError(std::string_view what, int error) const;
  absl::StatusOr<std::string> Send(std::string_view method, std::string_view path,
                                   const Query& query, const std::string* body);

  const std::string server_;
  const std::string path_prefix_;
  std::unique_ptr<httplib::ClientImpl> http_;
  const KubernetesApiAccess access_;
  const ApiClientTimeouts timeouts_;
  const std::string temp_ca_file_;  // ca_data written out for OpenSSL; removed at destruction
  std::atomic<bool> stopped_{false};
};

// "a b/c" -> "a%20b%2Fc": a query value or path segment.
std::string PercentEncode(std::string_view text);

}  // namespace tessera::agent::k8s

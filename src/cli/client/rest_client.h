// RestClient: the CLI's side of the REST API (docs/api.md) — JSON requests with the bearer
// token, JSON answers, raw answers (logs) and NDJSON streams (watch).
//
// Every method returns the decoded answer for a 2xx status. A non-2xx answer is the server's
// error as a status (client/api_error.h: its canonical code and message, the field and
// Retry-After as payloads); a transport failure is UnreachableError naming the address tried
// ("cannot connect to http://127.0.0.1:8080: connection refused"). An answer that should be
// JSON but is not is Internal. Nothing here throws.
// Paths are API paths ("/api/v1/jobs"), put after the server URL's prefix; query values are
// percent-encoded here. Redirects are followed: a standby replica of a highly available control
// plane answers 307 with the leader's URL (docs/operations.md), and the request goes there with
// its method, body and token.
// Several servers (the replicas of a highly available control plane): a request goes to the
// server that answered last (the first at the start) and moves on to the next, once each, when
// that one proves it did not handle the request: the connection could not be made, a standby
// knows no leader yet (503 with X-Tessera-Standby), or, for a GET, the connection broke. A
// write whose connection broke after it was sent is not sent again (it may have been applied);
// its error names the server.
// Thread-safety: one RestClient per thread (it holds one HTTP connection).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/client/server_url.h"
#include "nlohmann/json.hpp"
#include "tessera/common/clock.h"

namespace httplib {
class Client;
class Result;
}  // namespace httplib

namespace tessera::cli {

using Json = nlohmann::ordered_json;
using Query = std::vector<std::pair<std::string, std::string>>;

struct RestClientOptions {
  // Tried in this order; at least one.
  std::vector<ServerUrl> servers;
  std::string token;  // sent as "Authorization: Bearer <token>"; "" = none
  Duration connect_timeout = std::chrono::seconds(5);
  Duration read_timeout = std::chrono::seconds(30);
  // For streams: the server writes a keep-alive line every 15 s, so a longer silence means the
  // connection is gone.
  Duration stream_read_timeout = std::chrono::seconds(60);
};

// A 2xx answer as bytes, with its headers (names lower-cased).
struct RawResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string, std::less<>> headers;

  // The header's value, "" when absent; `name` is matched without regard to case.
  std::string Header(std::string_view name) const;
};

class RestClient {
 public:
  explicit RestClient(RestClientOptions options);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  absl::StatusOr<Json> GetJson(std::string_view path, const Query& query = {});
  // POSTs `body` (a JSON text) with Content-Type: application/json. `http_status`, when given,
  // receives the answer's status (201 created, 200 an earlier job for a repeated request id).
  absl::StatusOr<Json> PostJson(std::string_view path, std::string_view body,
                                int* http_status = nullptr);
  // PUTs `body` with Content-Type `content_type` (a YAML document is "application/yaml").
  absl::StatusOr<Json> PutJson(std::string_view path, std::string_view body,
                               std::string_view content_type = "application/json");
  absl::StatusOr<Json> DeleteJson(std::string_view path);
  absl::StatusOr<RawResponse> GetRaw(std::string_view path, const Query& query = {});

  // GETs an NDJSON stream and calls `on_line` with each line that is a JSON object, in order;
  // blank lines and keep-alive "{}" lines are skipped. Returns OK when `on_line` returns false
  // (the stream is closed then) or when the server ends the stream; an error when the request
  // fails, a line is not JSON, or the connection breaks mid-line.
  absl::Status StreamJsonLines(std::string_view path, const Query& query,
                               const std::function<bool(const Json&)>& on_line);

  // The URL of the server requests go to now, as given ("http://127.0.0.1:8080").
  std::string address() const;

 private:
  // Sends with `send` to the current server, moving on as the class comment says; returns the
  // last server's result.
  httplib::Result Exchange(bool idempotent,
                           const std::function<httplib::Result(httplib::Client&)>& send);
  void Connect(size_t server);
  std::string Target(std::string_view path, const Query& query) const;
  absl::Status TransportError(std::string_view method, std::string_view path, int error) const;

  RestClientOptions options_;
  size_t current_ = 0;  // index into options_.servers
  std::unique_ptr<httplib::Client> http_;
};

// "a b/c" -> "a%20b%2Fc": everything but unreserved characters (RFC 3986) escaped.
std::string PercentEncode(std::string_view text);

}  // namespace tessera::cli

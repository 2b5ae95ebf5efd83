#include "cli/client/rest_client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

#include "absl/status/status.h"
#include "cli/client/api_error.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tessera::cli {
namespace {

// The part of an error body kept while streaming (an error body is small; a hostile one is not).
constexpr size_t kMaxErrorBody = size_t{64} * 1024;
// A stream line longer than this is refused rather than buffered without end.
constexpr size_t kMaxStreamLine = 8 << 20;

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool IsSuccess(int status) { return status >= 200 && status < 300; }

// True when `result` shows the server did not handle the request, so another replica may
// (rest_client.h). A GET is safe to send again whatever broke.
bool NotHandled(const httplib::Result& result, bool idempotent) {
  if (!result) {
    const httplib::Error error = result.error();
    return error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout ||
           idempotent;
  }
  return result->status == 503 && result->has_header("X-Tessera-Standby");
}

absl::StatusOr<Json> ParseJsonBody(std::string_view method, std::string_view path,
                                   const std::string& body) {
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::InternalError(fmt::format("{} {}: the server's answer is not JSON: '{}'", method,
                                           path, body.substr(0, 80)));
  }
  return parsed;
}

}  // namespace

std::string RawResponse::Header(std::string_view name) const {
  auto it = headers.find(Lower(name));
  return it == headers.end() ? std::string() : it->second;
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

RestClient::RestClient(RestClientOptions options) : options_(std::move(options)) {
  if (options_.servers.empty()) options_.servers.push_back(ServerUrl{"127.0.0.1", 8080, ""});
  Connect(0);
}

void RestClient::Connect(size_t server) {
  current_ = server;
  const ServerUrl& url = options_.servers[server];
  http_ = std::make_unique<httplib::Client>(url.host, url.port);
  http_->set_connection_timeout(options_.connect_timeout);
  http_->set_read_timeout(options_.read_timeout);
  http_->set_write_timeout(options_.read_timeout);
  http_->set_keep_alive(true);
  http_->set_tcp_nodelay(true);      // requests go out in pieces: no Nagle delay between them
  http_->set_follow_location(true);  // a standby replica's 307 to the leader
  httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", "tessera-cli"}};
  if (!options_.token.empty()) {
    headers.emplace("Authorization", "Bearer " + options_.token);
  }
  http_->set_default_headers(std::move(headers));
}

std::string RestClient::address() const { return options_.servers[current_].ToString(); }

httplib::Result RestClient::Exchange(bool idempotent,
                                     const std::function<httplib::Result(httplib::Client&)>& send) {
  httplib::Result result = send(*http_);
  for (size_t tried = 1; tried < options_.servers.size() && NotHandled(result, idempotent);
       ++tried) {
    Connect((current_ + 1) % options_.servers.size());
    result = send(*http_);
  }
  return result;
}

RestClient::~RestClient() = default;

std::string RestClient::Target(std::string_view path, const Query& query) const {
  std::string target = options_.servers[current_].path_prefix + std::string(path);
  char separator = '?';
  for (const auto& [key, value] : query) {
    target += fmt::format("{}{}={}", separator, PercentEncode(key), PercentEncode(value));
    separator = '&';
  }
  return target;
}

absl::Status RestClient::TransportError(std::string_view method, std::string_view path,
                                        int error) const {
  std::string what;
  switch (static_cast<httplib::Error>(error)) {
    case httplib::Error::Connection:
      what = "connection failed (is the server running and listening there?)";
      break;
    case httplib::Error::ConnectionTimeout:
      what = "timed out while connecting";
      break;
    case httplib::Error::Read:
      what = "the connection broke or timed out while reading the answer";
      break;
    case httplib::Error::Write:
      what = "the connection broke while sending the request";
      break;
    default:
      what = httplib::to_string(static_cast<httplib::Error>(error));
  }
  if (options_.servers.size() == 1) {
    return UnreachableError(
        fmt::format("cannot connect to {} ({} {}): {}", address(), method, path, what));
  }
  std::vector<std::string> all;
  for (const ServerUrl& server : options_.servers) all.push_back(server.ToString());
  return UnreachableError(fmt::format("cannot connect to any of {} ({} {}): last, {}: {}",
                                      fmt::join(all, ", "), method, path, address(), what));
}

absl::StatusOr<Json> RestClient::GetJson(std::string_view path, const Query& query) {
  absl::StatusOr<RawResponse> raw = GetRaw(path, query);
  if (!raw.ok()) return raw.status();
  return ParseJsonBody("GET", path, raw->body);
}

absl::StatusOr<Json> RestClient::PostJson(std::string_view path, std::string_view body,
                                          int* http_status) {
  httplib::Result result = Exchange(/*idempotent=*/false, [&](httplib::Client& http) {
    return http.Post(Target(path, {}), std::string(body), "application/json");
  });
  if (!result) return TransportError("POST", path, static_cast<int>(result.error()));
  if (!IsSuccess(result->status)) {
    return ApiErrorFromResponse(result->status, result->body,
                                result->get_header_value("Retry-After"));
  }
  if (http_status != nullptr) *http_status = result->status;
  return ParseJsonBody("POST", path, result->body);
}

absl::StatusOr<Json> RestClient::PutJson(std::string_view path, std::string_view body,
                                         std::string_view content_type) {
  httplib::Result result = Exchange(/*idempotent=*/false, [&](httplib::Client& http) {
    return http.Put(Target(path, {}), std::string(body), std::string(content_type));
  });
  if (!result) return TransportError("PUT", path, static_cast<int>(result.error()));
  if (!IsSuccess(result->status)) {
    return ApiErrorFromResponse(result->status, result->body,
                                result->get_header_value("Retry-After"));
  }
  return ParseJsonBody("PUT", path, result->body);
}

absl::StatusOr<Json> RestClient::DeleteJson(std::string_view path) {
  httplib::Result result = Exchange(
      /*idempotent=*/false, [&](httplib::Client& http) { return http.Delete(Target(path, {})); });
  if (!result) return TransportError("DELETE", path, static_cast<int>(result.error()));
  if (!IsSuccess(result->status)) {
    return ApiErrorFromResponse(result->status, result->body,
                                result->get_header_value("Retry-After"));
  }
  return ParseJsonBody("DELETE", path, result->body);
}

absl::StatusOr<RawResponse> RestClient::GetRaw(std::string_view path, const Query& query) {
  httplib::Result result = Exchange(
      /*idempotent=*/true, [&](httplib::Client& http) { return http.Get(Target(path, query)); });
  if (!result) return TransportError("GET", path, static_cast<int>(result.error()));
  if (!IsSuccess(result->status)) {
    return ApiErrorFromResponse(result->status, result->body,
                                result->get_header_value("Retry-After"));
  }
  RawResponse out;
  out.status = result->status;
  out.body = std::move(result->body);
  for (const auto& [name, value] : result->headers) out.headers[Lower(name)] = value;
  return out;
}

absl::Status RestClient::StreamJsonLines(std::string_view path, const Query& query,
                                         const std::function<bool(const Json&)>& on_line) {
  int status = 0;
  std::string retry_after;
  std::string error_body;
  std::string pending;
  absl::Status line_error;
  bool stopped = false;
  // Handles every complete line in `pending`; false stops the transfer.
  const auto drain = [&]() {
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      std::string_view line(pending.data() + start, end - start);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (line.empty()) continue;
      Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!event.is_object()) {
        line_error = absl::InternalError(fmt::format(
            "GET {}: a stream line is not a JSON object: '{}'", path, line.substr(0, 80)));
        return false;
      }
      if (event.empty()) continue;  // keep-alive
      if (!on_line(event)) {
        stopped = true;
        return false;
      }
    }
    pending.erase(0, start);
    if (pending.size() > kMaxStreamLine) {
      line_error = absl::InternalError(
          fmt::format("GET {}: a stream line is longer than {} bytes", path, kMaxStreamLine));
      return false;
    }
    return true;
  };
  // Moves on to another server only when nothing of the stream was read (rest_client.h).
  httplib::Result result = Exchange(/*idempotent=*/false, [&](httplib::Client& http) {
    status = 0;
    retry_after.clear();
    error_body.clear();
    http.set_read_timeout(options_.stream_read_timeout);
    httplib::Result answer = http.Get(
        Target(path, query),
        [&](const httplib::Response& response) {
          status = response.status;
          retry_after = response.get_header_value("Retry-After");
          return true;
        },
        [&](const char* data, size_t size) {
          if (!IsSuccess(status)) {
            error_body.append(
                data, std::min(size, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
            return true;
          }
          pending.append(data, size);
          return drain();
        });
    http.set_read_timeout(options_.read_timeout);
    return answer;
  });
  if (stopped) return absl::OkStatus();
  if (!line_error.ok()) return line_error;
  if (!result) return TransportError("GET", path, static_cast<int>(result.error()));
  if (!IsSuccess(status)) return ApiErrorFromResponse(status, error_body, retry_after);
  pending += '\n';  // a last line without its newline
  drain();
  if (stopped) return absl::OkStatus();
  return line_error;
}

}  // namespace tessera::cli

#include "agent/kubernetes/api_client.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "agent/kubernetes/api_status.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

// A stream line longer than this is refused rather than buffered without end.
constexpr size_t kMaxLine = size_t{16} << 20;
// The part of an error answer kept.
constexpr size_t kMaxErrorBody = size_t{64} << 10;

bool ConsumePrefix(std::string_view* text, std::string_view prefix) {
  if (!text->starts_with(prefix)) return false;
  text->remove_prefix(prefix.size());
  return true;
}

struct ServerUrl {
  bool tls = false;
  std::string host;
  int port = 0;
  std::string prefix;  // "" or "/path" without a trailing '/'
};

absl::StatusOr<ServerUrl> ParseServerUrl(std::string_view server) {
  ServerUrl url;
  std::string_view rest = server;
  if (ConsumePrefix(&rest, "https://")) {
    url.tls = true;
  } else if (!ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(
        fmt::format("server '{}': must start with https:// or http://", server));
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    url.prefix = std::string(rest.substr(slash));
    while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
  }
  std::string_view port_text;
  if (ConsumePrefix(&authority, "[")) {  // [::1]:6443
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(fmt::format("server '{}': unclosed '['", server));
    }
    url.host = std::string(authority.substr(0, close));
    std::string_view after = authority.substr(close + 1);
    if (ConsumePrefix(&after, ":")) port_text = after;
  } else {
    const size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) {
    return absl::InvalidArgumentError(fmt::format("server '{}': no host", server));
  }
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty() &&
      (!absl::SimpleAtoi(absl::string_view(port_text.data(), port_text.size()), &url.port) ||
       url.port < 1 || url.port > 65535)) {
    return absl::InvalidArgumentError(fmt::format("server '{}': bad port", server));
  }
  return url;
}

std::string ReadTrimmed(const std::string& path, bool* ok) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  *ok = static_cast<bool>(file);
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

// Writes `pem` to a new private file for OpenSSL to load; returns its path.
absl::StatusOr<std::string> WriteTempCa(const std::string& pem) {
  std::string path = (std::filesystem::temp_directory_path() / "tessera-kube-ca-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) return absl::InternalError("cannot create a temporary file for the CA data");
  const bool written = write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
  close(fd);
  if (!written) {
    std::remove(path.c_str());
    return absl::InternalError("cannot write the CA data to a temporary file");
  }
  return path;
}

// A TLS client, authenticating with the client certificate when one is given.
absl::StatusOr<std::unique_ptr<httplib::SSLClient>> MakeTlsClient(
    const ServerUrl& url, const KubernetesApiAccess& access) {
  if (access.client_certificate_data.empty()) {
    return std::make_unique<httplib::SSLClient>(url.host, url.port);
  }
  BIO* cert_bio = BIO_new_mem_buf(access.client_certificate_data.data(),
                                  static_cast<int>(access.client_certificate_data.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(access.client_key_data.data(),
                                 static_cast<int>(access.client_key_data.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  std::unique_ptr<httplib::SSLClient> client;
  if (cert != nullptr && key != nullptr) {
    client = std::make_unique<httplib::SSLClient>(url.host, url.port, cert, key);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (cert == nullptr) {
    return absl::InvalidArgumentError("client-certificate: not a PEM certificate");
  }
  if (key == nullptr) return absl::InvalidArgumentError("client-key: not a PEM private key");
  if (!client->is_valid()) {
    return absl::InvalidArgumentError("client-certificate and client-key do not match");
  }
  return client;
}

}  // namespace

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

absl::StatusOr<std::unique_ptr<KubernetesApiClient>> KubernetesApiClient::Create(
    const KubernetesApiAccess& access, ApiClientTimeouts timeouts) {
  absl::StatusOr<ServerUrl> url = ParseServerUrl(access.server);
  if (!url.ok()) return url.status();
  std::unique_ptr<httplib::ClientImpl> http;
  std::string temp_ca;
  if (url->tls) {
    absl::StatusOr<std::unique_ptr<httplib::SSLClient>> tls = MakeTlsClient(*url, access);
    if (!tls.ok()) return tls.status();
    if (access.insecure_skip_verify) {
      (*tls)->enable_server_certificate_verification(false);
    } else if (!access.ca_data.empty()) {
      absl::StatusOr<std::string> path = WriteTempCa(access.ca_data);
      if (!path.ok()) return path.status();
      temp_ca = *path;
      (*tls)->set_ca_cert_path(temp_ca);
    } else if (!access.ca_file.empty()) {
      if (!std::ifstream(access.ca_file)) {
        return absl::InvalidArgumentError(
            fmt::format("certificate-authority {}: cannot be read", access.ca_file));
      }
      (*tls)->set_ca_cert_path(access.ca_file);
    }
    http = *std::move(tls);
  } else {
    http = std::make_unique<httplib::ClientImpl>(url->host, url->port);
  }
  http->set_connection_timeout(timeouts.connect);
  http->set_read_timeout(timeouts.read);
  http->set_write_timeout(timeouts.read);
  http->set_keep_alive(true);
  http->set_tcp_nodelay(true);
  return std::unique_ptr<KubernetesApiClient>(new KubernetesApiClient(
      access.server, url->prefix, std::move(http), access, timeouts, std::move(temp_ca)));
}

KubernetesApiClient::KubernetesApiClient(std::string server, std::string path_prefix,
                                         std::unique_ptr<httplib::ClientImpl> http,
                                         KubernetesApiAccess access, ApiClientTimeouts timeouts,
                                         std::string temp_ca_file)
    : server_(std::move(server)),
      path_prefix_(std::move(path_prefix)),
      http_(std::move(http)),
      access_(std::move(access)),
      timeouts_(timeouts),
      temp_ca_file_(std::move(temp_ca_file)) {}

KubernetesApiClient::~KubernetesApiClient() {
  if (!temp_ca_file_.empty()) std::remove(temp_ca_file_.c_str());
}

void KubernetesApiClient::Stop() {
  stopped_ = true;
  http_->stop();
}

std::string KubernetesApiClient::Url(std::string_view path, const Query& query) const {
  std::string url = path_prefix_ + std::string(path);
  char separator = '?';
  for (const auto& [key, value] : query) {
    url += fmt::format("{}{}={}", separator, PercentEncode(key), PercentEncode(value));
    separator = '&';
  }
  return url;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
KubernetesApiClient::RequestHeaders(bool json) const {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Accept", json ? "application/json" : "*/*"}, {"User-Agent", "tessera-agent"}};
  std::string token = access_.token;
  if (!access_.token_file.empty()) {
    bool ok = false;
    token = ReadTrimmed(access_.token_file, &ok);
    if (!ok) {
      return absl::UnauthenticatedError(
          fmt::format("token file {}: cannot be read", access_.token_file));
    }
  }
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  return headers;
}

absl::Status KubernetesApiClient::TransportError(std::string_view what, int error) const {
  std::string detail;
  switch (static_cast<httplib::Error>(error)) {
    case httplib::Error::Connection:
      detail = "connection failed (is the API server running and reachable?)";
      break;
    case httplib::Error::ConnectionTimeout:
      detail = "timed out while connecting";
      break;
    case httplib::Error::Read:
      detail = "the connection broke or timed out while reading the answer";
      break;
    case httplib::Error::SSLServerVerification:
      detail =
          "the server's certificate was not accepted (check certificate-authority, or "
          "set insecure-skip-tls-verify)";
      break;
    case httplib::Error::SSLLoadingCerts:
      detail = "the certificate authority could not be loaded";
      break;
    default:
      detail = httplib::to_string(static_cast<httplib::Error>(error));
  }
  if (stopped_) return absl::CancelledError(fmt::format("{}: stopped", what));
  return absl::UnavailableError(fmt::format("kubernetes API {}: {}: {}", server_, what, detail));
}

absl::StatusOr<std::string> KubernetesApiClient::Send(std::string_view method,
                                                      std::string_view path, const Query& query,
                                                      const std::string* body) {
  const std::string what = fmt::format("{} {}", method, path);
  if (stopped_) return absl::CancelledError(fmt::format("{}: stopped", what));
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> header_list =
      RequestHeaders(/*json=*/path.find("/log") == std::string_view::npos);
  if (!header_list.ok()) return header_list.status();
  httplib::Headers headers(header_list->begin(), header_list->end());
  const std::string url = Url(path, query);
  httplib::Result result = method == "GET" ? http_->Get(url.c_str(), headers)
                           : method == "POST"
                               ? http_->Post(url.c_str(), headers, *body, "application/json")
                               : http_->Delete(url.c_str(), headers);
  if (!result) return TransportError(what, static_cast<int>(result.error()));
  if (result->status < 200 || result->status >= 300) {
    return ApiError(fmt::format("kubernetes API {}: {}", server_, what), result->status,
                    std::string_view(result->body).substr(0, kMaxErrorBody));
  }
  return std::move(result->body);
}

absl::StatusOr<Json> KubernetesApiClient::Get(std::string_view path, const Query& query) {
  absl::StatusOr<std::string> body = Send("GET", path, query, nullptr);
  if (!body.ok()) return body.status();
  std::optional<Json> json = ParseJson(*body);
  if (!json.has_value()) {
    return absl::InternalError(
        fmt::format("kubernetes API {}: GET {}: the answer is not JSON", server_, path));
  }
  return *std::move(json);
}

absl::StatusOr<Json> KubernetesApiClient::Post(std::string_view path, const Json& body) {
  const std::string text = DumpJson(body);
  absl::StatusOr<std::string> answer = Send("POST", path, {}, &text);
  if (!answer.ok()) return answer.status();
  std::optional<Json> json = ParseJson(*answer);
  if (!json.has_value()) {
    return absl::InternalError(
        fmt::format("kubernetes API {}: POST {}: the answer is not JSON", server_, path));
  }
  return *std::move(json);
}

absl::StatusOr<Json> KubernetesApiClient::Delete(std::string_view path, const Query& query) {
  absl::StatusOr<std::string> answer = Send("DELETE", path, query, nullptr);
  if (!answer.ok()) return answer.status();
  return ParseJson(*answer).value_or(Json::object());
}

absl::StatusOr<std::string> KubernetesApiClient::GetText(std::string_view path,
                                                         const Query& query) {
  return Send("GET", path, query, nullptr);
}

absl::Status KubernetesApiClient::Watch(std::string_view path, const Query& query,
                                        const std::function<bool(std::string_view line)>& on_line) {
  const std::string what = fmt::format("GET {} (watch)", path);
  if (stopped_) return absl::CancelledError(fmt::format("{}: stopped", what));
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> header_list =
      RequestHeaders(/*json=*/true);
  if (!header_list.ok()) return header_list.status();
  httplib::Headers headers(header_list->begin(), header_list->end());
  int status = 0;
  std::string error_body;
  std::string pending;
  bool stopped_by_callback = false;
  absl::Status line_error;
  // Handles every complete line in `pending`; false ends the transfer.
  const auto drain = [&]() {
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      std::string_view line(pending.data() + start, end - start);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (line.empty()) continue;
      if (!on_line(line)) {
        stopped_by_callback = true;
        return false;
      }
    }
    pending.erase(0, start);
    if (pending.size() > kMaxLine) {
      line_error = absl::InternalError(
          fmt::format("{}: a stream line is longer than {} bytes", what, kMaxLine));
      return false;
    }
    return true;
  };
  http_->set_read_timeout(timeouts_.watch_read);
  httplib::Result result = http_->Get(
      Url(path, query).c_str(), headers,
      [&](const httplib::Response& response) {
        status = response.status;
        return true;
      },
      [&](const char* data, size_t size) {
        if (stopped_) return false;
        if (status < 200 || status >= 300) {
          error_body.append(
              data, std::min(size, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
          return true;
        }
        pending.append(data, size);
        return drain();
      });
  http_->set_read_timeout(timeouts_.read);
  if (stopped_by_callback) return absl::OkStatus();
  if (!line_error.ok()) return line_error;
  if (stopped_) return absl::CancelledError(fmt::format("{}: stopped", what));
  if (!result) return TransportError(what, static_cast<int>(result.error()));
  if (status < 200 || status >= 300) {
    return ApiError(fmt::format("kubernetes API {}: {}", server_, what), status, error_body);
  }
  pending += '\n';  // a last line without its newline
  drain();
  return line_error;
}

}  // namespace tessera::agent::k8s

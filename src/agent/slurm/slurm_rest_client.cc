#include "agent/slurm/slurm_rest_client.h"

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "agent/slurm/slurm_diag.h"
#include "agent/slurm/slurm_json.h"
#include "agent/slurm/slurm_submit.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

using nlohmann::json;

// ESLURM_INVALID_JOB_ID: the job is unknown (never was, or purged after MinJobAge).
constexpr int64_t kInvalidJobId = 2017;

class HttpSlurmTransport final : public SlurmTransport {
 public:
  explicit HttpSlurmTransport(SlurmHttpOptions options)
      : options_(std::move(options)), client_(options_.url) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options_.timeout);
    client_.set_connection_timeout(std::max<int64_t>(1, seconds.count() / 2), 0);
    client_.set_read_timeout(std::max<int64_t>(1, seconds.count()), 0);
    client_.set_write_timeout(std::max<int64_t>(1, seconds.count()), 0);
    client_.set_keep_alive(true);
    // A request goes out as headers, then body: without this, Nagle's algorithm holds the body
    // until the server's delayed ACK (~40 ms per submission).
    client_.set_tcp_nodelay(true);
    SetToken(options_.jwt);
  }

  absl::StatusOr<SlurmHttpReply> Send(std::string_view method, const std::string& path,
                                      const std::string& body) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = RefreshTokenFile(); !s.ok()) return s;
    httplib::Result result = Request(method, path, body);
    // A kept-alive connection the server has since closed fails once. GET and DELETE are
    // idempotent, so they are sent again on a fresh connection, as curl and Go's net/http do; a
    // POST only when it never reached the server (the write failed), as Go's net/http does.
    if (!result && (method != "POST" || result.error() == httplib::Error::Write)) {
      client_.stop();
      result = Request(method, path, body);
    }
    // slurmrestd closes the connection after an error reply ("Connection: Close", which this
    // cpp-httplib does not act on), so the next request must not reuse it.
    if (!result || result->status >= 400) client_.stop();
    if (!result) {
      return absl::UnavailableError(fmt::format("slurmrestd at {}: {} {}: {}", options_.url, method,
                                                path, httplib::to_string(result.error())));
    }
    return SlurmHttpReply{.status = result->status, .body = std::move(result->body)};
  }

 private:
  httplib::Result Request(std::string_view method, const std::string& path,
                          const std::string& body) {
    if (method == "POST") return client_.Post(path, body, "application/json");
    if (method == "DELETE") return client_.Delete(path);
    // slurmrestd 22.05 answers "not modified" with neither a length nor a body (its last header
    // comes after the blank line), so only the end of the connection ends that reply: an
    // incremental read asks for the connection to be closed after it.
    if (path.find("update_time=") != std::string::npos) {
      return client_.Get(path, httplib::Headers{{"Connection", "close"}});
    }
    return client_.Get(path);
  }

  void SetToken(const std::string& token) {
    client_.set_default_headers({{"X-SLURM-USER-NAME", options_.user},
                                 {"X-SLURM-USER-TOKEN", token},
                                 {"Accept", "application/json"}});
  }

  // Reads options_.jwt_file again when its modification time or size changed. REQUIRES mu_.
  absl::Status RefreshTokenFile() {
    if (options_.jwt_file.empty()) return absl::OkStatus();
    std::error_code error;
    const auto mtime = std::filesystem::last_write_time(options_.jwt_file, error);
    const auto size = error ? 0 : std::filesystem::file_size(options_.jwt_file, error);
    if (error) {
      return absl::UnauthenticatedError(
          fmt::format("slurm jwt file {}: {}", options_.jwt_file, error.message()));
    }
    if (token_read_ && mtime == token_mtime_ && size == token_size_) return absl::OkStatus();
    std::ifstream in(options_.jwt_file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string token(absl::StripAsciiWhitespace(text.str()));
    if (!in || token.empty()) {
      return absl::UnauthenticatedError(
          fmt::format("slurm jwt file {}: empty or unreadable", options_.jwt_file));
    }
    SetToken(token);
    token_read_ = true;
    token_mtime_ = mtime;
    token_size_ = size;
    return absl::OkStatus();
  }

  const SlurmHttpOptions options_;
  std::mutex mu_;
  httplib::Client client_;
  bool token_read_ = false;  // the token file's last read: mu_
  std::filesystem::file_time_type token_mtime_;
  uintmax_t token_size_ = 0;
};

// slurmrestd 22.05 answers a refused token with HTTP 500 and one error, "Unspecified error",
// and nothing else in the reply names the cause.
bool IsRefusedToken(const SlurmHttpReply& reply) {
  if (reply.status != 500) return false;
  const json body = json::parse(reply.body, nullptr, false);
  return !body.is_discarded() && slurm_json::ErrorText(body) == "Unspecified error";
}

bool HasErrorNumber(const json& reply, int64_t number) {
  if (!reply.is_object() || !reply.contains("errors") || !reply["errors"].is_array()) return false;
  for (const json& error : reply["errors"]) {
    absl::StatusOr<std::optional<int64_t>> value = slurm_json::Integer(error, "error_number");
    if (value.ok() && *value == number) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlurmTransport>> NewHttpSlurmTransport(SlurmHttpOptions options) {
  static const std::regex kUrl(R"(^https?://[^/\s:]+(:[0-9]{1,5})?/?$)");
  if (!std::regex_match(options.url, kUrl)) {
    return absl::InvalidArgumentError(fmt::format(
        "slurm url: \"{}\" is not http(s)://host[:port] (slurmrestd's address)", options.url));
  }
  while (options.url.ends_with('/')) options.url.pop_back();
  return std::make_unique<HttpSlurmTransport>(std::move(options));
}

SlurmRestClient::SlurmRestClient(SlurmTransport* transport, std::string api_version)
    : transport_(transport), prefix_("/slurm/" + api_version) {}

absl::StatusOr<SlurmHttpReply> SlurmRestClient::Call(std::string_view method,
                                                     std::string_view resource,
                                                     const std::string& body) {
  const std::string path = prefix_ + std::string(resource);
  absl::StatusOr<SlurmHttpReply> reply = transport_->Send(method, path, body);
  if (!reply.ok()) return reply.status();
  if (reply->status == 401 || reply->status == 403) {
    return absl::UnauthenticatedError(fmt::format(
        "{} {}: HTTP {}: slurmrestd refused the credentials (check the user name and the JWT)",
        method, path, reply->status));
  }
  if (IsRefusedToken(*reply)) {
    return absl::UnauthenticatedError(fmt::format(
        "{} {}: HTTP 500 \"Unspecified error\", slurmrestd's answer to a token it refuses "
        "(check the user name and the JWT)",
        method, path));
  }
  return reply;
}

absl::StatusOr<SlurmHttpReply> SlurmRestClient::Read(std::string_view resource) {
  absl::StatusOr<SlurmHttpReply> reply = Call("GET", resource, "");
  if (!reply.ok() || reply->status == 200 || reply->status == 304) return reply;
  const json body = json::parse(reply->body, nullptr, false);
  const std::string errors = body.is_discarded() ? "" : slurm_json::ErrorText(body);
  return absl::UnavailableError(fmt::format("GET {}{}: HTTP {}: {}", prefix_, resource,
                                            reply->status,
                                            errors.empty() ? "no error text" : errors));
}

absl::StatusOr<std::string> SlurmRestClient::List(std::string_view resource) {
  absl::StatusOr<SlurmHttpReply> reply = Read(resource);
  if (!reply.ok()) return reply.status();
  if (reply->status != 200) {
    return absl::UnavailableError(
        fmt::format("GET {}{}: HTTP {}: no body", prefix_, resource, reply->status));
  }
  return std::move(reply->body);
}

absl::StatusOr<bool> SlurmRestClient::ServesVersion() {
  absl::StatusOr<SlurmHttpReply> reply = Call("GET", "/ping", "");
  if (!reply.ok()) return reply.status();
  return reply->status != 404;
}

absl::StatusOr<std::string> SlurmRestClient::Nodes() { return List("/nodes"); }

absl::StatusOr<SlurmJobList> SlurmRestClient::Jobs() {
  absl::StatusOr<std::string> body = List("/jobs");
  if (!body.ok()) return body.status();
  return ParseSlurmJobs(*body);
}

absl::StatusOr<std::optional<std::string>> SlurmRestClient::NodesChangedSince(int64_t update_time) {
  absl::StatusOr<SlurmHttpReply> reply =
      Call("GET", fmt::format("/nodes?update_time={}", update_time), "");
  if (reply.ok() && reply->status == 304) return std::nullopt;
  // 22.05's answer to a changed node list is an error with no nodes: read them all.
  if (reply.ok() && reply->status == 200) return std::optional(std::move(reply->body));
  absl::StatusOr<std::string> all = Nodes();
  if (!all.ok()) return all.status();
  return std::optional(*std::move(all));
}

absl::StatusOr<std::optional<SlurmJobList>> SlurmRestClient::JobsChangedSince(int64_t update_time) {
  absl::StatusOr<SlurmHttpReply> reply = Read(fmt::format("/jobs?update_time={}", update_time));
  if (!reply.ok()) return reply.status();
  if (reply->status == 304) return std::nullopt;
  absl::StatusOr<SlurmJobList> jobs = ParseSlurmJobs(reply->body);
  if (!jobs.ok()) return jobs.status();
  if (jobs->unchanged) return std::nullopt;
  return std::optional(*std::move(jobs));
}

absl::StatusOr<int64_t> SlurmRestClient::SlurmTime() {
  absl::StatusOr<std::string> body = List("/diag");
  if (!body.ok()) return body.status();
  absl::StatusOr<int64_t> now = ParseSlurmClock(*body);
  if (!now.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("GET {}/diag: {}", prefix_, std::string(now.status().message())));
  }
  return *now;
}

absl::StatusOr<std::optional<SlurmJob>> SlurmRestClient::Job(int64_t job_id) {
  absl::StatusOr<SlurmHttpReply> reply = Call("GET", fmt::format("/job/{}", job_id), "");
  if (!reply.ok()) return reply.status();
  const json body = json::parse(reply->body, nullptr, false);
  if (HasErrorNumber(body, kInvalidJobId)) return std::nullopt;
  if (reply->status != 200) {
    const std::string errors = body.is_discarded() ? "" : slurm_json::ErrorText(body);
    return absl::UnavailableError(
        fmt::format("GET {}/job/{}: HTTP {}: {}", prefix_, job_id, reply->status, errors));
  }
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(reply->body);
  if (!list.ok()) return list.status();
  for (SlurmJob& job : list->jobs) {
    if (job.id == job_id) return std::move(job);
  }
  return std::nullopt;
}

absl::StatusOr<int64_t> SlurmRestClient::Submit(const std::string& body) {
  absl::StatusOr<SlurmHttpReply> reply = Call("POST", "/job/submit", body);
  if (!reply.ok()) return reply.status();
  return ParseSubmitReply(reply->status, reply->body);
}

absl::Status SlurmRestClient::Signal(int64_t job_id, std::string_view signal) {
  const std::string resource = signal.empty() ? fmt::format("/job/{}", job_id)
                                              : fmt::format("/job/{}?signal={}", job_id, signal);
  absl::StatusOr<SlurmHttpReply> reply = Call("DELETE", resource, "");
  if (!reply.ok()) return reply.status();
  const json body = json::parse(reply->body, nullptr, false);
  if (reply->status == 200 || HasErrorNumber(body, kInvalidJobId)) return absl::OkStatus();
  const std::string errors = body.is_discarded() ? "" : slurm_json::ErrorText(body);
  return absl::UnavailableError(
      fmt::format("DELETE {}{}: HTTP {}: {}", prefix_, resource, reply->status, errors));
}

}  // namespace tessera::agent

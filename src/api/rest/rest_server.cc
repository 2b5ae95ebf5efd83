#include "api/rest/rest_server.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>

#include "api/rest/http_front_end.h"
#include "api/rest/json_views.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "spec/jobspec.h"
#include "spec/queue_document.h"

namespace tessera::api {
namespace {

using Json = nlohmann::ordered_json;
using Request = HttpRequest;
using Response = HttpResponse;
using server::Caller;

// A watch stream waits this long for an event before it checks whether to stop.
constexpr std::chrono::milliseconds kWatchPoll{200};
// Idle polls between two "{}" keep-alive lines: 15 s.
constexpr int kWatchHeartbeatPolls = 75;
constexpr int64_t kMaxLogChunk = int64_t{1} << 20;

// One line of JSON. Text that is not valid UTF-8 (a client's key echoed in an error message)
// is written with replacement characters instead of failing.
std::string JsonLine(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void SendJson(Response& res, int http_status, const Json& body) {
  res.status = http_status;
  res.SetContent(JsonLine(body), "application/json");
}

void SendError(Response& res, const absl::Status& status) {
  HttpError error = StatusToHttpError(status);
  SendJson(res, error.http_status, error.body);
  if (error.http_status == 429 && !res.HasHeader("Retry-After")) {
    res.SetHeader("Retry-After", "1");
  }
}

void SendItems(Response& res, Json items) { SendJson(res, 200, {{"items", std::move(items)}}); }

std::optional<std::string_view> Param(const Request& req, const char* name) {
  auto it = req.params.find(name);
  if (it == req.params.end()) return std::nullopt;
  return it->second;
}

// Query parameter `name` as an integer in [min, max]; `fallback` when absent.
absl::StatusOr<int64_t> IntParam(const Request& req, const char* name, int64_t fallback,
                                 int64_t min, int64_t max) {
  std::optional<std::string_view> text = Param(req, name);
  if (!text.has_value()) return fallback;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (text->empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    return spec::FieldError(name, fmt::format("must be an integer in {}..{}", min, max));
  }
  return value;
}

absl::StatusOr<std::optional<JobPhase>> PhaseParam(const Request& req) {
  std::optional<std::string_view> text = Param(req, "phase");
  if (!text.has_value()) return std::nullopt;
  for (JobPhase phase : {JobPhase::kPending, JobPhase::kAdmitted, JobPhase::kRunning,
                         JobPhase::kSucceeded, JobPhase::kFailed, JobPhase::kCancelled}) {
    if (JobPhaseName(phase) == *text) return phase;
  }
  return spec::FieldError(
      "phase", "must be one of Pending, Admitted, Running, Succeeded, Failed, Cancelled");
}

absl::StatusOr<server::JobStateFilter> StateParam(const Request& req) {
  std::optional<std::string_view> text = Param(req, "state");
  if (!text.has_value() || *text == "all") return server::JobStateFilter::kAll;
  if (*text == "active") return server::JobStateFilter::kActive;
  if (*text == "terminal") return server::JobStateFilter::kTerminal;
  return spec::FieldError("state", "must be all, active or terminal");
}

absl::StatusOr<server::ListOrder> OrderParam(const Request& req) {
  std::optional<std::string_view> text = Param(req, "order");
  if (!text.has_value() || *text == "oldest") return server::ListOrder::kOldestFirst;
  if (*text == "newest") return server::ListOrder::kNewestFirst;
  return spec::FieldError("order", "must be oldest or newest");
}

absl::StatusOr<LogStream> StreamParam(const Request& req) {
  std::optional<std::string_view> text = Param(req, "stream");
  if (!text.has_value() || *text == "stdout") return LogStream::kStdout;
  if (*text == "stderr") return LogStream::kStderr;
  return spec::FieldError("stream", "must be stdout or stderr");
}

bool IsJsonContent(const Request& req) {
  std::string type = req.Header("Content-Type");
  type = type.substr(0, type.find(';'));
  std::erase(type, ' ');
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type == "application/json";
}

// The body of POST .../nodes/{node}:cordon|uncordon|drain: {"reason": "...", "gracePeriod":
// "90s"}, both optional (an empty body is {}); gracePeriod also as a number of seconds.
absl::Status ParseNodeChangeBody(std::string_view body, server::NodeChange& change) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return absl::OkStatus();
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (key == "reason") {
      if (!value.is_string()) return spec::FieldError("reason", "must be a string");
      change.reason = value.get<std::string>();
    } else if (key == "gracePeriod") {
      if (value.is_null()) continue;
      if (!value.is_string() && !value.is_number()) {
        return spec::FieldError("gracePeriod", "must be a duration (\"90s\", \"5m\") or seconds");
      }
      absl::StatusOr<Duration> grace =
          ParseDuration(value.is_string() ? value.get<std::string>() : value.dump(), "gracePeriod");
      if (!grace.ok()) return spec::WithField(grace.status(), "gracePeriod");
      change.grace = *grace;
    } else {
      return spec::FieldError(key, "unknown field (reason and gracePeriod are known)");
    }
  }
  return absl::OkStatus();
}

// {"tenant": "team-a", "role": "tenant"} → tenant and role.
absl::StatusOr<std::pair<std::string, server::Role>> ParseTokenRequest(std::string_view body) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (key != "tenant" && key != "role") return spec::FieldError(key, "unknown key");
  }
  if (!json.contains("tenant") || !json["tenant"].is_string()) {
    return spec::FieldError("tenant", "must be a string");
  }
  server::Role role = server::Role::kTenant;
  if (json.contains("role")) {
    if (json["role"] == "admin") {
      role = server::Role::kAdmin;
    } else if (json["role"] != "tenant") {
      return spec::FieldError("role", "must be admin or tenant");
    }
  }
  return std::pair{json["tenant"].get<std::string>(), role};
}

// {"items": [job, ...]} → each item's job document, or the error that item's decoding gave
// (the document codec's, naming a field of the item). Errors of the request as a whole: not a
// JSON object, a key other than "items", "items" not a list or outside
// 1..kMaxSubmitBatchItems (server::CheckSubmitBatchSize).
absl::StatusOr<std::vector<absl::StatusOr<spec::JobDocument>>> ParseBatchRequest(
    std::string_view body, size_t max_bytes) {
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return absl::InvalidArgumentError(
        "the body must be a JSON object: {\"items\": [job document, ...]}");
  }
  for (const auto& [key, value] : json.items()) {
    if (key != "items") return spec::FieldError(key, "unknown key");
  }
  if (!json.contains("items") || !json["items"].is_array()) {
    return spec::FieldError("items", "must be a list of job documents");
  }
  if (absl::Status s = server::CheckSubmitBatchSize(json["items"].size()); !s.ok()) return s;
  std::vector<absl::StatusOr<spec::JobDocument>> items;
  for (const Json& item : json["items"]) {
    items.push_back(spec::ParseJobDocument(
        item.dump(), {.format = spec::DocumentFormat::kJson, .max_bytes = max_bytes}));
  }
  return items;
}

}  // namespace

class RestServer::Impl {
 public:
  explicit Impl(Options options)
      : options_(options),
        front_(FrontEndOptions(options),
               [this](Request& req, Response& res) { Route(req, res); },
               [this](const Request& req, Response& res) { OnFrontEndError(req, res); }) {
    if (options_.metrics != nullptr) {
      requests_ = &prometheus::BuildCounter()
                       .Name("tessera_http_requests_total")
                       .Help("HTTP requests answered by the REST API, by method, route and code")
                       .Register(*options_.metrics);
    }
  }

  ~Impl() { Stop(); }

  absl::Status Start(const std::string& host, int port);
  int port() const { return front_.port(); }
  void Stop();

 private:
  using Handler = std::function<void(const Caller&, const Request&, Response&)>;
  using PublicHandler = std::function<void(const Request&, Response&)>;
  struct RouteEntry {
    std::string method;  // "GET", "POST", "PUT", "DELETE"
    std::regex pattern;  // the whole path; its captures become Request::path_params
    PublicHandler handler;
    bool on_standby;  // served by a standby (else sent to the leader)
  };

  // One open watch stream; counts itself among the open ones while it lives.
  struct WatchState {
    WatchState(std::unique_ptr<server::EventStream> s, std::atomic<int>* open)
        : stream(std::move(s)), open_streams(open) {}
    ~WatchState() { --*open_streams; }
    std::unique_ptr<server::EventStream> stream;
    std::atomic<int>* open_streams;
    int idle_polls = 0;
  };

  static HttpFrontEnd::Options FrontEndOptions(const Options& options) {
    return {.workers = options.threads,
            .max_queued_requests = options.max_queued_requests,
            .max_connections = options.max_connections,
            .max_body_bytes = options.max_body_bytes,
            .header_timeout = options.header_timeout,
            .body_timeout = options.body_timeout,
            .keep_alive_timeout = options.keep_alive_timeout};
  }

  // Whether a route is served on a standby (Options::standby_leader).
  enum class OnStandby { kLeader, kServe };

  void AddRoutes();
  // Registers `pattern` for `method`; the request is authenticated and rate limited first.
  void Api(const char* method, const char* route, const char* pattern, Handler handler,
           OnStandby on_standby = OnStandby::kLeader);
  // Registers a GET route that needs no token.
  void Public(const char* route, PublicHandler handler, OnStandby on_standby = OnStandby::kLeader);
  // Runs the handler of the first route matching the request; 404 when none does. On a standby,
  // a request no route it serves matches goes to the leader (ToLeader).
  void Route(Request& req, Response& res);
  // A standby's answer to a request it does not serve: 307 to the leader, or 503 while none is
  // known.
  void ToLeader(const Request& req, Response& res, const std::string& leader);
  absl::StatusOr<Caller> Authenticate(const Request& req) const;
  // Takes a token from the caller's bucket; on refusal answers 429 with Retry-After.
  bool Admit(const Caller& caller, Response& res);
  void Count(const std::string& method, std::string_view route, int code);
  // The JSON error body of an answer no handler gave (no route, or the front end's own).
  void OnFrontEndError(const Request& req, Response& res);

  void SubmitJob(const Caller& caller, const Request& req, Response& res);
  void SubmitJobs(const Caller& caller, const Request& req, Response& res);
  void ListJobs(const Caller& caller, const Request& req, Response& res);
  void GetLogs(const Caller& caller, const Request& req, Response& res);
  void WatchEvents(const Caller& caller, const Request& req, Response& res);
  void IssueToken(const Caller& caller, const Request& req, Response& res);
  void Ready(Response& res);
  void Metrics(Response& res);
  // One round of a watch stream: waits for an event and writes it (or a heartbeat). False when
  // the stream is over.
  bool PumpWatch(WatchState& state, StreamWriter& writer);

  const Options options_;
  std::vector<RouteEntry> routes_;  // written by Start only, before serving
  HttpFrontEnd front_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_watches_{0};
};

absl::Status RestServer::Impl::Start(const std::string& host, int port) {
  if (started_.exchange(true)) return absl::FailedPreconditionError("already started");
  if (options_.service == nullptr || options_.auth == nullptr) {
    return absl::InvalidArgumentError("a RestServer needs a JobService and an Authenticator");
  }
  if (options_.threads < 2 || options_.max_watch_streams < 0 ||
      options_.max_watch_streams >= options_.threads) {
    return absl::InvalidArgumentError("threads must be >= 2 and above max_watch_streams");
  }
  AddRoutes();
  return front_.Start(host, port);
}

void RestServer::Impl::Stop() {
  stopping_ = true;  // open watch streams end
  front_.Stop();
}

void RestServer::Impl::Route(Request& req, Response& res) {
  const bool standby = options_.standby_leader != nullptr;
  const std::string leader = standby ? options_.standby_leader() : "";
  if (standby) res.SetHeader("X-Tessera-Standby", "true");
  if (!leader.empty()) res.SetHeader("X-Tessera-Leader", leader);
  std::smatch match;
  for (const RouteEntry& route : routes_) {
    // HEAD is answered as GET; the front end sends no body.
    const bool method =
        route.method == req.method || (req.method == "HEAD" && route.method == "GET");
    if (!method || !std::regex_match(req.path, match, route.pattern)) continue;
    if (standby && !route.on_standby) return ToLeader(req, res, leader);
    for (size_t i = 1; i < match.size(); ++i) req.path_params.push_back(match[i].str());
    return route.handler(req, res);
  }
  if (standby) return ToLeader(req, res, leader);
  res.status = 404;
  OnFrontEndError(req, res);
}

void RestServer::Impl::ToLeader(const Request& req, Response& res, const std::string& leader) {
  if (leader.empty()) {
    res.SetHeader("Retry-After", "1");
    SendError(res,
              absl::UnavailableError("this replica is a standby and no leader is elected yet"));
  } else {
    res.SetHeader("Location", leader + req.target);
    SendJson(res, 307,
             ErrorBody(absl::StatusCode::kUnavailable,
                       fmt::format("this replica is a standby: the leader is {}", leader)));
  }
  Count(req.method, "leader", res.status);
}

void RestServer::Impl::Api(const char* method, const char* route, const char* pattern,
                           Handler handler, OnStandby on_standby) {
  routes_.push_back(
      {method, std::regex(pattern),
       [this, route, handler = std::move(handler)](const Request& req, Response& res) {
         absl::StatusOr<Caller> caller = Authenticate(req);
         if (!caller.ok()) {
           SendError(res, caller.status());
           res.SetHeader("WWW-Authenticate", "Bearer");
         } else if (Admit(*caller, res)) {
           handler(*caller, req, res);
         }
         Count(req.method, route, res.status);
       },
       on_standby == OnStandby::kServe});
}

void RestServer::Impl::Public(const char* route, PublicHandler handler, OnStandby on_standby) {
  routes_.push_back(
      {"GET", std::regex(route),
       [this, route, handler = std::move(handler)](const Request& req, Response& res) {
         handler(req, res);
         Count(req.method, route, res.status);
       },
       on_standby == OnStandby::kServe});
}

absl::StatusOr<Caller> RestServer::Impl::Authenticate(const Request& req) const {
  if (!req.HasHeader("Authorization")) {
    return absl::UnauthenticatedError("missing bearer token (Authorization: Bearer <token>)");
  }
  const std::string value = req.Header("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  const bool bearer = value.size() > kScheme.size() &&
                      std::equal(kScheme.begin(), kScheme.end(), value.begin(), [](char a, char b) {
                        return a == std::tolower(static_cast<unsigned char>(b));
                      });
  if (!bearer) {
    return absl::UnauthenticatedError("the Authorization header must be \"Bearer <token>\"");
  }
  std::string_view token(value);
  token.remove_prefix(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return options_.auth->Authenticate(token);
}

bool RestServer::Impl::Admit(const Caller& caller, Response& res) {
  if (options_.rate_limiter == nullptr) return true;
  Duration retry_after{0};
  absl::Status admitted = options_.rate_limiter->Admit(caller.tenant, &retry_after);
  if (admitted.ok()) return true;
  const int64_t seconds = std::max<int64_t>(1, (retry_after.count() + 999) / 1000);
  res.SetHeader("Retry-After", std::to_string(seconds));
  SendError(res, admitted);
  return false;
}

void RestServer::Impl::Count(const std::string& method, std::string_view route, int code) {
  if (requests_ == nullptr) return;
  requests_
      ->Add({{"method", method}, {"route", std::string(route)}, {"code", std::to_string(code)}})
      .Increment();
}

void RestServer::Impl::OnFrontEndError(const Request& req, Response& res) {
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
  std::string message = "malformed request";
  if (res.status == 404) {
    code = absl::StatusCode::kNotFound;
    message = fmt::format("no route for {} {}", req.method, req.path);
  } else if (res.status == 413) {
    code = absl::StatusCode::kResourceExhausted;
    message = fmt::format("the request body exceeds {} bytes", options_.max_body_bytes);
  } else if (res.status == 431) {
    code = absl::StatusCode::kResourceExhausted;
    message = "the request header is too large";
  } else if (res.status == 503) {
    code = absl::StatusCode::kUnavailable;
    message = "the server is busy; retry later";
  } else if (res.status >= 500) {
    code = absl::StatusCode::kInternal;
    message = "internal error";
  }
  SendJson(res, res.status, ErrorBody(code, message));
  // At the connection cap nothing of the request was read.
  if (!req.method.empty()) Count(req.method, "other", res.status);
}

void RestServer::Impl::AddRoutes() {
  server::JobService* service = options_.service;
  // The job id of a /api/v1/jobs/{id}... route.
  auto id = [](const Request& req) { return req.path_params[0]; };
  auto send_job = [](Response& res, absl::StatusOr<server::JobView> job) {
    if (!job.ok()) return SendError(res, job.status());
    SendJson(res, 200, JobViewToJson(*job));
  };

  Api("POST", "/api/v1/jobs", "/api/v1/jobs",
      [this](const Caller& c, const Request& req, Response& res) { SubmitJob(c, req, res); });
  Api("POST", "/api/v1/jobs:batch", "/api/v1/jobs:batch",
      [this](const Caller& c, const Request& req, Response& res) { SubmitJobs(c, req, res); });
  Api(
      "GET", "/api/v1/jobs", "/api/v1/jobs",
      [this](const Caller& c, const Request& req, Response& res) { ListJobs(c, req, res); },
      OnStandby::kServe);
  Api(
      "GET", "/api/v1/jobs/{id}", R"(/api/v1/jobs/([^/]+))",
      [=](const Caller& c, const Request& req, Response& res) {
        send_job(res, service->Get(c, id(req)));
      },
      OnStandby::kServe);
  Api("POST", "/api/v1/jobs/{id}/cancel", R"(/api/v1/jobs/([^/]+)/cancel)",
      [=](const Caller& c, const Request& req, Response& res) {
        send_job(res, service->Cancel(c, id(req)));
      });
  Api("DELETE", "/api/v1/jobs/{id}", R"(/api/v1/jobs/([^/]+))",
      [=](const Caller& c, const Request& req, Response& res) {
        send_job(res, service->Cancel(c, id(req)));
      });
  Api(
      "GET", "/api/v1/jobs/{id}/events", R"(/api/v1/jobs/([^/]+)/events)",
      [=](const Caller& c, const Request& req, Response& res) {
        absl::StatusOr<std::vector<server::JobEvent>> events = service->Events(c, id(req));
        if (!events.ok()) return SendError(res, events.status());
        Json items = Json::array();
        for (const server::JobEvent& event : *events) items.push_back(JobEventToJson(event));
        SendItems(res, std::move(items));
      },
      OnStandby::kServe);
  Api("GET", "/api/v1/jobs/{id}/explain", R"(/api/v1/jobs/([^/]+)/explain)",
      [=](const Caller& c, const Request& req, Response& res) {
        absl::StatusOr<server::JobExplanation> explanation = service->Explain(c, id(req));
        if (!explanation.ok()) return SendError(res, explanation.status());
        SendJson(res, 200, JobExplanationToJson(*explanation));
      });
  Api("GET", "/api/v1/jobs/{id}/logs", R"(/api/v1/jobs/([^/]+)/logs)",
      [this](const Caller& c, const Request& req, Response& res) { GetLogs(c, req, res); });
  Api("GET", "/api/v1/watch", "/api/v1/watch",
      [this](const Caller& c, const Request& req, Response& res) { WatchEvents(c, req, res); });
  auto send_queues = [](Response& res, const std::vector<server::QueueView>& queues) {
    Json items = Json::array();
    for (const server::QueueView& queue : queues) items.push_back(QueueViewToJson(queue));
    SendItems(res, std::move(items));
  };
  Api("GET", "/api/v1/queues", "/api/v1/queues",
      [=](const Caller&, const Request&, Response& res) { send_queues(res, service->Queues()); });
  Api("PUT", "/api/v1/queues", "/api/v1/queues",
      [=](const Caller& c, const Request& req, Response& res) {
        absl::StatusOr<std::vector<QueueSpec>> tree = spec::ParseQueueDocument(req.body);
        if (!tree.ok()) return SendError(res, tree.status());
        absl::StatusOr<std::vector<server::QueueView>> queues =
            service->ApplyQueues(c, *std::move(tree));
        if (!queues.ok()) return SendError(res, queues.status());
        send_queues(res, *queues);
      });
  Api("PUT", "/api/v1/queues/{name}", R"(/api/v1/queues/([^/]+))",
      [=](const Caller& c, const Request& req, Response& res) {
        absl::StatusOr<QueueSpec> queue = spec::ParseQueueObject(req.body, id(req));
        if (!queue.ok()) return SendError(res, queue.status());
        absl::StatusOr<server::QueueView> view = service->ApplyQueue(c, *std::move(queue));
        if (!view.ok()) return SendError(res, view.status());
        SendJson(res, 200, QueueViewToJson(*view));
      });
  Api("DELETE", "/api/v1/queues/{name}", R"(/api/v1/queues/([^/]+))",
      [=](const Caller& c, const Request& req, Response& res) {
        if (absl::Status s = service->DeleteQueue(c, id(req)); !s.ok()) return SendError(res, s);
        send_queues(res, service->Queues());
      });
  Api("GET", "/api/v1/nodes", "/api/v1/nodes",
      [=](const Caller&, const Request&, Response& res) {
        Json items = Json::array();
        for (const server::NodeView& node : service->Nodes()) items.push_back(NodeViewToJson(node));
        SendItems(res, std::move(items));
      });
  const auto send_clusters = [=](Response& res) {
    Json items = Json::array();
    for (const server::ClusterView& cluster : service->Clusters()) {
      items.push_back(ClusterViewToJson(cluster));
    }
    SendItems(res, std::move(items));
  };
  Api("GET", "/api/v1/clusters", "/api/v1/clusters",
      [=](const Caller&, const Request&, Response& res) { send_clusters(res); });
  Api("DELETE", "/api/v1/clusters/{name}", R"(/api/v1/clusters/([^/]+))",
      [=](const Caller& c, const Request& req, Response& res) {
        if (absl::Status s = service->DeleteCluster(c, id(req)); !s.ok()) {
          return SendError(res, s);
        }
        send_clusters(res);
      });
  Api("POST", "/api/v1/clusters/{cluster}/nodes/{node}:{action}",
      R"(/api/v1/clusters/([^/]+)/nodes/([^/:]+):(cordon|uncordon|drain))",
      [=](const Caller& c, const Request& req, Response& res) {
        server::NodeChange change{.cluster = req.path_params[0],
                                  .node = req.path_params[1],
                                  .action = *server::ParseNodeAction(req.path_params[2])};
        if (absl::Status s = ParseNodeChangeBody(req.body, change); !s.ok()) {
          return SendError(res, s);
        }
        absl::StatusOr<server::NodeView> node = service->ChangeNode(c, change);
        if (!node.ok()) return SendError(res, node.status());
        SendJson(res, 200, NodeViewToJson(*node));
      });
  Api("POST", "/api/v1/tokens", "/api/v1/tokens",
      [this](const Caller& c, const Request& req, Response& res) { IssueToken(c, req, res); });

  Public(
      "/healthz", [](const Request&, Response& res) { res.SetContent("ok\n", "text/plain"); },
      OnStandby::kServe);
  Public(
      "/readyz", [this](const Request&, Response& res) { Ready(res); }, OnStandby::kServe);
  Public("/metrics", [this](const Request&, Response& res) { Metrics(res); });
}

void RestServer::Impl::SubmitJob(const Caller& caller, const Request& req, Response& res) {
  const spec::ParseOptions parse{
      .format = IsJsonContent(req) ? spec::DocumentFormat::kJson : spec::DocumentFormat::kAuto,
      .source = "request",
      .max_bytes = options_.max_body_bytes};
  absl::StatusOr<spec::JobDocument> document = spec::ParseJobDocument(req.body, parse);
  if (!document.ok()) return SendError(res, document.status());
  absl::StatusOr<server::SubmitResult> result =
      options_.service->Submit(caller, *std::move(document));
  if (!result.ok()) return SendError(res, result.status());
  res.SetHeader("Location", "/api/v1/jobs/" + result->job.document.metadata.id);
  SendJson(res, result->created ? 201 : 200, JobViewToJson(result->job));
}

void RestServer::Impl::SubmitJobs(const Caller& caller, const Request& req, Response& res) {
  absl::StatusOr<std::vector<absl::StatusOr<spec::JobDocument>>> items =
      ParseBatchRequest(req.body, options_.max_body_bytes);
  if (!items.ok()) return SendError(res, items.status());
  std::vector<spec::JobDocument> documents;
  for (absl::StatusOr<spec::JobDocument>& item : *items) {
    if (item.ok()) documents.push_back(*std::move(item));
  }
  absl::StatusOr<server::SubmitBatchResult> submitted =
      documents.empty() ? server::SubmitBatchResult{}
                        : options_.service->SubmitBatch(caller, std::move(documents));
  if (!submitted.ok()) return SendError(res, submitted.status());
  Json answers = Json::array();
  size_t next = 0;  // the next result of `submitted`
  for (size_t i = 0; i < items->size(); ++i) {
    const absl::StatusOr<server::SubmitResult> result =
        (*items)[i].ok() ? std::move((*submitted)[next++])
                         : absl::StatusOr<server::SubmitResult>((*items)[i].status());
    if (result.ok()) {
      answers.push_back({{"job", JobViewToJson(result->job)}, {"created", result->created}});
    } else {
      answers.push_back(StatusToHttpError(spec::ItemError("items", i, result.status())).body);
    }
  }
  SendItems(res, std::move(answers));
}

void RestServer::Impl::ListJobs(const Caller& caller, const Request& req, Response& res) {
  absl::StatusOr<std::optional<JobPhase>> phase = PhaseParam(req);
  if (!phase.ok()) return SendError(res, phase.status());
  absl::StatusOr<server::JobStateFilter> state = StateParam(req);
  if (!state.ok()) return SendError(res, state.status());
  absl::StatusOr<server::ListOrder> order = OrderParam(req);
  if (!order.ok()) return SendError(res, order.status());
  absl::StatusOr<int64_t> limit = IntParam(req, "limit", 100, 1, 1000);
  if (!limit.ok()) return SendError(res, limit.status());
  const server::ListJobsRequest request{.phase = *phase,
                                        .state = *state,
                                        .queue = req.Param("queue"),
                                        .name = req.Param("name"),
                                        .tenant = req.Param("tenant"),
                                        .order = *order,
                                        .limit = static_cast<int32_t>(*limit),
                                        .page_token = req.Param("pageToken")};
  absl::StatusOr<server::ListJobsResult> result = options_.service->List(caller, request);
  if (!result.ok()) return SendError(res, result.status());
  Json items = Json::array();
  for (const server::JobView& job : result->jobs) items.push_back(JobViewToJson(job));
  SendJson(res, 200,
           {{"items", std::move(items)},
            {"nextPageToken", result->next_page_token},
            {"remainingItemCount", result->remaining}});
}

void RestServer::Impl::GetLogs(const Caller& caller, const Request& req, Response& res) {
  absl::StatusOr<LogStream> stream = StreamParam(req);
  if (!stream.ok()) return SendError(res, stream.status());
  absl::StatusOr<int64_t> offset =
      IntParam(req, "offset", 0, 0, std::numeric_limits<int64_t>::max());
  if (!offset.ok()) return SendError(res, offset.status());
  absl::StatusOr<int64_t> limit = IntParam(req, "limit", kMaxLogChunk, 1, kMaxLogChunk);
  if (!limit.ok()) return SendError(res, limit.status());
  absl::StatusOr<LogChunk> chunk = options_.service->Logs(
      caller, req.path_params[0],
      {.task = req.Param("task"), .stream = *stream, .offset = *offset, .limit = *limit});
  if (!chunk.ok()) return SendError(res, chunk.status());
  res.SetHeader("X-Tessera-Next-Offset", std::to_string(chunk->next_offset));
  res.SetHeader("X-Tessera-Log-End", chunk->end ? "true" : "false");
  res.SetContent(chunk->data, "text/plain");
}

void RestServer::Impl::WatchEvents(const Caller& caller, const Request& req, Response& res) {
  absl::StatusOr<int64_t> after =
      IntParam(req, "afterSequence", -1, -1, std::numeric_limits<int64_t>::max());
  if (!after.ok()) return SendError(res, after.status());
  if (++open_watches_ > options_.max_watch_streams) {
    --open_watches_;
    return SendError(res, absl::UnavailableError("too many open watch streams; retry later"));
  }
  auto stream = options_.service->Watch(
      caller, {.job_id = req.Param("job"), .after_sequence = *after});
  if (!stream.ok()) {
    --open_watches_;
    return SendError(res, stream.status());
  }
  auto state = std::make_shared<WatchState>(*std::move(stream), &open_watches_);
  res.content_type = "application/x-ndjson";
  res.stream = [this, state](StreamWriter& writer) { return PumpWatch(*state, writer); };
}

bool RestServer::Impl::PumpWatch(WatchState& state, StreamWriter& writer) {
  auto write_line = [&writer](const Json& json) { return writer.Write(JsonLine(json)); };
  if (!writer.Open() || stopping_) return false;  // the client went away, or the server stops
  absl::StatusOr<std::optional<server::JobEvent>> next = state.stream->Next(kWatchPoll);
  if (!next.ok()) {
    // Cancelled: the service stops, the stream simply ends. Anything else (a reader that fell
    // behind) is said on a last line, so the client knows to re-read and watch again.
    if (next.status().code() != absl::StatusCode::kCancelled) {
      write_line(StatusToHttpError(next.status()).body);
    }
    return false;
  }
  if (next->has_value()) {
    state.idle_polls = 0;
    return write_line(JobEventToJson(**next));
  }
  if (++state.idle_polls >= kWatchHeartbeatPolls) {
    state.idle_polls = 0;
    return write_line(Json::object());
  }
  return true;
}

void RestServer::Impl::IssueToken(const Caller& caller, const Request& req, Response& res) {
  if (!caller.admin) {
    return SendError(res, absl::PermissionDeniedError("only admins may issue tokens"));
  }
  absl::StatusOr<std::pair<std::string, server::Role>> request = ParseTokenRequest(req.body);
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<server::IssuedToken> issued =
      options_.auth->IssueToken(request->first, request->second);
  if (!issued.ok()) {
    absl::Status status = issued.status();
    if (status.code() == absl::StatusCode::kInvalidArgument)
      status = spec::WithField(status, "tenant");
    return SendError(res, status);
  }
  SendJson(res, 201,
           {{"token", issued->token},
            {"tenant", issued->tenant},
            {"role", issued->role == server::Role::kAdmin ? "admin" : "tenant"}});
}

void RestServer::Impl::Ready(Response& res) {
  if (options_.standby_leader != nullptr) {
    const std::string leader = options_.standby_leader();
    return SendError(res, absl::UnavailableError(
                              leader.empty() ? "a standby: no leader is elected yet"
                                             : fmt::format("a standby: the leader is {}", leader)));
  }
  if (options_.service->Ready()) return res.SetContent("ready\n", "text/plain");
  SendError(res, absl::UnavailableError("not ready: the state is being rebuilt from the store"));
}

void RestServer::Impl::Metrics(Response& res) {
  if (options_.metrics == nullptr) {
    return SendJson(res, 404, ErrorBody(absl::StatusCode::kNotFound, "metrics are disabled"));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, options_.metrics->Collect());
  res.SetContent(out.str(), "text/plain; version=0.0.4");
}

RestServer::RestServer(Options options) : impl_(std::make_unique<Impl>(options)) {}

RestServer::~RestServer() = default;

absl::Status RestServer::Start(const std::string& host, int port) {
  return impl_->Start(host, port);
}

int RestServer::port() const { return impl_->port(); }

void RestServer::Stop() { impl_->Stop(); }

}  // namespace tessera::api

// FakeApiServer: the HTTP side — listening, authentication, and the list, watch, create,
// delete and log endpoints (fake_api_server.h).
#include "agent/kubernetes/testing/fake_api_server.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/kubernetes/testing/fake_objects.h"
#include "fmt/format.h"

namespace tessera::agent::k8s::testing {
namespace {

using httplib::Request;
using httplib::Response;

constexpr auto kWatchPoll = std::chrono::milliseconds(100);
constexpr auto kBookmarkAfter = std::chrono::seconds(1);
constexpr int kDefaultWatchSeconds = 1800;
constexpr int kThreads = 32;
constexpr char kMetricsGroupVersion[] = "metrics.k8s.io/v1beta1";

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json StatusObject(int code, std::string_view reason, std::string_view message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

void SendStatus(Response& res, int code, std::string_view reason, std::string_view message) {
  res.status = code;
  res.set_content(Dump(StatusObject(code, reason, message)), "application/json");
}

void SendJson(Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(Dump(body), "application/json");
}

std::string KindOf(const std::string& resource) {
  if (resource == "nodes") return "Node";
  return resource == "services" ? "Service" : "Pod";
}

bool IsWatch(const Request& req) {
  return req.has_param("watch") && req.get_param_value("watch") != "false" &&
         req.get_param_value("watch") != "0";
}

// A label selector: k=v, k==v, k!=v, k, !k, comma-separated.
struct Requirement {
  enum class Op { kEquals, kNotEquals, kExists, kNotExists } op = Op::kExists;
  std::string key;
  std::string value;
};

std::vector<Requirement> ParseSelector(const std::string& text) {
  std::vector<Requirement> requirements;
  for (absl::string_view piece : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    std::string_view part(piece.data(), piece.size());
    Requirement r;
    if (size_t at = part.find("!="); at != std::string_view::npos) {
      r = {Requirement::Op::kNotEquals, std::string(part.substr(0, at)),
           std::string(part.substr(at + 2))};
    } else if (size_t eq = part.find("=="); eq != std::string_view::npos) {
      r = {Requirement::Op::kEquals, std::string(part.substr(0, eq)),
           std::string(part.substr(eq + 2))};
    } else if (size_t one = part.find('='); one != std::string_view::npos) {
      r = {Requirement::Op::kEquals, std::string(part.substr(0, one)),
           std::string(part.substr(one + 1))};
    } else if (part.starts_with("!")) {
      r = {Requirement::Op::kNotExists, std::string(part.substr(1)), ""};
    } else {
      r = {Requirement::Op::kExists, std::string(part), ""};
    }
    r.key = std::string(absl::StripAsciiWhitespace(r.key));
    r.value = std::string(absl::StripAsciiWhitespace(r.value));
    requirements.push_back(std::move(r));
  }
  return requirements;
}

bool Matches(const std::vector<Requirement>& selector, const Json& object) {
  const Json* labels = nullptr;
  if (object.contains("metadata") && object["metadata"].is_object() &&
      object["metadata"].contains("labels") && object["metadata"]["labels"].is_object()) {
    labels = &object["metadata"]["labels"];
  }
  for (const Requirement& r : selector) {
    const bool has = labels != nullptr && labels->contains(r.key);
    const std::string value =
        has && (*labels)[r.key].is_string() ? (*labels)[r.key].get<std::string>() : "";
    switch (r.op) {
      case Requirement::Op::kEquals:
        if (!has || value != r.value) return false;
        break;
      case Requirement::Op::kNotEquals:
        if (has && value == r.value) return false;
        break;
      case Requirement::Op::kExists:
        if (!has) return false;
        break;
      case Requirement::Op::kNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

bool IsDnsSubdomain(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

// A Service's name: a DNS-1035 label (lower-case alphanumerics and '-', at most 63, starting
// with a letter and ending with an alphanumeric).
bool IsDns1035Label(const std::string& name) {
  if (name.empty() || name.size() > 63 || name.front() < 'a' || name.front() > 'z') return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(name.back()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// Parses one PEM certificate or key; nullptr when malformed.
X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

EVP_PKEY* ReadKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return key;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FakeApiServer>> FakeApiServer::Start(FakeApiServerOptions options) {
  auto server = std::unique_ptr<FakeApiServer>(new FakeApiServer(std::move(options)));
  if (absl::Status status = server->Listen(); !status.ok()) return status;
  return server;
}

FakeApiServer::FakeApiServer(FakeApiServerOptions options) : options_(std::move(options)) {}

absl::Status FakeApiServer::Listen() {
  if (!options_.tls_cert_pem.empty()) {
    X509* cert = ReadCert(options_.tls_cert_pem);
    EVP_PKEY* key = ReadKey(options_.tls_key_pem);
    X509_STORE* client_ca = nullptr;
    if (!options_.client_ca_pem.empty()) {
      client_ca = X509_STORE_new();
      X509* ca = ReadCert(options_.client_ca_pem);
      if (ca != nullptr) X509_STORE_add_cert(client_ca, ca);
      X509_free(ca);
    }
    if (cert != nullptr && key != nullptr) {
      http_ = std::make_unique<httplib::SSLServer>(cert, key, client_ca);
    } else if (client_ca != nullptr) {
      X509_STORE_free(client_ca);
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    if (http_ == nullptr || !http_->is_valid()) {
      return absl::InvalidArgumentError("fake API server: bad TLS certificate or key");
    }
  } else {
    http_ = std::make_unique<httplib::Server>();
  }
  http_->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  http_->set_tcp_nodelay(true);
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  AddRoutes();
  port_ = http_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return absl::UnavailableError("fake API server: cannot bind 127.0.0.1");
  serve_thread_ = std::thread([this] { http_->listen_after_bind(); });
  while (!http_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  reaper_thread_ = std::thread([this] { ReaperLoop(); });
  return absl::OkStatus();
}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (reaper_thread_.joinable()) reaper_thread_.join();
  if (serve_thread_.joinable()) {
    http_->stop();
    serve_thread_.join();
  }
}

std::string FakeApiServer::url() const {
  return fmt::format("{}://127.0.0.1:{}", options_.tls_cert_pem.empty() ? "http" : "https", port_);
}

// ---- HTTP ----

void FakeApiServer::Record(const Request& req) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.push_back(fmt::format("{} {}", req.method, req.target));
}

bool FakeApiServer::Authorized(const Request& req, Response& res) {
  if (options_.token.empty()) return true;
  if (req.get_header_value("Authorization") == "Bearer " + options_.token) return true;
  SendStatus(res, 401, "Unauthorized", "Unauthorized");
  return false;
}

void FakeApiServer::AddRoutes() {
  http_->set_pre_routing_handler([this](const Request& req, Response& res) {
    Record(req);
    return Authorized(req, res) ? httplib::Server::HandlerResponse::Unhandled
                                : httplib::Server::HandlerResponse::Handled;
  });
  http_->Get("/version", [](const Request&, Response& res) {
    SendJson(res, 200,
             {{"major", "1"},
              {"minor", "30"},
              {"gitVersion", "v1.30.0-tessera-fixture"},
              {"platform", "linux/amd64"}});
  });
  http_->Get("/api", [this](const Request&, Response& res) {
    SendJson(res, 200,
             {{"kind", "APIVersions"},
              {"versions", {"v1"}},
              {"serverAddressByClientCIDRs",
               Json::array({{{"clientCIDR", "0.0.0.0/0"},
                             {"serverAddress", fmt::format("127.0.0.1:{}", port_)}}})}});
  });
  http_->Get("/apis", [this](const Request&, Response& res) {
    Json groups = Json::array();
    std::lock_guard<std::mutex> lock(mu_);
    if (node_metrics_.has_value()) {
      const Json version = {{"groupVersion", kMetricsGroupVersion}, {"version", "v1beta1"}};
      groups.push_back({{"name", "metrics.k8s.io"},
                        {"versions", Json::array({version})},
                        {"preferredVersion", version}});
    }
    SendJson(res, 200, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}});
  });
  http_->Get("/api/v1", [](const Request&, Response& res) {
    auto resource = [](const char* name, const char* kind, bool namespaced, Json verbs) {
      return Json{{"name", name},
                  {"singularName", ""},
                  {"namespaced", namespaced},
                  {"kind", kind},
                  {"verbs", std::move(verbs)}};
    };
    SendJson(res, 200,
             {{"kind", "APIResourceList"},
              {"groupVersion", "v1"},
              {"resources",
               Json::array(
                   {resource("nodes", "Node", false, {"get", "list", "watch"}),
                    resource("pods", "Pod", true, {"create", "delete", "get", "list", "watch"}),
                    resource("pods/log", "Pod", true, {"get"}),
                    resource("services", "Service", true, {"create", "delete", "get", "list"})})}});
  });
  http_->Get("/api/v1/nodes", [this](const Request& req, Response& res) {
    if (IsWatch(req)) {
      return Watch("nodes", "", req, res);
    }
    List("nodes", "", req, res);
  });
  http_->Get(R"(/api/v1/nodes/([^/]+))", [this](const Request& req, Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = nodes_.find(req.matches[1].str());
    if (it == nodes_.end()) {
      return SendStatus(res, 404, "NotFound",
                        fmt::format("nodes \"{}\" not found", req.matches[1].str()));
    }
    SendJson(res, 200, it->second);
  });
  auto pods = [this](const std::string& ns, const Request& req, Response& res) {
    if (IsWatch(req)) {
      return Watch("pods", ns, req, res);
    }
    List("pods", ns, req, res);
  };
  http_->Get("/api/v1/pods", [pods](const Request& req, Response& res) { pods("", req, res); });
  http_->Get(R"(/api/v1/namespaces/([^/]+)/pods)",
             [pods](const Request& req, Response& res) { pods(req.matches[1].str(), req, res); });
  http_->Get(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))",
             [this](const Request& req, Response& res) {
               std::lock_guard<std::mutex> lock(mu_);
               auto it = pods_.find({req.matches[1].str(), req.matches[2].str()});
               if (it == pods_.end()) {
                 return SendStatus(res, 404, "NotFound",
                                   fmt::format("pods \"{}\" not found", req.matches[2].str()));
               }
               SendJson(res, 200, it->second);
             });
  http_->Get(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/log)",
             [this](const Request& req, Response& res) {
               PodLog(req.matches[1].str(), req.matches[2].str(), req, res);
             });
  http_->Post(R"(/api/v1/namespaces/([^/]+)/pods)", [this](const Request& req, Response& res) {
    CreatePod(req.matches[1].str(), req, res);
  });
  http_->Delete(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))",
                [this](const Request& req, Response& res) {
                  DeletePod(req.matches[1].str(), req.matches[2].str(), req, res);
                });
  auto services = [this](const std::string& ns, const Request& req, Response& res) {
    if (IsWatch(req)) {
      return SendStatus(res, 405, "MethodNotAllowed",
                        "the fixture does not serve watches of services");
    }
    List("services", ns, req, res);
  };
  http_->Get("/api/v1/services",
             [services](const Request& req, Response& res) { services("", req, res); });
  http_->Get(
      R"(/api/v1/namespaces/([^/]+)/services)",
      [services](const Request& req, Response& res) { services(req.matches[1].str(), req, res); });
  http_->Get(R"(/api/v1/namespaces/([^/]+)/services/([^/]+))",
             [this](const Request& req, Response& res) {
               std::lock_guard<std::mutex> lock(mu_);
               auto it = services_.find({req.matches[1].str(), req.matches[2].str()});
               if (it == services_.end()) {
                 return SendStatus(res, 404, "NotFound",
                                   fmt::format("services \"{}\" not found", req.matches[2].str()));
               }
               SendJson(res, 200, it->second);
             });
  http_->Post(R"(/api/v1/namespaces/([^/]+)/services)", [this](const Request& req, Response& res) {
    CreateService(req.matches[1].str(), req, res);
  });
  http_->Delete(R"(/api/v1/namespaces/([^/]+)/services/([^/]+))",
                [this](const Request& req, Response& res) {
                  DeleteService(req.matches[1].str(), req.matches[2].str(), res);
                });
  auto not_found = [](const Request&, Response& res) {
    SendStatus(res, 404, "NotFound", "the server could not find the requested resource");
  };
  http_->Get("/apis/metrics.k8s.io/v1beta1/nodes",
             [this, not_found](const Request& req, Response& res) {
               std::lock_guard<std::mutex> lock(mu_);
               if (!node_metrics_.has_value()) return not_found(req, res);
               SendJson(res, 200,
                        {{"kind", "NodeMetricsList"},
                         {"apiVersion", kMetricsGroupVersion},
                         {"metadata", Json::object()},
                         {"items", *node_metrics_}});
             });
  http_->Get(".*", not_found);
  http_->Post(".*", not_found);
  http_->Put(".*", not_found);
  http_->Patch(".*", not_found);
  http_->Delete(".*", not_found);
}

void FakeApiServer::List(const std::string& resource, const std::string& ns, const Request& req,
                         Response& res) {
  const std::vector<Requirement> selector = ParseSelector(req.get_param_value("labelSelector"));
  Json items = Json::array();
  std::lock_guard<std::mutex> lock(mu_);
  if (resource == "nodes") {
    for (const auto& [name, node] : nodes_) {
      if (Matches(selector, node)) items.push_back(node);
    }
  } else {
    for (const auto& [key, object] : resource == "services" ? services_ : pods_) {
      if ((ns.empty() || key.first == ns) && Matches(selector, object)) items.push_back(object);
    }
  }
  SendJson(res, 200,
           {{"kind", KindOf(resource) + "List"},
            {"apiVersion", "v1"},
            {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
            {"items", items}});
}

void FakeApiServer::Watch(const std::string& resource, const std::string& ns, const Request& req,
                          Response& res) {
  struct State {
    std::string resource;
    std::string ns;
    std::vector<Requirement> selector;
    int64_t cursor = 0;
    int64_t generation = 0;
    bool bookmarks = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point last_sent;
    std::vector<std::string> pending;  // lines to send first
    bool end_after_pending = false;
  };
  auto state = std::make_shared<State>();
  state->resource = resource;
  state->ns = ns;
  state->selector = ParseSelector(req.get_param_value("labelSelector"));
  state->bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  int timeout = kDefaultWatchSeconds;
  if (req.has_param("timeoutSeconds") &&
      (!absl::SimpleAtoi(req.get_param_value("timeoutSeconds"), &timeout) || timeout < 0)) {
    return SendStatus(res, 400, "BadRequest", "timeoutSeconds: must be a non-negative integer");
  }
  state->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  state->last_sent = std::chrono::steady_clock::now();
  const std::string rv_text = req.get_param_value("resourceVersion");
  {
    std::lock_guard<std::mutex> lock(mu_);
    state->generation = watch_generation_;
    int64_t from = 0;
    if (rv_text.empty() || rv_text == "0") {
      // Start with the current objects.
      auto added = [&](const Json& object) {
        if (Matches(state->selector, object)) {
          state->pending.push_back(Dump({{"type", "ADDED"}, {"object", object}}) + "\n");
        }
      };
      if (resource == "nodes") {
        for (const auto& [name, node] : nodes_) added(node);
      } else {
        for (const auto& [key, pod] : pods_) {
          if (ns.empty() || key.first == ns) added(pod);
        }
      }
      state->cursor = rv_;
    } else if (!absl::SimpleAtoi(rv_text, &from) || from < 0) {
      return SendStatus(res, 400, "BadRequest",
                        fmt::format("resourceVersion: invalid value '{}'", rv_text));
    } else if (from < compacted_rv_) {
      state->pending.push_back(
          Dump({{"type", "ERROR"},
                {"object", StatusObject(410, "Expired",
                                        fmt::format("too old resource version: {} ({})", from,
                                                    compacted_rv_))}}) +
          "\n");
      state->end_after_pending = true;
    } else {
      state->cursor = from;
    }
  }
  res.set_chunked_content_provider(
      // As a real API server labels a watch; it also keeps httplib from gzip-buffering events.
      "application/json;stream=watch", [this, state](size_t, httplib::DataSink& sink) {
        std::vector<std::string> lines = std::move(state->pending);
        state->pending.clear();
        bool end = state->end_after_pending;
        if (lines.empty() && !end) {
          std::unique_lock<std::mutex> lock(mu_);
          changed_.wait_for(lock, kWatchPoll, [&] {
            return stopping_ || state->generation != watch_generation_ ||
                   (!hold_ && !history_.empty() && history_.back().rv > state->cursor);
          });
          const auto now = std::chrono::steady_clock::now();
          if (stopping_ || state->generation != watch_generation_ || now >= state->deadline) {
            end = true;
          } else if (!hold_) {
            auto it = std::upper_bound(history_.begin(), history_.end(), state->cursor,
                                       [](int64_t rv, const Event& e) { return rv < e.rv; });
            for (; it != history_.end(); ++it) {
              state->cursor = it->rv;
              if (it->resource != state->resource) continue;
              if (!state->ns.empty() && it->ns != state->ns) continue;
              if (!Matches(state->selector, it->object)) continue;
              lines.push_back(Dump({{"type", it->type}, {"object", it->object}}) + "\n");
            }
            if (lines.empty() && state->bookmarks && now - state->last_sent >= kBookmarkAfter) {
              lines.push_back(
                  Dump({{"type", "BOOKMARK"},
                        {"object",
                         {{"kind", KindOf(state->resource)},
                          {"apiVersion", "v1"},
                          {"metadata", {{"resourceVersion", std::to_string(state->cursor)}}}}}}) +
                  "\n");
            }
          }
        }
        for (const std::string& line : lines) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        if (!lines.empty()) state->last_sent = std::chrono::steady_clock::now();
        if (end) sink.done();
        return true;
      });
}

void FakeApiServer::CreatePod(const std::string& ns, const Request& req, Response& res) {
  Json pod = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (pod.is_discarded() || !pod.is_object()) {
    return SendStatus(res, 400, "BadRequest", "the body is not a JSON object");
  }
  if (!pod.contains("metadata") || !pod["metadata"].is_object()) pod["metadata"] = Json::object();
  const std::string name = MetaString(pod, "name");
  auto invalid = [&](const std::string& field, const std::string& what) {
    SendStatus(res, 422, "Invalid",
               fmt::format("Pod \"{}\" is invalid: {}: {}", name, field, what));
  };
  if (!IsDnsSubdomain(name)) return invalid("metadata.name", "Invalid value: \"" + name + "\"");
  const std::string meta_ns = MetaString(pod, "namespace");
  if (!meta_ns.empty() && meta_ns != ns) {
    return SendStatus(res, 400, "BadRequest",
                      "the namespace of the provided object does not match the namespace sent "
                      "on the request");
  }
  if (!pod.contains("spec") || !pod["spec"].is_object() || !pod["spec"].contains("containers") ||
      !pod["spec"]["containers"].is_array() || pod["spec"]["containers"].empty()) {
    return invalid("spec.containers", "Required value");
  }
  for (const Json& container : pod["spec"]["containers"]) {
    if (!container.is_object() || !container.contains("name") || !container["name"].is_string()) {
      return invalid("spec.containers[].name", "Required value");
    }
    if (!container.contains("image") || !container["image"].is_string() ||
        container["image"].get<std::string>().empty()) {
      return invalid("spec.containers[].image", "Required value");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (pod["spec"].contains("nodeName")) {
    const Json& node = pod["spec"]["nodeName"];
    if (!node.is_string() || !nodes_.contains(node.get<std::string>())) {
      return invalid("spec.nodeName", fmt::format("Not found: {}", Dump(node)));
    }
  }
  if (pods_.contains({ns, name})) {
    return SendStatus(res, 409, "AlreadyExists", fmt::format("pods \"{}\" already exists", name));
  }
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"]["namespace"] = ns;
  pod["metadata"].erase("uid");
  pod["metadata"].erase("creationTimestamp");
  CreationLocked(pod);
  if (!pod["spec"].contains("terminationGracePeriodSeconds")) {
    pod["spec"]["terminationGracePeriodSeconds"] = 30;
  }
  pod["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
  StampLocked(pod);
  pods_[{ns, name}] = pod;
  PublishLocked("ADDED", "pods", ns, pod);
  SendJson(res, 201, pod);
}

void FakeApiServer::DeletePod(const std::string& ns, const std::string& name, const Request& req,
                              Response& res) {
  std::optional<int64_t> grace;
  int64_t value = 0;
  if (req.has_param("gracePeriodSeconds")) {
    if (!absl::SimpleAtoi(req.get_param_value("gracePeriodSeconds"), &value) || value < 0) {
      return SendStatus(res, 400, "BadRequest", "gracePeriodSeconds: must be >= 0");
    }
    grace = value;
  } else if (!req.body.empty()) {
    Json options = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (options.is_object() && options.contains("gracePeriodSeconds") &&
        options["gracePeriodSeconds"].is_number_integer()) {
      grace = std::max<int64_t>(0, options["gracePeriodSeconds"].get<int64_t>());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pods_.find({ns, name});
  if (it == pods_.end()) {
    return SendStatus(res, 404, "NotFound", fmt::format("pods \"{}\" not found", name));
  }
  Json& pod = it->second;
  if (!grace.has_value()) grace = pod["spec"].value("terminationGracePeriodSeconds", 30);
  const std::string phase = Phase(pod);
  if (*grace == 0 || phase == "Succeeded" || phase == "Failed") {
    Json last = pod;
    RemovePodLocked(ns, name);
    return SendJson(res, 200, last);
  }
  if (!pod["metadata"].contains("deletionTimestamp")) {
    pod["metadata"]["deletionTimestamp"] = NowText();
    pod["metadata"]["deletionGracePeriodSeconds"] = *grace;
    StampLocked(pod);
    PublishLocked("MODIFIED", "pods", ns, pod);
    deletions_.push_back(
        {ns, name, std::chrono::steady_clock::now() + std::chrono::seconds(*grace)});
  }
  SendJson(res, 200, pod);
}

void FakeApiServer::CreateService(const std::string& ns, const Request& req, Response& res) {
  Json service = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (service.is_discarded() || !service.is_object()) {
    return SendStatus(res, 400, "BadRequest", "the body is not a JSON object");
  }
  if (!service.contains("metadata") || !service["metadata"].is_object()) {
    service["metadata"] = Json::object();
  }
  const std::string name = MetaString(service, "name");
  auto invalid = [&](const std::string& field, const std::string& what) {
    SendStatus(res, 422, "Invalid",
               fmt::format("Service \"{}\" is invalid: {}: {}", name, field, what));
  };
  if (!IsDns1035Label(name)) {
    return invalid("metadata.name",
                   "Invalid value: \"" + name +
                       "\": a DNS-1035 label must consist of lower "
                       "case alphanumeric characters or '-', start with an alphabetic character, "
                       "and end with an alphanumeric character");
  }
  const std::string meta_ns = MetaString(service, "namespace");
  if (!meta_ns.empty() && meta_ns != ns) {
    return SendStatus(res, 400, "BadRequest",
                      "the namespace of the provided object does not match the namespace sent "
                      "on the request");
  }
  if (!service.contains("spec") || !service["spec"].is_object()) service["spec"] = Json::object();
  Json& spec = service["spec"];
  if (spec.contains("ports")) {
    if (!spec["ports"].is_array()) return invalid("spec.ports", "must be a list");
    for (size_t i = 0; i < spec["ports"].size(); ++i) {
      const Json& port = spec["ports"][i];
      if (!port.is_object() || !port.contains("port") || !port["port"].is_number_integer() ||
          port["port"].get<int64_t>() < 1 || port["port"].get<int64_t>() > 65535) {
        return invalid(fmt::format("spec.ports[{}].port", i), "must be between 1 and 65535");
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (services_.contains({ns, name})) {
    return SendStatus(res, 409, "AlreadyExists",
                      fmt::format("services \"{}\" already exists", name));
  }
  service["apiVersion"] = "v1";
  service["kind"] = "Service";
  service["metadata"]["namespace"] = ns;
  service["metadata"].erase("uid");
  service["metadata"].erase("creationTimestamp");
  CreationLocked(service);
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  if (!spec.contains("clusterIP")) {
    ++cluster_ips_;
    spec["clusterIP"] = fmt::format("10.96.{}.{}", cluster_ips_ / 256 % 256, cluster_ips_ % 256);
  }
  service["status"] = {{"loadBalancer", Json::object()}};
  StampLocked(service);
  services_[{ns, name}] = service;
  SendJson(res, 201, service);
}

void FakeApiServer::DeleteService(const std::string& ns, const std::string& name, Response& res) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = services_.find({ns, name});
  if (it == services_.end()) {
    return SendStatus(res, 404, "NotFound", fmt::format("services \"{}\" not found", name));
  }
  Json last = std::move(it->second);
  services_.erase(it);
  StampLocked(last);
  SendJson(res, 200, last);
}

void FakeApiServer::PodLog(const std::string& ns, const std::string& name, const Request& req,
                           Response& res) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pods_.find({ns, name});
  if (it == pods_.end()) {
    return SendStatus(res, 404, "NotFound", fmt::format("pods \"{}\" not found", name));
  }
  if (Phase(it->second) == "Pending") {
    return SendStatus(res, 400, "BadRequest",
                      fmt::format("container \"{}\" in pod \"{}\" is waiting to start: "
                                  "ContainerCreating",
                                  ContainerName(it->second), name));
  }
  std::string text = logs_[{ns, name}];
  int64_t limit = 0;
  if (req.has_param("limitBytes") && absl::SimpleAtoi(req.get_param_value("limitBytes"), &limit) &&
      limit >= 0 && static_cast<size_t>(limit) < text.size()) {
    text.resize(static_cast<size_t>(limit));
  }
  res.status = 200;
  res.set_content(text, "text/plain");
}

}  // namespace tessera::agent::k8s::testing

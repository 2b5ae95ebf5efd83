#include "api/rest/standby_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/rest/json_views.h"

namespace tessera::api {
namespace {

void SendJson(HttpResponse& response, int status, const nlohmann::ordered_json& body) {
  response.status = status;
  response.SetContent(body.dump() + "\n", "application/json");
}

}  // namespace

StandbyServer::StandbyServer()
    : front_(std::make_unique<HttpFrontEnd>(
          HttpFrontEnd::Options{.io_threads = 1, .workers = 2},
          [this](HttpRequest& request, HttpResponse& response) { Handle(request, response); },
          [](const HttpRequest&, HttpResponse& response) {
            response.SetContent(
                ErrorBody(absl::StatusCode::kUnavailable, "the standby is busy").dump() + "\n",
                "application/json");
          })) {}

StandbyServer::~StandbyServer() { Stop(); }

absl::Status StandbyServer::Start(const std::string& host, int port) {
  return front_->Start(host, port);
}

void StandbyServer::Stop() { front_->Stop(); }

int StandbyServer::port() const { return front_->port(); }

void StandbyServer::SetLeader(std::string url) {
  std::lock_guard<std::mutex> lock(mu_);
  leader_ = std::move(url);
}

std::string StandbyServer::Leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leader_;
}

void StandbyServer::Handle(HttpRequest& request, HttpResponse& response) {
  if (request.path == "/healthz") return response.SetContent("ok\n", "text/plain");
  const std::string leader = Leader();
  if (!leader.empty()) response.SetHeader("X-Tessera-Leader", leader);
  if (request.path == "/readyz") {
    return SendJson(response, 503,
                    ErrorBody(absl::StatusCode::kUnavailable,
                              leader.empty() ? "a standby: no leader is elected yet"
                                             : absl::StrCat("a standby: the leader is ", leader)));
  }
  if (leader.empty()) {
    response.SetHeader("Retry-After", "1");
    response.SetHeader("X-Tessera-Standby", "true");
    return SendJson(response, 503,
                    ErrorBody(absl::StatusCode::kUnavailable,
                              "this replica is a standby and no leader is elected yet"));
  }
  response.SetHeader("Location", absl::StrCat(leader, request.target));
  SendJson(response, 307,
           ErrorBody(absl::StatusCode::kUnavailable,
                     absl::StrCat("this replica is a standby: the leader is ", leader)));
}

}  // namespace tessera::api

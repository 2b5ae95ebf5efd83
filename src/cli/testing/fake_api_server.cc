#include "cli/testing/fake_api_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nlohmann/json.hpp"

namespace tessera::cli::testing {

std::string RecordedRequest::Param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? "" : it->second;
}

FakeApiServer::FakeApiServer() {
  const auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res);
  };
  server_.Get(".*", dispatch);
  server_.Post(".*", dispatch);
  server_.Put(".*", dispatch);
  server_.Delete(".*", dispatch);
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() only stops a server that runs: wait for the accept loop to start.
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeApiServer::~FakeApiServer() {
  server_.stop();
  thread_.join();
}

std::string FakeApiServer::Url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void FakeApiServer::On(const std::string& method, const std::string& path, int status,
                       std::string body, httplib::Headers headers) {
  OnHandler(method, path,
            [status, body = std::move(body), headers = std::move(headers)](const httplib::Request&,
                                                                           httplib::Response& res) {
              res.status = status;
              for (const auto& [name, value] : headers) res.set_header(name, value);
              res.set_content(body, "application/json");
            });
}

void FakeApiServer::OnHandler(const std::string& method, const std::string& path, Handler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  routes_[method + " " + path] = std::move(handler);
}

std::vector<RecordedRequest> FakeApiServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<RecordedRequest> FakeApiServer::Requests(const std::string& method,
                                                     const std::string& path) const {
  std::vector<RecordedRequest> out;
  for (RecordedRequest& r : Requests()) {
    if (r.method == method && r.path == path) out.push_back(std::move(r));
  }
  return out;
}

void FakeApiServer::Dispatch(const httplib::Request& request, httplib::Response& response) {
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RecordedRequest recorded;
    recorded.method = request.method;
    recorded.path = request.path;
    recorded.params.insert(request.params.begin(), request.params.end());
    recorded.body = request.body;
    recorded.authorization = request.get_header_value("Authorization");
    recorded.content_type = request.get_header_value("Content-Type");
    requests_.push_back(std::move(recorded));
    auto it = routes_.find(request.method + " " + request.path);
    if (it != routes_.end()) handler = it->second;
  }
  if (!handler) {
    response.status = 404;
    response.set_content(ErrorBody("NOT_FOUND", "no route for " + request.path),
                         "application/json");
    return;
  }
  handler(request, response);
}

std::string ErrorBody(const std::string& code, const std::string& message,
                      const std::string& field) {
  nlohmann::json error = {{"code", code}, {"message", message}};
  if (!field.empty()) error["field"] = field;
  return nlohmann::json{{"error", error}}.dump();
}

int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);  // never listened on: connecting is refused at once
  return port;
}

}  // namespace tessera::cli::testing

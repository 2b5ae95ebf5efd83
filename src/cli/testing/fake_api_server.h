// FakeApiServer: an HTTP server on a loopback port that answers the CLI's requests with canned
// answers in the shapes of docs/api.md, and records every request — a fixture for the CLI's
// wire format in tests (the real server's end-to-end tests live with the server).
//
// Routes match the method and the exact path (without the query); a request with no route
// gets 404 with an API error body. Handlers run on the server's threads; the recorded requests
// are guarded by a mutex. Not a public API.
#pragma once

#include <httplib.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tessera::cli::testing {

struct RecordedRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string body;
  std::string authorization;
  std::string content_type;

  std::string Param(const std::string& name) const;
};

class FakeApiServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  FakeApiServer();
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // "http://127.0.0.1:<port>".
  std::string Url() const;
  int Port() const { return port_; }

  // Answers `method path` with `status` and a JSON `body`; later calls replace earlier ones.
  void On(const std::string& method, const std::string& path, int status, std::string body,
          httplib::Headers headers = {});
  void OnHandler(const std::string& method, const std::string& path, Handler handler);

  std::vector<RecordedRequest> Requests() const;
  // The recorded requests for one method and path.
  std::vector<RecordedRequest> Requests(const std::string& method, const std::string& path) const;

 private:
  void Dispatch(const httplib::Request& request, httplib::Response& response);

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, Handler> routes_;  // "GET /api/v1/jobs"
  std::vector<RecordedRequest> requests_;
};

// A JSON error body of docs/api.md.
std::string ErrorBody(const std::string& code, const std::string& message,
                      const std::string& field = "");

// A port on which nothing listens (it was bound, then released).
int UnusedPort();

}  // namespace tessera::cli::testing

#include "agent/slurm/slurm_job_notices.h"

#include <httplib.h>

#include <chrono>
#include <thread>
#include <utility>

#include "fmt/format.h"

namespace tessera::agent {

absl::StatusOr<std::unique_ptr<SlurmJobNotices>> SlurmJobNotices::Start(
    const SlurmNoticeAddress& address, OnNotice on_notice) {
  auto server = std::make_unique<httplib::Server>();
  // httplib's default also sets SO_REUSEPORT, which would let a second agent share the port
  // and take half the notices; an address in use must be an error instead.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server->Post(
      "/slurm/job-ended", [on_notice = std::move(on_notice)](const httplib::Request& request,
                                                             httplib::Response& response) {
        absl::StatusOr<int64_t> job_id = ParseJobEndedNotice(request.body);
        if (!job_id.ok()) {
          response.status = 400;
          response.set_content(std::string(job_id.status().message()) + "\n", "text/plain");
          return;
        }
        on_notice(*job_id);
        response.status = 204;
      });
  const int port = address.port == 0
                       ? server->bind_to_any_port(address.host)
                       : (server->bind_to_port(address.host, address.port) ? address.port : -1);
  if (port <= 0) {
    return absl::UnavailableError(
        fmt::format("slurm notice address: cannot listen on {}:{}", address.host, address.port));
  }
  return std::unique_ptr<SlurmJobNotices>(new SlurmJobNotices(std::move(server), port));
}

SlurmJobNotices::SlurmJobNotices(std::unique_ptr<httplib::Server> server, int port)
    : server_(std::move(server)), port_(port) {
  listener_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() does nothing before the server runs: wait for it, so that the
  // destructor always ends the listener.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

SlurmJobNotices::~SlurmJobNotices() {
  server_->stop();
  listener_.join();
}

}  // namespace tessera::agent

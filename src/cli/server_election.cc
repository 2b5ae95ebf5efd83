#include "cli/server_election.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/local/system_clock.h"
#include "api/rest/rest_server.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/standby_job_service.h"

namespace tessera::cli {
namespace {

struct Advertised {
  std::string http;  // "http://host:port"
  std::string grpc;  // "host:port"
};

Advertised AdvertisedAddresses(const server::ServerConfig& config) {
  return {.http = config.ha.advertise_http.empty() ? "http://" + config.http_addr
                                                   : config.ha.advertise_http,
          .grpc = config.ha.advertise_grpc.empty() ? config.grpc_addr : config.ha.advertise_grpc};
}

// The leader's REST URL from its candidate value; "" when there is none or it is unreadable.
std::string LeaderUrl(const std::optional<store::Leadership>& leader) {
  if (!leader) return "";
  const nlohmann::json value = nlohmann::json::parse(leader->candidate, nullptr, false);
  if (!value.is_object() || !value.contains("http") || !value["http"].is_string()) return "";
  return value["http"].get<std::string>();
}

store::EtcdStoreOptions EtcdOptions(const server::StoreConfig& store) {
  return {.endpoints = store.etcd_endpoints,
          .ca_file = store.etcd_ca_file,
          .cert_file = store.etcd_cert_file,
          .key_file = store.etcd_key_file};
}

}  // namespace

void ExitDeposed(std::string_view why) {
  std::cerr << fmt::format(
                   "tessera server: {}: no longer the leader; exiting (status 3) to "
                   "restart as a standby\n",
                   why)
            << std::flush;
  std::_Exit(3);
}

// The leader's URL as the campaign last saw it, for the standby's REST port.
class SeenLeader {
 public:
  void Set(std::string url) {
    std::lock_guard<std::mutex> lock(mu_);
    url_ = std::move(url);
  }
  std::string Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return url_;
  }

 private:
  mutable std::mutex mu_;
  std::string url_;
};

absl::StatusOr<Elected> AwaitLeadership(const server::ServerConfig& config, store::Store* store,
                                        const std::function<bool()>& stop) {
  const Advertised advertised = AdvertisedAddresses(config);
  const std::string candidate =
      nlohmann::json{{"http", advertised.http}, {"grpc", advertised.grpc}}.dump();
  const server::HostPort http = *server::ParseHostPort(config.http_addr, "httpAddr");
  auto jobs = std::make_unique<server::JobMirror>(server::JobMirrorOptions{.store = store});
  absl::StatusOr<std::unique_ptr<server::Authenticator>> auth =
      server::Authenticator::Create(store, {.look_up_misses = true});
  if (!auth.ok()) return auth.status();
  server::RateLimiter rate_limiter(config.rate_limit, &agent::SystemClock::Get());
  server::StandbyJobService reads(jobs.get(), store);
  SeenLeader leader;
  api::RestServer standby({.service = &reads,
                           .auth = auth->get(),
                           .rate_limiter = &rate_limiter,
                           .standby_leader = [&leader] { return leader.Get(); }});
  if (absl::Status s = standby.Start(http.host, http.port); !s.ok()) {
    return absl::Status(
        s.code(), fmt::format("--http-addr {}: {}", config.http_addr, std::string(s.message())));
  }
  std::cout << fmt::format(
                   "tessera server: a standby (REST {} serves job reads and redirects the rest to "
                   "the leader); campaigning as {}\n",
                   advertised.http, candidate)
            << std::flush;
  while (true) {
    auto leading = std::make_shared<std::atomic<bool>>(false);
    absl::StatusOr<std::unique_ptr<store::EtcdElection>> election = store::EtcdElection::Open(
        EtcdOptions(config.store),
        {.candidate = candidate, .lease_ttl = config.ha.lease_ttl, .lost = [leading] {
           if (*leading) ExitDeposed("the leader election lease is lost");
         }});
    if (absl::IsInvalidArgument(election.status())) return election.status();
    absl::StatusOr<store::Revision> term =
        election.ok() ? (*election)->Campaign(stop,
                                              [&](const std::optional<store::Leadership>& l) {
                                                leader.Set(LeaderUrl(l));
                                              })
                      : election.status();
    if (absl::IsCancelled(term.status())) return term.status();
    if (term.ok()) {
      *leading = true;
      if (!(*election)->Lost()) {
        standby.Stop();
        std::cout << fmt::format("tessera server: elected leader (term {})\n", *term) << std::flush;
        return Elected{.election = *std::move(election), .jobs = std::move(jobs)};
      }
    }
    const absl::Status why =
        term.ok() ? absl::UnavailableError("the lease was lost as this replica was elected")
                  : term.status();
    std::cerr << fmt::format("tessera server: campaign failed ({}); trying again in 1 s\n",
                             why.ToString());
    leader.Set("");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (stop()) return absl::CancelledError("stopped");
  }
}

}  // namespace tessera::cli

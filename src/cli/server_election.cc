#include "cli/server_election.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "api/rest/standby_server.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

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

absl::StatusOr<std::unique_ptr<store::EtcdElection>> AwaitLeadership(
    const server::ServerConfig& config, const std::function<bool()>& stop) {
  const Advertised advertised = AdvertisedAddresses(config);
  const std::string candidate =
      nlohmann::json{{"http", advertised.http}, {"grpc", advertised.grpc}}.dump();
  const server::HostPort http = *server::ParseHostPort(config.http_addr, "httpAddr");
  api::StandbyServer standby;
  if (absl::Status s = standby.Start(http.host, http.port); !s.ok()) {
    return absl::Status(
        s.code(), fmt::format("--http-addr {}: {}", config.http_addr, std::string(s.message())));
  }
  std::cout << fmt::format(
                   "tessera server: a standby (REST {} redirects to the leader); "
                   "campaigning as {}\n",
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
                                                standby.SetLeader(LeaderUrl(l));
                                              })
                      : election.status();
    if (absl::IsCancelled(term.status())) return term.status();
    if (term.ok()) {
      *leading = true;
      if (!(*election)->Lost()) {
        standby.Stop();
        std::cout << fmt::format("tessera server: elected leader (term {})\n", *term) << std::flush;
        return *std::move(election);
      }
    }
    const absl::Status why =
        term.ok() ? absl::UnavailableError("the lease was lost as this replica was elected")
                  : term.status();
    std::cerr << fmt::format("tessera server: campaign failed ({}); trying again in 1 s\n",
                             why.ToString());
    standby.SetLeader("");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (stop()) return absl::CancelledError("stopped");
  }
}

}  // namespace tessera::cli

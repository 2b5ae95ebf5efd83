// AwaitLeadership: what `tessera server` does as a replica of a highly available control plane
// (ServerConfig::ha, docs/operations.md) before it may run the control plane: it campaigns
// through an etcd lease (store/etcd/etcd_election.h) and serves as a standby until elected.
//
// While it waits it keeps the job records current by following the store (server/job_mirror.h),
// and its REST port is a standby's RestServer (api/rest/rest_server.h, "Standby") that answers
// job reads from them (server/standby_job_service.h; tokens the leader issues later are looked up
// in the store) and sends every other request to the leader it sees. Its gRPC port stays closed,
// so agents go on to the next address. Its candidate value is {"http": advertiseHttp, "grpc":
// advertiseGrpc}. A lease lost while waiting (etcd unreachable) starts a new candidacy a second
// later. Once elected, the process exits with status 3 the moment its lease is lost
// (ExitDeposed): it must stop scheduling and launching before another replica can be elected,
// and its supervisor (systemd, Kubernetes) starts it again as a standby.
//
// Returns the election and the job mirror, still following, once this replica leads (the REST
// port is free again for the control plane), or Cancelled when `stop` returned true (a signal).
// Errors: InvalidArgument for bad HA settings (the message names the field); the port's error
// when the REST address cannot be bound.
// Not thread-safe: call from the main thread. `store` (the etcd store) outlives the result.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/job_mirror.h"
#include "server/server_config.h"
#include "store/etcd/etcd_election.h"
#include "tessera/store/store.h"

namespace tessera::cli {

struct Elected {
  std::unique_ptr<store::EtcdElection> election;
  std::unique_ptr<server::JobMirror> jobs;  // to hand over (JobMirror::HandOver)
};

absl::StatusOr<Elected> AwaitLeadership(const server::ServerConfig& config, store::Store* store,
                                        const std::function<bool()>& stop);

// Ends the process at once, with status 3, saying why: a leader that lost its lease or whose
// write was fenced. Nothing is torn down: tasks keep running, the store holds every
// acknowledged write, and the next leader takes over from there.
[[noreturn]] void ExitDeposed(std::string_view why);

}  // namespace tessera::cli

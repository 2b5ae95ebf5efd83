// AgentService: the agent protocol's gRPC service (proto/tessera/agent/v1/agent.proto,
// tessera.agent.v1.AgentService) over the control plane's AgentClusters.
//
// Each Connect stream is one agent session. The caller must present an admin token
// ("authorization: Bearer <token>"; otherwise UNAUTHENTICATED or PERMISSION_DENIED). The first
// message must be Register; the service answers Registered (epoch, heartbeat interval), then
// relays every agent message to the session's RemoteCluster and the cluster's Bind, Cancel and
// Resync messages to the agent. A message the cluster refuses ends the session with its
// status: INVALID_ARGUMENT naming the field for bad input, FAILED_PRECONDITION for a stale
// epoch (a newer session of the same cluster exists). Other sessions are never affected.
//
// Threads: the stream's handler thread reads; a writer thread per session sends, so the job
// manager's Launch and Cancel never block on the network. Stop may be called from any thread.
//
// Metrics (when a registry is given): tessera_agent_heartbeat_seconds, the time to apply one
// heartbeat (RemoteCluster::OnHeartbeat: every node usage it carries; not its decoding), and
// tessera_agent_node_updates_total, the node usages applied.
#pragma once

#include <memory>
#include <mutex>
#include <set>

#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/agent/agent_clusters.h"
#include "server/auth/authenticator.h"
#include "tessera/agent/v1/agent.grpc.pb.h"

namespace tessera::api {

class AgentService final : public agent::v1::AgentService::Service {
 public:
  struct Options {
    server::AgentClusters* clusters = nullptr;  // required; outlives the service
    server::Authenticator* auth = nullptr;      // required; outlives the service
    prometheus::Registry* metrics = nullptr;    // optional; outlives the service
  };
  explicit AgentService(Options options);

  // Ends every open session (the agents see CANCELLED and reconnect) and refuses new ones
  // (UNAVAILABLE), so that the gRPC server's shutdown does not wait for agent streams.
  // Idempotent; thread-safe.
  void Stop();

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<agent::v1::ServerMessage, agent::v1::AgentMessage>* stream)
      override;

 private:
  class Session;

  // The session's caller must be an administrator.
  absl::Status Authorize(const grpc::ServerContext& context) const;
  // RemoteCluster::OnHeartbeat, timed and counted.
  absl::Status OnHeartbeat(server::RemoteCluster& cluster, uint64_t epoch,
                           const agent::v1::Heartbeat& heartbeat);

  // Registers a session's context for Stop; false once stopping.
  bool Open(grpc::ServerContext* context);
  void Closed(grpc::ServerContext* context);

  const Options options_;
  std::mutex mu_;
  bool stopping_ = false;                       // mu_
  std::set<grpc::ServerContext*> open_;         // mu_: the contexts of open sessions
  prometheus::Histogram* heartbeat_seconds_ = nullptr;
  prometheus::Counter* node_updates_ = nullptr;
};

}  // namespace tessera::api

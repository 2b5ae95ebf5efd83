// AgentRunner: the `tessera agent` side of the agent protocol (proto/tessera/agent/v1/
// agent.proto). It connects one backend — any Cluster: Slurm, Kubernetes, this machine's
// processes or a simulated fleet — to the control plane over a gRPC bidirectional stream, and
// keeps it connected.
//
// A session: Register → Registered (epoch, heartbeat interval) → the full inventory → the
// server's Resync, answered after the backend reconciled (Cluster::Recover: unknown tasks
// killed, ended ones reported) → then every heartbeat interval an inventory delta (when the
// backend's inventory changed) and a heartbeat with usage; task starts and ends as they happen;
// Bind and Cancel from the server go to the backend when they name the session's epoch (others
// are ignored: a stale lease). A LogRequest (`tessera logs`) is read from the backend
// (Cluster::ReadLog, its limit clamped to 1 MiB) by the session's log reader thread, so that a
// backend reading over the network never stalls the stream, and answered with a LogChunk (the
// data, or the backend's error code and message); at most 16 requests wait their turn, more are
// answered RESOURCE_EXHAUSTED. When a session ends the runner reconnects with a back-off
// (0.5 s doubling to 10 s), naming its last epoch; news of tasks from while it was away is
// re-derived by the next resync. While the server cannot be reached (stopped, restarting, or
// failing over) the back-off is cut short as soon as a connection succeeds again: the channel
// tries at least every second, so a returning server is rejoined within about a second.
//
// Several servers: the replicas of a highly available control plane (docs/operations.md).
// Only the leader serves agents (a standby's gRPC port is closed), so when a session ends or a
// server cannot be reached the runner tries the next address at once, and waits (the back-off,
// at most a second) only after a whole round of them failed. Commands of a deposed leader
// cannot reach the agent: it listens to its current session alone, and a session's epoch is
// stored through the leader's fenced store before the agent hears it.
//
// Run returns an error, without reconnecting, when the server refuses the agent for good:
// UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT (the message names the field the server
// refused, e.g. `inventory.nodes[3].cpu: must be >= 0, not -8000`), or FAILED_PRECONDITION
// (another agent opened a newer session of the same cluster: this one is fenced).
//
// A full inventory larger than 2,000 nodes is sent in parts (Inventory.more), each well under
// gRPC's 4 MiB message limit. Idle connections are pinged every 20 s (every 2 s with several
// servers, so that a paused leader, whose kernel keeps the connection open, is noticed).
//
// Thread-safety: Stop may be called from any thread; the TaskObserver methods from the
// backend's threads. Run is called once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "core/node.h"
#include "tessera/cluster/cluster.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

struct AgentOptions {
  // The control plane's gRPC addresses, host:port: one, or every replica of an HA control
  // plane (tried in turn; see above). At least one.
  std::vector<std::string> servers;
  std::string cluster;  // [a-z0-9][a-z0-9._-]{0,62}
  std::string backend;  // "slurm" | "kubernetes" | "local" | "sim"
  Labels labels;        // cluster labels (region, cost tier, ...)
  std::string token;    // an admin token
  // TLS: the PEM file of the CA that signed the server's certificate; "" = plaintext.
  std::string tls_ca_file;
  const Clock* clock = nullptr;  // required
};

// The PEM text of a --tls-ca file; InvalidArgument naming --tls-ca when it cannot be read or
// holds no certificate (a key file given by mistake would fail every handshake, unexplained).
absl::StatusOr<std::string> ReadTlsCa(const std::string& path);

class AgentRunner final : public TaskObserver {
 public:
  explicit AgentRunner(AgentOptions options);
  ~AgentRunner() override;

  // The backend to relay; it reports to this runner as its TaskObserver. Call before Run.
  void SetBackend(Cluster* backend) { backend_ = backend; }

  // Runs sessions until Stop (then OK) or a refusal for good (its status).
  absl::Status Run();
  void Stop();

  // The epoch of the current session; 0 between sessions.
  uint64_t epoch() const { return epoch_.load(); }

  // TaskObserver: sent to the server in the current session; dropped between sessions.
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override;
  // Qualified: agent/local/task_outcome.h has an agent::TaskEnd of its own.
  void OnTaskEnded(const tessera::TaskEnd& end) override;

 private:
  class Session;

  // The channel to the server, kept across sessions (TLS when tls_ca_file is set).
  absl::StatusOr<std::shared_ptr<grpc::Channel>> NewChannel(const std::string& server) const;
  // One session from connect to its end; the status it ended with.
  absl::Status RunSession(const std::shared_ptr<grpc::Channel>& channel,
                          const std::string& server);
  // Waits before the next session: `backoff` while the server can be reached (it ended or
  // refused the session), else until a connection succeeds again; false when stopping.
  bool WaitToReconnect(grpc::Channel& channel, Duration backoff);
  // Waits `delay` or until Stop; false when stopping.
  bool Sleep(Duration delay);

  const AgentOptions options_;
  Cluster* backend_ = nullptr;
  std::atomic<uint64_t> epoch_{0};
  uint64_t previous_epoch_ = 0;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  Session* session_ = nullptr;  // guarded by mu_
};

}  // namespace tessera::agent

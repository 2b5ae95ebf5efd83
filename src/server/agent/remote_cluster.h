// RemoteCluster: the control plane's side of a cluster behind `tessera agent` (Slurm,
// Kubernetes, a machine's processes or a simulated fleet). The agent protocol is
// proto/tessera/agent/v1/agent.proto; AgentService feeds each session's messages in here.
//
// Sessions and epochs. Every agent session gets the next epoch of its cluster, stored before
// the agent hears it; a new session fences the previous one (its stream is closed). A message
// that names another epoch than the current session's is refused (FailedPrecondition "stale
// epoch"), and so are bindings: each Bind carries the epoch it is valid for.
//
// Resync. After a session's first (full) inventory the server sends Resync: the launches it
// believes run there. The agent's backend reconciles (Cluster::Recover: unknown tasks killed,
// ended ones reported) and answers with the launches still running; a believed launch missing
// from that answer and not reported ended is lost (Failed "Lost"). Launches made while no
// session was up are sent after the resync.
//
// Liveness. Heartbeats are soft state, kept in memory only. When the session's stream ends
// (the agent exited, or its connection broke) or no heartbeat has come for
// `unreachable_timeout` (default 3 heartbeat intervals, for an agent that is silent but still
// connected) the cluster is Unreachable and its nodes NotReady, so nothing new is placed
// there; when no heartbeat has come for `lost_grace` beyond the timeout, its tasks end
// Failed "Lost" and their jobs follow their restart policy (a gang is requeued whole). The
// next session's full inventory makes it reachable again. Only transitions are stored
// (/tessera/clusters/<name>: epoch, labels, reachability; /tessera/clusters/<name>/nodes/<node>:
// the node as its agent last reported it, written when it changes).
//
// A cluster is established — stored, and handed to the scheduler — by the first inventory it
// accepts: a registration that fails before that (a refused inventory, or one the store could
// not hold) leaves nothing behind, neither in the store nor in the scheduler nor among the node
// names. An inventory is refused up front, naming the node and its part that is too large
// (`inventory.nodes[3].labels: node "gpu-7" is too large to store ...`), when a node's record
// would exceed the store's per-value limit (Store::limits()).
// The backend kind and the cluster labels come from the registration that established it (or
// the stored record); later sessions must name the same backend, and their labels are not
// applied. A node that leaves the inventory takes its tasks with it (Failed "Lost"); a cancel
// made while no session is up is sent to the next one after its resync.
//
// Logs. ReadLog asks the session's agent (LogRequest, at most agent::kMaxLogChunkBytes) and
// waits for its LogChunk, up to `log_timeout` of real time. It answers Unavailable naming the
// cluster when no session is attached or the cluster is unreachable, or when the session ends
// before the answer; DeadlineExceeded naming the cluster when the agent does not answer in
// time; otherwise what the agent's backend answered (NotFound: no log for the launch, ...).
//
// Thread-safety: every method may be called from any thread. Observer callbacks are made with
// no lock held. Errors of the On* methods end that session (AgentService closes its stream with
// the status); they never affect other clusters.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/protocol/agent_protocol.h"
#include "server/agent/node_names.h"
#include "tessera/cluster/cluster.h"
#include "tessera/agent/v1/agent.pb.h"
#include "tessera/common/clock.h"
#include "tessera/store/store.h"

namespace tessera::server {

// The server's end of one agent session's stream.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Queues `message` for the agent; never blocks. Ignored once the session has ended.
  virtual void Send(agent::v1::ServerMessage message) = 0;
  // Ends the session; the agent sees `status` as the stream's status.
  virtual void Close(absl::Status status) = 0;
};

class RemoteCluster;

struct RemoteClusterOptions {
  std::string name;
  Duration heartbeat_interval{1000};
  Duration unreachable_timeout{3000};  // no heartbeat for this long: Unreachable
  Duration lost_grace{60000};          // Unreachable for this long: its tasks are lost
  Duration log_timeout{10000};         // ReadLog waits this long (real time) for the agent
  agent::InventoryRules rules;
  const Clock* clock = nullptr;        // required
  store::Store* store = nullptr;       // required
  NodeNames* node_names = nullptr;     // required: node names are unique across clusters
  TaskObserver* task_observer = nullptr;            // required
  InventoryObserver* inventory_observer = nullptr;  // required
  // Called once, with no lock held, after the first inventory a cluster seen for the first time
  // accepted: from then on it is stored and the control plane schedules on it.
  std::function<void(RemoteCluster*)> on_established;
};

// What the store holds of a cluster.
struct RemoteClusterRecord {
  std::string backend;
  Labels labels;
  uint64_t epoch = 0;
  std::vector<agent::v1::Node> nodes;
};

class RemoteCluster final : public Cluster {
 public:
  // A cluster seen before (a stored record, after a restart: reachable until its timeout runs
  // out without an agent) or new (an empty record).
  RemoteCluster(RemoteClusterOptions options, RemoteClusterRecord record);

  // The stored records under /tessera/clusters/, by cluster name. DataLoss for a record that
  // cannot be decoded.
  static absl::StatusOr<std::map<std::string, RemoteClusterRecord>> LoadRecords(
      store::Store& store);

  // Cluster.
  const std::string& name() const override { return options_.name; }
  std::string_view backend() const override;
  const Labels& labels() const override;
  bool reachable() const override;
  std::vector<Node> Inventory() const override;
  // The usage the latest heartbeat carried: a node it did not list, or a column it left empty
  // (a measurement the agent no longer has, e.g. its metrics source went away), is not
  // reported from an older heartbeat.
  std::vector<NodeUsage> Usage() const override;
  void Launch(const TaskLaunchSpec& spec) override;
  void Cancel(std::string_view launch_id, Duration grace) override;
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override;
  void Forget(std::string_view launch_id) override;
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream, int64_t offset,
                                   int64_t limit) const override;

  // Session side. Attach starts a session (fencing the previous one) and returns its epoch,
  // stored before it returns; InvalidArgument naming the field for a bad Register.
  absl::StatusOr<uint64_t> Attach(AgentChannel* channel, const agent::v1::Register& request);
  absl::Status OnInventory(uint64_t epoch, const agent::v1::Inventory& inventory);
  absl::Status OnHeartbeat(uint64_t epoch, const agent::v1::Heartbeat& heartbeat);
  absl::Status OnTaskUpdate(uint64_t epoch, const agent::v1::TaskUpdate& update);
  absl::Status OnResyncReport(uint64_t epoch, const agent::v1::ResyncReport& report);
  // The answer to a LogRequest; wakes the ReadLog waiting for it. A request id no ReadLog waits
  // for (it timed out) is ignored. InvalidArgument naming the field for a malformed answer
  // (agent::CheckLogChunk; the waiting ReadLog then gets Internal).
  absl::Status OnLogChunk(uint64_t epoch, const agent::v1::LogChunk& chunk);
  // The session's stream ended: the cluster is Unreachable until a new session's inventory
  // (no effect when a newer session exists).
  void Detach(uint64_t epoch);

  // Marks the cluster Unreachable, or its tasks lost, when their time has come. Called
  // periodically (AgentService's monitor).
  void CheckLiveness();

  // Node usages applied from heartbeats so far (for metrics and the scale benchmark).
  uint64_t node_updates() const;

  // Deletes the cluster (an administrator decommissioned it): its stored record and nodes are
  // removed, its nodes leave the scheduler's inventory (removed), its node names are released,
  // and the tasks it still runs end Failed "Lost" (their jobs follow their restart policy).
  // FailedPrecondition while an agent session is attached. Afterwards the object stays valid
  // (the job manager may still hold it) but is inert: a Launch ends Lost at once, Attach is
  // Unavailable ("deleted": the agent reconnects and registers the cluster anew).
  absl::Status Delete();
  // Removes the stored record of cluster `name` and of its nodes: two operations, whatever
  // the fleet's size.
  static absl::Status RemoveRecords(store::Store& store, std::string_view name);

 private:
  struct Launched {
    TaskLaunchSpec spec;
    std::optional<TimePoint> start_time;
    bool sent = false;                    // to the current session
    std::optional<Duration> cancel_grace;  // cancelled: sent again to every new session
  };
  struct Session {
    AgentChannel* channel = nullptr;
    uint64_t epoch = 0;
    bool inventory_received = false;
    bool resynced = false;
    std::optional<agent::v1::Inventory> partial;  // the parts so far of a split full inventory
    std::vector<std::string> node_by_id;  // session-local node id → name ("" when unused)
  };
  struct PendingLog {  // a ReadLog waiting for its LogChunk
    uint64_t epoch = 0;  // of the session asked
    int64_t offset = 0;
    int64_t limit = 0;
    std::optional<absl::StatusOr<LogChunk>> result;  // set once: the answer, or why none came
  };
  struct Reported {  // a node as its agent last reported it
    agent::v1::Node proto;
    Node node;
  };

  // FailedPrecondition unless `epoch` is the current session's. REQUIRES: mu_ held.
  absl::Status CheckEpochLocked(uint64_t epoch, std::string_view what) const;
  // The node as the scheduler should see it now (NotReady while unreachable).
  // REQUIRES: mu_ held.
  Node EffectiveLocked(const Reported& reported) const;
  std::vector<Node> EffectiveNodesLocked() const;
  // Turns the cluster Unreachable (stored, and logged with `why`) and returns its nodes as the
  // scheduler should now see them; empty when it already was.
  std::vector<Node> MarkUnreachableLocked(std::string_view why);
  // One line on standard error for the server's operator: "cluster NAME: <line>".
  void Log(std::string_view line) const;
  absl::Status PersistClusterLocked();
  // Writes nodes that changed and deletes those removed, in as few transactions as the store's
  // limits allow.
  absl::Status PersistNodes(const std::vector<agent::v1::Node>& changed,
                            const std::vector<std::string>& removed);
  // Stores a new cluster whole: every node of its first inventory, then its record; sets
  // established_. On failure removes what was written and leaves the cluster as it was (not
  // established), returning the error for its agent. REQUIRES: mu_ held, !established_.
  absl::Status EstablishLocked(const agent::v1::Inventory& inventory);
  // Releases the names of `inventory`'s first `count` nodes that the cluster does not hold
  // (claimed for an inventory that was then refused). REQUIRES: mu_ held.
  void ReleaseNewNamesLocked(const agent::v1::Inventory& inventory, int count);
  // Sends the launches not yet sent to the current session, and the cancels of those being
  // cancelled. REQUIRES: mu_ held, a resynced session.
  void SendPendingLocked();
  void SendCancelLocked(std::string_view launch_id, Duration grace);
  // Wakes the ReadLogs waiting on the session of `epoch`, which has ended, with Unavailable.
  // REQUIRES: mu_ held.
  void FailPendingLogsLocked(uint64_t epoch, std::string_view why) const;
  // Ends `launch_ids` as lost (with no lock held).
  void EndLost(const std::vector<std::string>& launch_ids, const std::string& message);

  const RemoteClusterOptions options_;
  mutable std::mutex mu_;
  std::string backend_;
  Labels labels_;
  uint64_t epoch_ = 0;
  std::optional<Session> session_;
  std::map<std::string, Reported, std::less<>> nodes_;
  std::map<std::string, Launched, std::less<>> launches_;
  bool reachable_ = true;
  bool deleted_ = false;
  // Accepted an inventory once (or was stored by an earlier run). Until then nothing is stored
  // and a later registration may name another backend and labels.
  bool established_ = false;
  TimePoint last_heartbeat_;
  // Soft state: usage by node name, each with the number of the heartbeat that set it; only
  // those of the latest heartbeat (heartbeats_) are current.
  struct Measured {
    NodeUsage usage;
    uint64_t heartbeat = 0;
  };
  std::map<std::string, Measured, std::less<>> usage_;
  uint64_t heartbeats_ = 0;
  uint64_t node_updates_ = 0;
  // ReadLogs waiting for their LogChunk, by request id (guarded by mu_; ReadLog is const).
  mutable std::map<uint64_t, PendingLog> pending_logs_;
  mutable uint64_t last_log_request_ = 0;
  mutable std::condition_variable log_answered_;
};

}  // namespace tessera::server

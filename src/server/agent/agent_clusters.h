// AgentClusters: the clusters behind agents that the control plane knows — those stored by
// earlier runs (loaded before the job manager starts, so the placements of their running tasks
// can be restored) and those whose agent registers for the first time (created then, and
// handed to the job manager). It also runs the liveness monitor that turns silent clusters
// Unreachable and their tasks lost (RemoteCluster::CheckLiveness), every fiftieth of the
// heartbeat interval (at least every 5 ms).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "server/agent/node_names.h"
#include "server/agent/remote_cluster.h"

namespace tessera::server {

struct AgentClustersOptions {
  Duration heartbeat_interval{1000};
  Duration unreachable_timeout{3000};
  Duration lost_grace{60000};
  Duration log_timeout{10000};  // RemoteClusterOptions::log_timeout
  agent::InventoryRules rules;
  const Clock* clock = nullptr;     // required
  store::Store* store = nullptr;    // required
  NodeNames* node_names = nullptr;  // required
  // The clusters of the server's config file: no agent may register one of these names.
  std::set<std::string, std::less<>> reserved_names;
  TaskObserver* task_observer = nullptr;            // required
  InventoryObserver* inventory_observer = nullptr;  // required
  // Hands a new cluster to the job manager: called once per cluster, when it is established
  // (its first inventory accepted; RemoteCluster).
  std::function<void(Cluster*)> attach;
};

class AgentClusters {
 public:
  explicit AgentClusters(AgentClustersOptions options);
  ~AgentClusters();  // stops the monitor

  // Loads the stored clusters. Call once, before Start. DataLoss for an undecodable record.
  // Node records without their cluster's record (left by an interrupted deletion) are removed.
  absl::Status Load();
  // The clusters loaded from the store (for JobManager::Start). Call before the first Attach.
  std::vector<Cluster*> clusters() const;
  // Starts the liveness monitor.
  void Start();
  void Stop();

  // Starts a session of cluster `request.cluster()` (creating the cluster if new) and returns
  // the cluster and the session's epoch. InvalidArgument naming the field for a bad Register,
  // or a name of the server's config file.
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> Attach(AgentChannel* channel,
                                                            const agent::v1::Register& request);

  // Deletes cluster `name` (RemoteCluster::Delete): the next registration of that name starts
  // a new cluster. NotFound when no agent ever registered it (a cluster of the server's config
  // file, or none); FailedPrecondition while its agent is connected.
  absl::Status Delete(std::string_view name);

  Duration heartbeat_interval() const { return options_.heartbeat_interval; }
  // Node usages applied from heartbeats so far, all clusters together.
  uint64_t node_updates() const;

 private:
  RemoteClusterOptions ClusterOptions(const std::string& name) const;
  void MonitorMain();

  const AgentClustersOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<RemoteCluster>, std::less<>> clusters_;
  // Deleted clusters, kept alive: the job manager may still hold them.
  std::vector<std::unique_ptr<RemoteCluster>> deleted_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread monitor_;
};

}  // namespace tessera::server

// Cluster: the backend contract. One set of nodes the control plane places tasks on, and the
// backend that runs them — this machine's processes (agent/local), a simulated fleet
// (agent/sim), a Slurm cluster through slurmrestd (agent/slurm) or a Kubernetes cluster
// through its API server (agent/kubernetes). The control plane drives a cluster in-process or, through `tessera
// agent`, over the agent protocol (RemoteCluster on the server side): the agent runs a Cluster
// of its own backend and relays this interface.
//
// The control plane asks a cluster for its inventory (core Nodes, each carrying the cluster's
// labels, among them tessera.io/cluster: <name>), sends it launches (a task bound to one of its
// nodes, identified by a launch id unique per attempt) and cancellations, and hears back
// through a TaskObserver when a launched task started and when it ended. After a restart,
// Recover() tells which of the given launches are still running (they are kept) and the
// outcome of the others arrives through the observer as for any task.
//
// Inventory may change over time (a node drained, added or gone): callers poll Inventory() and
// compare; a node missing from a later inventory has left the cluster. Recover may be called
// again after an agent reconnects; each call reconciles against the given list as at start.
//
// Thread-safety: every method may be called from any thread. Observer callbacks may arrive on
// any thread, inside Launch or Recover included, with no cluster lock held; they must only hand
// the news on (queue it) and return.
//
// Lifetime: the observer, and every callback given in a backend's options (its log, say), must
// outlive the cluster. The destructor stops and joins every thread the cluster started before
// it returns, a request in flight aborted: once it has returned, no callback runs. An owner
// therefore destroys the cluster before what its callbacks write into (a class declares the
// cluster after them, as members are destroyed in reverse order). Each backend's tests destroy
// it while its threads are busy and check that nothing calls back afterwards
// (agent/common/testing/callback_probe.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cluster_name.h"
#include "core/node.h"
#include "tessera/cluster/task_launch.h"
#include "tessera/cluster/task_log.h"
#include "tessera/common/clock.h"

namespace tessera {

class Cluster;

// What a node uses now, as heartbeats report it (soft state: never stored). Units: cpu
// millicores, memory bytes, GPU utilisation in percent per device (index order), power in
// watts; a value the backend cannot measure is left out (nullopt / empty).
struct NodeUsage {
  std::string node;
  std::optional<int64_t> cpu;
  std::optional<int64_t> memory;
  std::vector<double> gpu_utilization;
  std::optional<double> power_watts;
};

// Hears of inventory changes that happen while the control plane runs (a cluster behind an
// agent: nodes added, changed, drained, gone, or NotReady because the agent went silent).
// Called from any thread with no cluster lock held; must only queue the news and return.
class InventoryObserver {
 public:
  virtual ~InventoryObserver() = default;
  // `nodes` replace the cluster's nodes of the same name (new names are added); a node with
  // `removed` set has left the cluster.
  virtual void OnNodesChanged(const Cluster& cluster, std::vector<Node> nodes) = 0;
};

// A launch the control plane believes was sent before a restart.
struct KnownLaunch {
  TaskLaunchSpec spec;
  std::optional<TimePoint> start_time;
};

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual const std::string& name() const = 0;
  virtual std::string_view backend() const = 0;  // "local", "sim"
  // Cluster labels (tessera.io/cluster included), as clusterSelector matches them.
  // (backend() also names "slurm", "kubernetes" and "remote" for a cluster behind an agent.)
  virtual const std::map<std::string, std::string, std::less<>>& labels() const = 0;
  // The nodes, with `cluster` set to name() and the cluster labels merged into their labels.
  virtual std::vector<Node> Inventory() const = 0;
  // False while the control plane cannot reach the cluster (its agent is silent).
  virtual bool reachable() const { return true; }
  // What each node uses now; empty when the backend measures nothing.
  virtual std::vector<NodeUsage> Usage() const { return {}; }
  // Runs a task; its start and end arrive through the observer (a task that cannot start
  // ends with reason "StartFailed").
  virtual void Launch(const TaskLaunchSpec& spec) = 0;
  // SIGTERM now, SIGKILL after `grace` (or the simulated equivalent); unknown ids are ignored.
  virtual void Cancel(std::string_view launch_id, Duration grace) = 0;
  // After a restart, before any Launch: the launches in `known` still running are supervised
  // again and their ids returned (with those the cluster can tell never started, launched now);
  // every other one gets a TaskEnd through the observer (its recorded outcome, or
  // "LostOnRestart"). Tasks the cluster runs that are not in `known` are killed.
  virtual std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) = 0;
  // The control plane has stored the task's end: the cluster may drop what it kept about it
  // (not its logs). Unknown ids are ignored.
  virtual void Forget(std::string_view launch_id) = 0;
  // A slice of a task's log. NotFound when the cluster has no log for the launch;
  // FailedPrecondition for clusters without logs (simulated ones).
  virtual absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream,
                                           int64_t offset, int64_t limit) const = 0;
};

}  // namespace tessera

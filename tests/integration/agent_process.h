// AgentProcess: a real `tessera agent` running as a child process of the test, connected to a
// ServerProcess's gRPC port.
//
// Start() spawns `tessera agent --server HOST:PORT --cluster NAME --backend BACKEND --token T
// [--data-dir DIR] [extra args]` with stdout and stderr in LOG_DIR/agent-<cluster>-<n>.log (n
// counts the starts of every agent in the test process) and waits until the log says the cluster
// registered ("tessera agent: cluster NAME registered with ..."). Kill() sends SIGKILL at once
// (an agent host dying: task processes of the local backend keep running under their
// supervisors); Stop() sends SIGTERM and, after a grace period, SIGKILL. The agent gets SIGKILL
// when the test process dies (PR_SET_PDEATHSIG). The destructor kills a running agent and then,
// for the local backend, every process that mentions its data directory (the tasks it left).
//
// Also here, what the agent tests share: the server configuration they run under, the REST views
// of a cluster and its nodes, and a job for simulated nodes.
//
// The binary is TesseraBinary() (server_process.h).
// Errors: Start() returns Unavailable (the agent exited) or DeadlineExceeded, with the log.
// Thread-safety: the accessors may be read from any thread while no Start/Stop/Kill runs;
// Start/Stop/Kill belong to one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json.h"
#include "rest_api.h"

namespace tessera::integration {

struct AgentProcessOptions {
  std::string server;    // required: the control plane's gRPC address, HOST:PORT
  std::string cluster;   // required
  std::string backend;   // required: "local" | "sim"
  std::string token;     // required: an admin token
  std::string log_dir;   // required
  std::string data_dir;  // the local backend's --data-dir; "" for none
  std::vector<std::string> extra_args;  // appended: {"--sim-node-count", "4"}, ...
};

class AgentProcess {
 public:
  explicit AgentProcess(AgentProcessOptions options);
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // Spawns the agent and waits (up to `timeout`) until its first session is registered.
  // REQUIRES: not running.
  absl::Status Start(std::chrono::seconds timeout = std::chrono::seconds(60));
  // SIGTERM, then SIGKILL when it has not exited after `grace`. Returns the wait status
  // (waitpid's), -1 when it was not running.
  int Stop(std::chrono::seconds grace = std::chrono::seconds(30));
  // SIGKILL and reap. No-op when not running.
  void Kill();
  // Waits (up to `timeout`) for the agent to exit by itself; its wait status, or -1 when it is
  // still running (or was not).
  int AwaitExit(std::chrono::seconds timeout);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const AgentProcessOptions& options() const { return options_; }
  // The current (or last) start's log.
  std::string Log() const;

 private:
  absl::Status Spawn();
  // Reaps the child when it has exited; returns whether it has.
  bool Reaped();

  AgentProcessOptions options_;
  pid_t pid_ = -1;
  int wait_status_ = -1;
  std::string log_path_;
};

// Writes the server configuration of the agent tests to `path`: no in-process cluster; agents
// heartbeat every 200 ms, a silent cluster is Unreachable after 600 ms and its tasks are lost
// `lost_grace` later; a failed job is requeued after 500 ms. `agents_extra` (YAML lines indented
// by two spaces, e.g. "  gpuModels: [H100]\n") is added to the `agents:` section.
void WriteAgentServerConfig(const std::string& path, std::string_view agents_extra = "",
                            std::string_view lost_grace = "2s");

// GET /api/v1/clusters: the cluster named `name`, null when it is not listed.
Json ClusterItem(const RestApi& api, std::string_view name);
// GET /api/v1/nodes: the nodes of cluster `cluster`.
std::vector<Json> ClusterNodes(const RestApi& api, std::string_view cluster);
// Whether the cluster is listed, with `reachable` and `ready_nodes` as given.
bool ClusterIs(const RestApi& api, std::string_view name, bool reachable, int ready_nodes);
// Whether node `node` of cluster `cluster` is listed with `ready` as given.
bool NodeReady(const RestApi& api, std::string_view cluster, std::string_view node, bool ready);

// A gang job for simulated nodes: group "main" of `replicas` tasks with `gpus` GPUs each,
// tolerating tessera.io/simulated=true:NoSchedule, running `duration` ("" = until cancelled)
// on the clusters with label tessera.io/cluster=`cluster`.
Json SimGangJob(std::string_view name, std::string_view cluster, int replicas, int gpus,
                std::string_view duration);
// A job for a real cluster: group "main" of `replicas` tasks running `sh -c script`, each with
// one CPU, 1 GiB and `gpus` GPUs, on the clusters with label tessera.io/cluster=`cluster`.
Json ClusterGpuJob(std::string_view name, std::string_view cluster, int replicas, int gpus,
                   std::string_view script);

}  // namespace tessera::integration

// LocalCluster: this machine as a one-node cluster whose tasks are real processes, run by the
// local executor (agent/local/local_executor.h: process groups, per-task logs, GPU visibility,
// cancel with grace, time limits, adoption after a restart).
//
// The node comes from agent::DiscoverLocalNode (cpu and memory from affinity and cgroups, GPUs
// from NVML or declared). Multi-task jobs get the distributed-training environment: every task
// of a job runs here, so the peers' address is 127.0.0.1 and each rank gets a free port picked
// when the job's first task is launched.
//
// Executor outcomes map onto TaskEnds: exit 0 → Succeeded; non-zero exit → Failed with the
// exit code; time limit → Failed "TimeLimitExceeded"; cancelled → Cancelled; killed by a
// signal nobody sent → Failed "Killed"; could not start → Failed "StartFailed"; gone after a
// restart → Failed "LostOnRestart".
// Recover reconciles the executor's tasks, those adopted from disk after a restart and those it
// held already (an agent that stayed up while the control plane was away), with `known`: a
// running known task is kept, a known task that ended is told again (unless adopted now: its
// outcome arrives through the executor), a known task without a record is launched (with the
// supervisor) or lost, and a running task not in `known` is killed.
// Thread-safety: as Cluster.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/local/host_usage.h"
#include "agent/local/local_executor.h"
#include "agent/local/local_inventory.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent {

struct LocalClusterOptions {
  std::string name = "local";
  std::map<std::string, std::string, std::less<>> labels;  // tessera.io/cluster is added
  agent::LocalInventoryOptions inventory;
  std::string task_dir;    // the executor's log directory
  std::string supervisor;  // path of tessera-task-supervisor; "" runs tasks directly
  const Clock* clock = nullptr;  // nullptr = the system clock
};

class LocalCluster final : public Cluster {
 public:
  // Discovers the node and starts the executor. Errors: the inventory's and the executor's
  // (FailedPrecondition when another process supervises `task_dir`).
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Create(LocalClusterOptions options,
                                                              TaskObserver* observer);
  ~LocalCluster() override;

  // The tessera-task-supervisor installed beside the running binary (bin/ holds both); ""
  // when there is none, and tasks then run directly.
  static std::string SupervisorBesideBinary();

  const std::string& name() const override { return options_.name; }
  std::string_view backend() const override { return "local"; }
  const std::map<std::string, std::string, std::less<>>& labels() const override {
    return options_.labels;
  }
  std::vector<Node> Inventory() const override { return {node_}; }
  // The host's CPU (busy since the previous call, in millicores) and memory in use; GPU
  // utilisation and power are not measured.
  std::vector<NodeUsage> Usage() const override;
  void Launch(const TaskLaunchSpec& spec) override;
  void Cancel(std::string_view launch_id, Duration grace) override;
  std::vector<std::string> Recover(const std::vector<KnownLaunch>& known) override;
  void Forget(std::string_view launch_id) override;
  absl::StatusOr<LogChunk> ReadLog(std::string_view launch_id, LogStream stream, int64_t offset,
                                   int64_t limit) const override;

 private:
  LocalCluster(LocalClusterOptions options, Node node, TaskObserver* observer);
  void OnOutcome(const agent::TaskOutcome& outcome);
  // Ports for the ranks of a job, picked at its first launch.
  absl::StatusOr<std::vector<int32_t>> JobPorts(const std::string& job_id, int count);

  LocalClusterOptions options_;
  const Clock& clock_;
  const Node node_;
  TaskObserver* const observer_;
  std::unique_ptr<agent::LocalExecutor> executor_;

  std::mutex mu_;
  std::map<std::string, std::vector<int32_t>> job_ports_;
  mutable std::mutex usage_mu_;
  mutable agent::HostCpuMeter cpu_meter_;  // guarded by usage_mu_
};

}  // namespace tessera::agent

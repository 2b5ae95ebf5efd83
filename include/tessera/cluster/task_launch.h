// What the control plane asks a cluster to run (TaskLaunchSpec), and what the cluster tells back
// about it (TaskObserver: started, and how it ended).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job_phase.h"
#include "core/placement.h"
#include "tessera/common/clock.h"

namespace tessera {

// One task to run: the spec's task group fields and the placement.
struct TaskLaunchSpec {
  std::string launch_id;  // [A-Za-z0-9._-]: "<job>-<task>-a<attempt>"
  std::string job_id;
  std::string task_name;   // "worker-0"
  Placement placement;     // a node of this cluster and its GPU devices
  int64_t cpu = 0;         // millicores the task requested (0: none)
  int64_t memory = 0;      // bytes the task requested (0: none)
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string working_dir;
  std::optional<Duration> time_limit;
  Duration termination_grace{0};
  std::optional<Duration> duration;  // simulated clusters: how long the task runs
  // The job's tasks in rank order (node names), when it has more than one: the
  // distributed-training environment is derived from them.
  std::vector<std::string> peer_nodes;
  int32_t rank = 0;
};

// How a task ended, as the job's lifecycle needs it.
struct TaskEnd {
  std::string launch_id;
  TaskPhase phase = TaskPhase::kFailed;  // kSucceeded, kFailed or kCancelled
  std::optional<int32_t> exit_code;
  // "" | "Error" | "TimeLimitExceeded" | "StartFailed" | "Killed" | "LostOnRestart" | "Lost"
  // (its node left the inventory)
  std::string reason;
  std::string message;
  TimePoint time{};
};

// Hears of a cluster's tasks. Called from any thread of the cluster, inside Launch or Recover
// included, with no cluster lock held: an implementation only hands the news on (queues it)
// and returns.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void OnTaskStarted(std::string_view launch_id, TimePoint time) = 0;
  virtual void OnTaskEnded(const TaskEnd& end) = 0;
};

}  // namespace tessera

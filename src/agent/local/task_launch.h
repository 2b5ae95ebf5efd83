// TaskLaunch: what the local executor needs to run one task of a placed job.
//
// The server builds one per task from the job spec (command, args, env, workingDir,
// timeLimit, terminationGracePeriod) and the placement (the GPU device indices of this node).
//   task_id    names the task's files under the executor's log directory, so it is limited to
//              [A-Za-z0-9._-], 1..200 characters, not starting with '.'; unique among the
//              executor's running tasks. A restarted attempt reuses the id: its logs append.
//   command    the program and its leading arguments (command[0] is looked up in the task's
//              PATH when it has no '/'); `args` follow them.
//   gpus       device indices on this node (NVML / PCI bus order); empty = a CPU-only task,
//              which sees no GPU (see task_env.h).
//   time_limit enforced like a cancellation: SIGTERM to the task's process group, SIGKILL
//              after `termination_grace`.
// A value type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/local/distributed_env.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

struct TaskLaunch {
  std::string task_id;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string working_dir;  // "" = the executor's working directory
  std::vector<int32_t> gpus;
  std::optional<Duration> time_limit;
  Duration termination_grace{0};
  // Set for the tasks of a multi-task job: adds DistributedEnv's variables.
  std::optional<DistributedTask> distributed;
};

// Checks the fields the executor relies on; errors name the field ("task_id: ...").
absl::Status ValidateTaskLaunch(const TaskLaunch& launch);

// True when `id` is usable as a file name stem (see task_id above).
bool IsValidTaskId(std::string_view id);

}  // namespace tessera::agent

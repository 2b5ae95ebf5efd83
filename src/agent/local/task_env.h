// TaskEnvironment: the environment variables a task's process starts with.
//
// Three layers, later ones winning:
//   1. the base: the executor's own environment (or one configured for it),
//   2. the task's `env` from its job spec,
//   3. Tessera's variables, which the task cannot override because isolation depends on them:
//        TESSERA_TASK_ID          the task's id
//        CUDA_VISIBLE_DEVICES     the placement's device indices, "0,3"; "" for a CPU-only task
//        NVIDIA_VISIBLE_DEVICES   the same list; "void" for a CPU-only task (the NVIDIA
//                                 container toolkit's value for "no GPU and no driver")
//        CUDA_DEVICE_ORDER        PCI_BUS_ID, so CUDA numbers devices as NVML and the
//                                 inventory do (CUDA's default order is "fastest first")
//      and, for the tasks of a multi-task job, DistributedEnv's variables.
// A CPU-only task therefore sees no GPU at all, even on a GPU machine: GPUs it was not given
// belong to other tasks.
//
// Pure functions; thread-safe. Errors come from DistributedEnv (InvalidArgument).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/local/distributed_env.h"
#include "agent/local/task_launch.h"

namespace tessera::agent {

absl::StatusOr<EnvMap> TaskEnvironment(const EnvMap& base, const TaskLaunch& launch);

// "0,1,3": the device list as CUDA_VISIBLE_DEVICES spells it.
std::string DeviceList(const std::vector<int32_t>& gpus);

// The calling process's environment (environ) as a map, without the control plane's
// credentials (TESSERA_TOKEN: an agent or server given its admin token that way must not hand
// it to every task).
EnvMap ProcessEnvironment();

// "KEY=value" strings, for execve.
std::vector<std::string> ToEnvStrings(const EnvMap& env);

}  // namespace tessera::agent

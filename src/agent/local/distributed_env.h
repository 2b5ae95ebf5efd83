// DistributedEnv: the environment a task of a multi-task job needs to find its peers.
//
// A job's tasks, in rank order, each have an endpoint (the address of its node and a port
// reserved for it). From that list and one task's index, DistributedEnv derives the variables of
// the two common conventions:
//   torch.distributed (env:// init, torchrun names)
//     MASTER_ADDR, MASTER_PORT  rank 0's endpoint (its TCPStore / rendezvous)
//     WORLD_SIZE                number of tasks;  RANK  this task's index
//     LOCAL_RANK                position among the tasks with the same address (same node)
//     LOCAL_WORLD_SIZE          number of tasks with the same address
//     GROUP_RANK                index of this task's node among the distinct addresses, in
//                               order of first appearance (torchrun's node rank)
//   TensorFlow (MultiWorkerMirroredStrategy)
//     TF_CONFIG  {"cluster":{"worker":["host:port",...]},"task":{"type":"worker","index":i}}
//     every task is a "worker"; worker 0 acts as TensorFlow's chief.
// IPv6 addresses are bracketed in host:port strings ("[::1]:29500").
//
// A pure function; thread-safe. Errors (InvalidArgument) name the offending field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::agent {

struct TaskEndpoint {
  std::string address;  // host name or IP address of the task's node
  int32_t port = 0;     // 1..65535, reserved for this task
};

// The peers of one task: every task of the job in rank order, and this task's rank.
struct DistributedTask {
  std::vector<TaskEndpoint> tasks;
  int32_t index = 0;
};

using EnvMap = std::map<std::string, std::string>;

absl::StatusOr<EnvMap> DistributedEnv(const DistributedTask& task);

// "host:port", with IPv6 literals bracketed.
std::string HostPort(const TaskEndpoint& endpoint);

}  // namespace tessera::agent

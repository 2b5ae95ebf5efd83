#include "agent/local/distributed_env.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

absl::Status ValidateEndpoints(const DistributedTask& task) {
  if (task.tasks.empty()) return absl::InvalidArgumentError("distributed.tasks: empty");
  if (task.index < 0 || task.index >= static_cast<int32_t>(task.tasks.size())) {
    return absl::InvalidArgumentError(
        fmt::format("distributed.index: {} is outside 0..{}", task.index, task.tasks.size() - 1));
  }
  for (size_t i = 0; i < task.tasks.size(); ++i) {
    const TaskEndpoint& endpoint = task.tasks[i];
    if (endpoint.address.empty()) {
      return absl::InvalidArgumentError(fmt::format("distributed.tasks[{}].address: empty", i));
    }
    if (endpoint.port < 1 || endpoint.port > 65535) {
      return absl::InvalidArgumentError(
          fmt::format("distributed.tasks[{}].port: {} is outside 1..65535", i, endpoint.port));
    }
  }
  return absl::OkStatus();
}

std::string TfConfig(const DistributedTask& task) {
  nlohmann::json workers = nlohmann::json::array();
  for (const TaskEndpoint& endpoint : task.tasks) workers.push_back(HostPort(endpoint));
  nlohmann::json config = {{"cluster", {{"worker", workers}}},
                           {"task", {{"type", "worker"}, {"index", task.index}}}};
  return config.dump();
}

}  // namespace

std::string HostPort(const TaskEndpoint& endpoint) {
  const bool bracket =
      endpoint.address.find(':') != std::string::npos && endpoint.address.front() != '[';
  return bracket ? fmt::format("[{}]:{}", endpoint.address, endpoint.port)
                 : fmt::format("{}:{}", endpoint.address, endpoint.port);
}

absl::StatusOr<EnvMap> DistributedEnv(const DistributedTask& task) {
  if (absl::Status status = ValidateEndpoints(task); !status.ok()) return status;
  const std::string& address = task.tasks[task.index].address;
  int32_t local_rank = 0;
  int32_t local_world_size = 0;
  std::vector<std::string> nodes;  // distinct addresses, first appearance first
  int32_t group_rank = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(task.tasks.size()); ++i) {
    const std::string& a = task.tasks[i].address;
    if (std::find(nodes.begin(), nodes.end(), a) == nodes.end()) nodes.push_back(a);
    if (a != address) continue;
    if (i < task.index) ++local_rank;
    if (i == task.index) group_rank = static_cast<int32_t>(nodes.size()) - 1;
    ++local_world_size;
  }
  const TaskEndpoint& master = task.tasks.front();
  return EnvMap{
      {"MASTER_ADDR", master.address},
      {"MASTER_PORT", fmt::format("{}", master.port)},
      {"WORLD_SIZE", fmt::format("{}", task.tasks.size())},
      {"RANK", fmt::format("{}", task.index)},
      {"LOCAL_RANK", fmt::format("{}", local_rank)},
      {"LOCAL_WORLD_SIZE", fmt::format("{}", local_world_size)},
      {"GROUP_RANK", fmt::format("{}", group_rank)},
      {"TF_CONFIG", TfConfig(task)},
  };
}

}  // namespace tessera::agent

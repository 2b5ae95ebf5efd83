#include "agent/local/task_env.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "fmt/format.h"

extern char** environ;

namespace tessera::agent {

std::string DeviceList(const std::vector<int32_t>& gpus) { return absl::StrJoin(gpus, ","); }

absl::StatusOr<EnvMap> TaskEnvironment(const EnvMap& base, const TaskLaunch& launch) {
  EnvMap env = base;
  for (const auto& [key, value] : launch.env) env[key] = value;
  env["TESSERA_TASK_ID"] = launch.task_id;
  const bool cpu_only = launch.gpus.empty();
  env["CUDA_VISIBLE_DEVICES"] = DeviceList(launch.gpus);
  env["NVIDIA_VISIBLE_DEVICES"] = cpu_only ? "void" : DeviceList(launch.gpus);
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  if (launch.distributed.has_value()) {
    absl::StatusOr<EnvMap> distributed = DistributedEnv(*launch.distributed);
    if (!distributed.ok()) return distributed.status();
    for (auto& [key, value] : *distributed) env[key] = std::move(value);
  }
  return env;
}

EnvMap ProcessEnvironment() {
  EnvMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view kv(*entry);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    if (kv.substr(0, eq) == "TESSERA_TOKEN") continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

std::vector<std::string> ToEnvStrings(const EnvMap& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [key, value] : env) out.push_back(fmt::format("{}={}", key, value));
  return out;
}

}  // namespace tessera::agent

#include "agent/local/task_launch.h"

#include <string_view>

#include "fmt/format.h"

namespace tessera::agent {
namespace {

bool HasNul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

}  // namespace

bool IsValidTaskId(std::string_view id) {
  if (id.empty() || id.size() > 200 || id.front() == '.') return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status ValidateTaskLaunch(const TaskLaunch& launch) {
  if (!IsValidTaskId(launch.task_id)) {
    return absl::InvalidArgumentError(fmt::format(
        "task_id: \"{}\" must be 1..200 characters of [A-Za-z0-9._-], not starting with '.'",
        launch.task_id));
  }
  if (launch.command.empty() || launch.command.front().empty()) {
    return absl::InvalidArgumentError("command: empty");
  }
  for (size_t i = 0; i < launch.gpus.size(); ++i) {
    if (launch.gpus[i] < 0) {
      return absl::InvalidArgumentError(
          fmt::format("gpus[{}]: device index {} is negative", i, launch.gpus[i]));
    }
  }
  if (launch.time_limit.has_value() && launch.time_limit->count() <= 0) {
    return absl::InvalidArgumentError("time_limit: must be positive");
  }
  if (launch.termination_grace.count() < 0) {
    return absl::InvalidArgumentError("termination_grace: negative");
  }
  for (const auto& [key, value] : launch.env) {
    if (key.empty() || key.find('=') != std::string::npos || HasNul(key)) {
      return absl::InvalidArgumentError(fmt::format(
          "env: variable name \"{}\" is empty or contains '=' or a NUL character", key));
    }
    if (HasNul(value)) {
      return absl::InvalidArgumentError(fmt::format("env.{}: contains a NUL character", key));
    }
  }
  for (size_t i = 0; i < launch.command.size(); ++i) {
    if (HasNul(launch.command[i])) {
      return absl::InvalidArgumentError(fmt::format("command[{}]: contains a NUL character", i));
    }
  }
  for (size_t i = 0; i < launch.args.size(); ++i) {
    if (HasNul(launch.args[i])) {
      return absl::InvalidArgumentError(fmt::format("args[{}]: contains a NUL character", i));
    }
  }
  if (HasNul(launch.working_dir)) {
    return absl::InvalidArgumentError("working_dir: contains a NUL character");
  }
  return absl::OkStatus();
}

}  // namespace tessera::agent

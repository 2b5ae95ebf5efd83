#include "agent/slurm/slurm_submit.h"

#include <algorithm>
#include <limits>

#include "agent/slurm/slurm_jobs.h"
#include "agent/slurm/slurm_json.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tessera/common/status_macros.h"

namespace tessera::agent {
namespace {

using nlohmann::json;

// Slurm keeps time limits in 32 bits of minutes; its largest value means "infinite".
constexpr int64_t kMaxMinutes = std::numeric_limits<int32_t>::max();

bool IsLaunchId(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

absl::Status NoNul(std::string_view text, std::string_view field) {
  if (text.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format("{}: contains a NUL byte", field));
  }
  return absl::OkStatus();
}

absl::Status CheckSpec(const TaskLaunchSpec& spec) {
  if (!IsLaunchId(spec.launch_id)) {
    return absl::InvalidArgumentError(
        fmt::format("launch_id: \"{}\" is not [A-Za-z0-9._-]+", spec.launch_id));
  }
  if (spec.command.empty() || spec.command.front().empty()) {
    return absl::InvalidArgumentError("command: empty (Slurm runs a program, not a node's image)");
  }
  if (spec.placement.node.empty()) return absl::InvalidArgumentError("placement.node: empty");
  for (size_t i = 0; i < spec.command.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(NoNul(spec.command[i], fmt::format("command[{}]", i)));
  }
  for (size_t i = 0; i < spec.args.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(NoNul(spec.args[i], fmt::format("args[{}]", i)));
  }
  TESSERA_RETURN_IF_ERROR(NoNul(spec.working_dir, "working_dir"));
  TESSERA_RETURN_IF_ERROR(NoNul(spec.placement.node, "placement.node"));
  return absl::OkStatus();
}

// The task's environment, layer over layer (later layers win).
absl::StatusOr<std::map<std::string, std::string>> Environment(
    const TaskLaunchSpec& spec, const SlurmSubmitOptions& options,
    const std::map<std::string, std::string>& extra_env) {
  std::map<std::string, std::string> env;
  for (const auto* layer : {&options.base_env, &spec.env, &extra_env}) {
    for (const auto& [name, value] : *layer) {
      if (name.empty() || name.find('=') != std::string::npos) {
        return absl::InvalidArgumentError(fmt::format("env: \"{}\" is not a variable name", name));
      }
      TESSERA_RETURN_IF_ERROR(NoNul(name, "env"));
      TESSERA_RETURN_IF_ERROR(NoNul(value, fmt::format("env.{}", name)));
      env[name] = value;
    }
  }
  return env;
}

// {"set": true, "infinite": false, "number": N}: a number as v0.0.39 and later take it.
json Flagged(int64_t number) { return {{"set", true}, {"infinite", false}, {"number", number}}; }

// The environment as v0.0.38 takes it ({"NAME": "value"}) or later versions (["NAME=value"]).
json EnvironmentJson(const std::map<std::string, std::string>& env, bool v38) {
  json environment = v38 ? json::object() : json::array();
  for (const auto& [name, value] : env) {
    if (v38) {
      environment[name] = value;
    } else {
      environment.push_back(name + "=" + value);
    }
  }
  return environment;
}

// The fields whose shape changed after v0.0.38 (see the table in slurm_submit.h).
void AddVersionedFields(const TaskLaunchSpec& spec, SlurmApiVersion version,
                        const std::map<std::string, std::string>& env, json& job) {
  const bool v38 = version == SlurmApiVersion::kV38;
  const int32_t gpus = GpuCount(spec.placement);
  job["environment"] = EnvironmentJson(env, v38);
  if (v38) {
    job["nodelist"] = spec.placement.node;
    job["nodes"] = 1;
    if (gpus > 0) job["gres"] = fmt::format("gpu:{}", gpus);
  } else {
    job["required_nodes"] = json::array({spec.placement.node});
    job["nodes"] = "1";
    if (gpus > 0) job["tres_per_node"] = fmt::format("gres/gpu:{}", gpus);
  }
  if (spec.memory > 0) {
    const int64_t mib = MemoryMebibytes(spec.memory);
    job["memory_per_node"] = v38 ? json(mib) : Flagged(mib);
  }
  if (spec.time_limit.has_value()) {
    const int64_t minutes = TimeLimitMinutes(*spec.time_limit);
    job["time_limit"] = v38 ? json(minutes) : Flagged(minutes);
  }
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

absl::StatusOr<std::string> BatchScript(const TaskLaunchSpec& spec) {
  TESSERA_RETURN_IF_ERROR(CheckSpec(spec));
  std::string script = fmt::format("#!/bin/sh\n# Tessera task {}\nexec", spec.launch_id);
  for (const auto* words : {&spec.command, &spec.args}) {
    for (const std::string& word : *words) script += " " + ShellQuote(word);
  }
  script += "\n";
  return script;
}

std::string LogPath(std::string_view log_dir, std::string_view launch_id,
                    LogStream stream) {
  std::string_view dir = log_dir;
  while (!dir.empty() && dir.back() == '/') dir.remove_suffix(1);
  return fmt::format("{}/tessera-{}.{}.log", dir, launch_id,
                     stream == LogStream::kStdout ? "stdout" : "stderr");
}

int32_t GpuCount(const Placement& placement) { return static_cast<int32_t>(placement.gpus.size()); }

int64_t CpusPerTask(int64_t millicores) { return (millicores + 999) / 1000; }

int64_t MemoryMebibytes(int64_t bytes) {
  constexpr int64_t kMebibyte = int64_t{1} << 20;
  return bytes / kMebibyte + (bytes % kMebibyte != 0 ? 1 : 0);
}

int64_t TimeLimitMinutes(Duration limit) {
  const int64_t ms = limit.count();
  if (ms <= 0) return 1;
  return std::min(kMaxMinutes, ms / 60000 + (ms % 60000 != 0 ? 1 : 0));
}

absl::StatusOr<std::string> SubmitBody(const TaskLaunchSpec& spec,
                                       const SlurmSubmitOptions& options,
                                       const std::map<std::string, std::string>& extra_env) {
  TESSERA_ASSIGN_OR_RETURN(std::string script, BatchScript(spec));
  TESSERA_ASSIGN_OR_RETURN(auto env, Environment(spec, options, extra_env));
  json job = {
      {"name", spec.launch_id},
      {"comment", std::string(kCommentPrefix) + spec.launch_id},
      {"current_working_directory",
       spec.working_dir.empty() ? options.working_dir : spec.working_dir},
      {"standard_output", LogPath(options.log_dir, spec.launch_id, LogStream::kStdout)},
      {"standard_error", LogPath(options.log_dir, spec.launch_id, LogStream::kStderr)},
      {"requeue", false},
  };
  if (!options.partition.empty()) job["partition"] = options.partition;
  if (spec.cpu > 0) job["cpus_per_task"] = CpusPerTask(spec.cpu);
  AddVersionedFields(spec, options.api_version, env, job);
  json body;
  if (options.api_version == SlurmApiVersion::kV38) {
    body = {{"script", std::move(script)}, {"job", std::move(job)}};
  } else {
    job["script"] = std::move(script);
    body = {{"job", std::move(job)}};
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<int64_t> ParseSubmitReply(int http_status, std::string_view text) {
  const json reply = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const std::string errors = reply.is_discarded() ? "" : slurm_json::ErrorText(reply);
  if (!errors.empty()) {
    return absl::FailedPreconditionError(fmt::format("Slurm refused the job: {}", errors));
  }
  if (http_status != 200) {
    return absl::FailedPreconditionError(
        fmt::format("Slurm refused the job: HTTP {}", http_status));
  }
  if (reply.is_discarded() || !reply.is_object()) {
    return absl::InternalError("slurm submit: the reply is not a JSON object");
  }
  absl::StatusOr<std::optional<int64_t>> id = slurm_json::NonNegative(reply, "job_id");
  if (!id.ok())
    return absl::InternalError(fmt::format("slurm submit: {}", std::string(id.status().message())));
  if (!id->has_value() || **id == 0) {
    return absl::InternalError("slurm submit: the reply has no job_id");
  }
  return **id;
}

}  // namespace tessera::agent

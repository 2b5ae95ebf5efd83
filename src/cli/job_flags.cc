#include "cli/job_flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "absl/status/status.h"
#include "cli/wall_time.h"
#include "core/cluster_name.h"
#include "core/duration.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "spec/jobspec.h"
#include "tessera/common/status_macros.h"

namespace tessera::cli {
namespace {

using Json = nlohmann::ordered_json;

// The flag behind each document field the flags write (prefix match, longest first).
constexpr std::pair<std::string_view, std::string_view> kFieldFlags[] = {
    {"spec.tasks[0].resources.gpuModel", "--gpu-model"},
    {"spec.tasks[0].resources.memory", "--mem"},
    {"spec.tasks[0].resources.cpu", "--cpus"},
    {"spec.tasks[0].resources.gpu", "--gpus"},
    {"spec.tasks[0].replicas", "--nodes"},
    {"spec.tasks[0].command", "the command after --"},
    {"spec.tasks[0].workingDir", "--workdir"},
    {"spec.tasks[0].env", "--env"},
    {"spec.priorityClass", "--priority"},
    {"spec.priority", "--priority"},
    {"spec.timeLimit", "--time"},
    {"spec.queue", "--queue"},
    {"spec.clusterSelector", "--cluster"},
    {"spec.minAvailable", "--nodes"},
    {"metadata.requestId", "--request-id"},
    {"metadata.labels", "--label"},
    {"metadata.name", "--name"},
};

absl::Status FlagError(std::string_view flag, std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", flag, problem));
}

// "K=V" pairs into a JSON object; K non-empty.
absl::StatusOr<Json> KeyValues(const std::vector<std::string>& pairs, std::string_view flag) {
  Json out = Json::object();
  for (const std::string& pair : pairs) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return FlagError(flag, fmt::format("expected KEY=VALUE, got '{}'", pair));
    }
    out[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return out;
}

std::optional<int64_t> Integer(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// The flags' values checked one by one, with errors naming the flag, then written as a
// document.
absl::StatusOr<Json> FlagsToJson(const JobFlags& f) {
  Json metadata = Json::object();
  if (f.name) metadata["name"] = *f.name;
  if (!f.labels.empty()) {
    TESSERA_ASSIGN_OR_RETURN(metadata["labels"], KeyValues(f.labels, "--label"));
  }
  if (f.request_id) metadata["requestId"] = *f.request_id;

  Json spec = Json::object();
  if (f.queue) spec["queue"] = *f.queue;
  if (f.cluster) {
    TESSERA_RETURN_IF_ERROR(CheckClusterName(*f.cluster, "--cluster"));
    spec["clusterSelector"] = Json::object({{std::string(kClusterLabel), *f.cluster}});
  }
  if (f.priority) {
    if (std::optional<int64_t> number = Integer(*f.priority)) {
      spec["priority"] = *number;
    } else {
      spec["priorityClass"] = *f.priority;
    }
  }
  if (f.time) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Duration> limit, ParseWallTime(*f.time, "--time"));
    if (limit) spec["timeLimit"] = FormatDuration(*limit);
  }

  Json resources = Json::object();
  const std::string cpus = f.cpus.value_or("1");
  TESSERA_RETURN_IF_ERROR(ParseCpuMillis(cpus, "--cpus").status());
  resources["cpu"] = cpus;
  if (f.mem) {
    const bool has_unit =
        !f.mem->empty() && std::isalpha(static_cast<unsigned char>(f.mem->back()));
    if (!has_unit) {
      return FlagError("--mem", fmt::format("'{}': give a unit: 512Mi, 1Gi, 64Gi", *f.mem));
    }
    TESSERA_RETURN_IF_ERROR(ParseBytes(*f.mem, "--mem").status());
    resources["memory"] = *f.mem;
  }
  if (f.gpus) {
    TESSERA_RETURN_IF_ERROR(ParseMilliGpu(*f.gpus, "--gpus").status());
    resources["gpu"] = *f.gpus;
  }
  if (!f.gpu_models.empty()) {
    Json models = Json::array();
    for (const std::string& list : f.gpu_models) {
      size_t start = 0;
      while (true) {
        const size_t comma = list.find(',', start);
        models.push_back(list.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    resources["gpuModel"] = std::move(models);
  }

  Json task = Json::object();
  task["name"] = kSubmitTaskName;
  if (f.nodes) {
    if (*f.nodes < 1) return FlagError("--nodes", fmt::format("must be >= 1, got {}", *f.nodes));
    task["replicas"] = *f.nodes;
  }
  task["resources"] = std::move(resources);
  if (f.command.empty()) {
    return absl::InvalidArgumentError(
        "no command: give it after --, e.g. tessera submit --gpus 1 -- python train.py");
  }
  task["command"] = f.command;
  if (!f.env.empty()) {
    TESSERA_ASSIGN_OR_RETURN(task["env"], KeyValues(f.env, "--env"));
  }
  if (f.workdir) task["workingDir"] = *f.workdir;
  spec["tasks"] = Json::array({std::move(task)});

  Json doc = Json::object();
  doc["apiVersion"] = "tessera/v1";
  doc["kind"] = "Job";
  doc["metadata"] = std::move(metadata);
  doc["spec"] = std::move(spec);
  return doc;
}

// A codec error about a field the flags wrote, restated in terms of the flag.
absl::Status ToFlagError(const absl::Status& status) {
  std::optional<spec::JobSpecError> error = spec::GetJobSpecError(status);
  if (!error || error->field.empty()) return status;
  for (const auto& [prefix, flag] : kFieldFlags) {
    if (error->field.rfind(prefix, 0) == 0) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", flag, error->message));
    }
  }
  return absl::InvalidArgumentError(fmt::format("{}: {}", error->field, error->message));
}

}  // namespace

absl::Status CheckClusterName(std::string_view name, std::string_view flag) {
  if (IsValidClusterName(name)) return absl::OkStatus();
  return FlagError(flag, fmt::format("'{}' is not a cluster name (lowercase letters, digits, "
                                     "'.', '_' and '-', starting with a letter or digit, at "
                                     "most 63 characters)",
                                     name));
}

absl::StatusOr<spec::JobDocument> BuildJobDocument(const JobFlags& flags) {
  TESSERA_ASSIGN_OR_RETURN(const Json doc, FlagsToJson(flags));
  std::string text;
  try {
    text = doc.dump();
  } catch (const nlohmann::json::type_error&) {
    return absl::InvalidArgumentError("a flag value or the command is not valid UTF-8");
  }
  spec::ParseOptions options;
  options.format = spec::DocumentFormat::kJson;
  absl::StatusOr<spec::JobDocument> job = spec::ParseJobDocument(text, options);
  if (!job.ok()) return ToFlagError(job.status());
  return job;
}

}  // namespace tessera::cli

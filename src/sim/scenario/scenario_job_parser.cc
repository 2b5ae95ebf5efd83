// The jobs section of a scenario file (the Parser of scenario_parser_impl.h). The job's spec
// is decoded by the job documents' decoder in its snake_case style (spec/job_mapping.h), so
// that scenario files and the API follow one table of keys and rules; this file reads what
// only scenarios have: the name as a brace range, `at`, `outcome`, the queue and job names the
// file itself defines, and the bounds that keep a run's sums from overflowing.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/name_range.h"
#include "sim/scenario/scenario_parser_impl.h"
#include "spec/job_mapping.h"
#include "spec/jobspec.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::scenario_parsing {
namespace {

// The scenario's bounds on a task's quantities and on durations (yaml_reader.h).
spec::JobMappingOptions JobOptions(const std::string& path) {
  return spec::JobMappingOptions{
      .path = path,
      .caller_keys = {"name", "at", "outcome"},
      .bounds = {.max_cpu_millis = kMaxCpuMillis,
                 .max_bytes = kMaxBytes,
                 .max_milli_gpu = kMaxMilliGpu,
                 .max_count = kMaxCount,
                 .max_duration = kMaxScenarioDuration},
  };
}

// The line of `key`'s value in the mapping `n`, or of `n` when the key is absent.
int LineOf(const YAML::Node& n, std::string_view key) {
  const YAML::Node value = n[std::string(key)];
  return value ? YamlReader::Line(value) : YamlReader::Line(n);
}

}  // namespace

absl::Status Parser::JobSpecError(const YAML::Node& job, const absl::Status& status) const {
  const std::optional<spec::JobSpecError> error = spec::GetJobSpecError(status);
  if (!error.has_value()) return r_.Wrap(job, status);
  const int line = error->line > 0 ? error->line : YamlReader::Line(job);
  if (error->field.empty()) {
    return absl::InvalidArgumentError(Cat(r_.file(), ":", line, ": ", error->message));
  }
  return r_.ErrorAtLine(line, error->field, error->message);
}

absl::Status Parser::ParseJob(const YAML::Node& n, const std::string& path) {
  absl::StatusOr<JobSpec> spec = spec::DecodeSnakeCaseJob(n, JobOptions(path));
  if (!spec.ok()) return JobSpecError(n, spec.status());
  ScenarioJob job{.spec = *std::move(spec), .line = YamlReader::Line(n)};
  const YAML::Node name = n["name"];
  if (!name) return r_.Error(n, Field(path, "name"), "required");
  TESSERA_ASSIGN_OR_RETURN(const std::string pattern, r_.Name(name, Field(path, "name")));
  if (const YAML::Node at = n["at"]) {
    TESSERA_ASSIGN_OR_RETURN(job.at, r_.Dur(at, Field(path, "at")));
  }
  if (const YAML::Node outcome = n["outcome"]) {
    TESSERA_ASSIGN_OR_RETURN(const std::string o,
                             r_.Choice(outcome, Field(path, "outcome"), {"succeed", "fail"}));
    job.fails = o == "fail";
  }
  if (!job.spec.duration.has_value()) return r_.Error(n, Field(path, "duration"), "required");
  job.duration = *job.spec.duration;
  TESSERA_RETURN_IF_ERROR(CheckJobQueue(n, path, job.spec.queue));
  TESSERA_RETURN_IF_ERROR(SelectClusterByNodeLabels(n, path, job.spec));
  NoteGpuMemoryUse(n, path, job.spec);
  return AddJobs(n, path, pattern, std::move(job));
}

absl::Status Parser::CheckJobQueue(const YAML::Node& n, const std::string& path,
                                   const std::string& queue_name) const {
  const auto queue = index_.queues.find(queue_name);
  if (queue == index_.queues.end()) {
    return r_.ErrorAtLine(LineOf(n, "queue"), Field(path, "queue"),
                          Cat("queue '", queue_name, "' does not exist"));
  }
  if (!queue->second) {
    return r_.ErrorAtLine(LineOf(n, "queue"), Field(path, "queue"),
                          Cat("queue '", queue_name, "' has children; submit to a leaf queue"));
  }
  return absl::OkStatus();
}

// Every node carries its cluster's labels, so the simulator matches a job's cluster selector
// as a node selector of every task group.
absl::Status Parser::SelectClusterByNodeLabels(const YAML::Node& n, const std::string& path,
                                               JobSpec& spec) const {
  for (TaskGroup& group : spec.tasks) {
    for (const auto& [key, value] : spec.cluster_selector) {
      const auto [it, added] = group.request.node_selector.emplace(key, value);
      if (!added && it->second != value) {
        return r_.ErrorAtLine(LineOf(n, "cluster_selector"),
                              Field(Field(path, "cluster_selector"), key),
                              Cat("conflicts with node_selector ", key, "=", it->second));
      }
    }
  }
  return absl::OkStatus();
}

void Parser::NoteGpuMemoryUse(const YAML::Node& n, const std::string& path, const JobSpec& spec) {
  if (gpu_memory_user_.has_value()) return;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    if (spec.tasks[i].request.gpu_memory <= 0) continue;
    const std::string task = Index(Field(path, "tasks"), i);
    gpu_memory_user_ = std::pair{Field(task, "gpu_memory"), LineOf(n["tasks"][i], "gpu_memory")};
    return;
  }
}

// A brace range in the name makes one identical job per name ("infer-{0..7}").
absl::Status Parser::AddJobs(const YAML::Node& n, const std::string& path,
                             const std::string& pattern, ScenarioJob job) {
  const int name_line = LineOf(n, "name");
  absl::StatusOr<std::vector<std::string>> names = ExpandNameRanges(pattern, 10000);
  if (!names.ok()) {
    return r_.ErrorAtLine(name_line, Field(path, "name"), std::string(names.status().message()));
  }
  for (std::string& job_name : *names) {
    if (index_.jobs.contains(job_name)) {
      return r_.ErrorAtLine(name_line, Field(path, "name"),
                            Cat("job '", job_name, "' given twice"));
    }
    total_tasks_ += job.spec.TotalTasks();
    if (total_tasks_ > kMaxTasks) {
      return r_.Error(n, Field(path, "tasks"),
                      Cat("a scenario has at most ", kMaxTasks, " tasks (replicas of every job)"));
    }
    ScenarioJob copy = job;
    copy.spec.name = std::move(job_name);
    // The name is the only part not yet validated: the decoder left it to this parser.
    if (absl::Status valid = copy.spec.Validate(path); !valid.ok()) {
      return absl::InvalidArgumentError(
          Cat(r_.file(), ":", name_line, ": ", std::string(valid.message())));
    }
    index_.jobs.emplace(copy.spec.name, static_cast<int32_t>(scenario_.jobs.size()));
    scenario_.jobs.push_back(std::move(copy));
  }
  return absl::OkStatus();
}

}  // namespace tessera::sim::scenario_parsing

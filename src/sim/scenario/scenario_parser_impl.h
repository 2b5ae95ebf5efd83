// The Parser behind ParseScenario (scenario_parser.h), split by concept over
//   scenario_parser.cc        the file, the top-level sections, config, and queues (through
//                             spec's queue decoder, spec/queue_document.h)
//   scenario_node_parser.cc   clusters, nodes (name ranges), GPUs and taints
//   scenario_job_parser.cc    jobs: the spec through spec's job decoder (spec/job_mapping.h),
//                             and what only scenarios have (at, outcome, name ranges)
//   scenario_event_parser.cc  events and the nodes, jobs and GPUs they name
// Errors are InvalidArgument "FILE:LINE: FIELD: problem" (YamlReader). Internal to the parser.
// Not thread-safe; one parser per file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_index.h"
#include "sim/scenario/scenario_parser.h"
#include "sim/scenario/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace tessera::sim::scenario_parsing {

// The most backfill reservations a scenario may ask for.
inline constexpr int64_t kMaxBackfillDepth = 1'000'000;
// The largest fair-share weight of a queue.
inline constexpr int32_t kMaxQueueWeight = 1'000'000;

class Parser {
 public:
  Parser(std::string_view file, const ParseOptions& options)
      : r_(std::string(file)), options_(options) {
    scenario_.file = std::string(file);
  }

  absl::StatusOr<Scenario> Parse(const YAML::Node& root);

 private:
  absl::Status ParseConfig(const YAML::Node& n);
  absl::Status ParsePreemptionRate(const YAML::Node& n, const std::string& path);
  absl::Status ParseProfileValue(const YAML::Node& n, const std::string& field);
  absl::Status ParseClusters(const YAML::Node& n);
  absl::Status ParseNode(const YAML::Node& n, const std::string& path);
  absl::Status ParseGpus(const YAML::Node& n, const std::string& path, Node& node);
  absl::StatusOr<Taint> ParseTaint(const YAML::Node& n, const std::string& path,
                                   bool effect_required, bool* has_effect);
  absl::Status AddNodes(ScenarioNode proto, int name_line, const std::string& path);
  // The queues section, through the queue documents' decoder (spec/queue_document.h).
  absl::Status ParseQueues(const YAML::Node& n);
  absl::Status ParseJob(const YAML::Node& n, const std::string& path);
  // An error of the job decoder as "FILE:LINE: FIELD: MESSAGE" (the job's line when it has none).
  absl::Status JobSpecError(const YAML::Node& job, const absl::Status& status) const;
  absl::Status CheckJobQueue(const YAML::Node& n, const std::string& path,
                             const std::string& queue_name) const;
  absl::Status SelectClusterByNodeLabels(const YAML::Node& n, const std::string& path,
                                         JobSpec& spec) const;
  // Remembers the first task that asks for gpu_memory (nodes with GPUs must then give theirs).
  void NoteGpuMemoryUse(const YAML::Node& n, const std::string& path, const JobSpec& spec);
  // The jobs named by `pattern` (a brace range makes several), each a copy of `job`.
  absl::Status AddJobs(const YAML::Node& n, const std::string& path, const std::string& pattern,
                       ScenarioJob job);
  absl::Status ParseEvent(const YAML::Node& n, const std::string& path);
  absl::Status CheckEventTarget(const ScenarioEvent& event, const YAML::Node& n,
                                const std::string& path, bool has_gpu, bool has_taint);

  YamlReader r_;
  ParseOptions options_;
  Scenario scenario_;
  ScenarioIndex index_;
  int64_t total_tasks_ = 0;
  // `gpus.memory` is required on every node with GPUs once a task asks for gpu_memory.
  std::vector<std::pair<std::string, int>> nodes_without_gpu_memory_;  // field, line
  std::optional<std::pair<std::string, int>> gpu_memory_user_;         // the first such task
};

}  // namespace tessera::sim::scenario_parsing

// Scenario parser: a scenario YAML file (../shared/SCENARIOS.md) to a validated Scenario.
//
// Every key of the contract is accepted as written and every unknown key is an error. Errors
// are InvalidArgument with one message of the form
//   "FILE:LINE: jobs[2].tasks[0].gpu: must be >= 0"
// naming the file, the 1-based line of the offending value (or key) and the field path. Brace
// ranges in node names (`gpu-{0..3}`) are expanded; quantities use the Kubernetes notation,
// durations seconds or "1h30m". A check, event or job that names a job, node or queue that does
// not exist is an error of the file. `config` fills ScenarioConfig::policy: a key left out keeps
// the SchedulingPolicy default (the server's), except `requeue_backoff` (0 in scenarios). Queues
// fill QueueSpec (children inherit nothing) and are checked by QueueTree::Create, whose errors
// are given the queue's path and line ("FILE:12: queues[0].children[1].weight: must be >= 1").
//
// Never throws: yaml-cpp's exceptions are caught here. Thread-safe: pure functions (the file
// variant reads files).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"

namespace tessera::sim {

struct ParseOptions {
  // Directory that relative paths in the file (config.profile) are resolved against.
  std::string base_dir = ".";
  // When false, a profile given as a file path is an error (for fuzzing).
  bool allow_files = true;
};

// Parses scenario text; `file` names it in errors.
absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view file,
                                       const ParseOptions& options = {});

// Reads and parses the file at `path`, resolving relative paths against its directory.
absl::StatusOr<Scenario> ParseScenarioFile(const std::string& path);

}  // namespace tessera::sim

// Scenario parser: a scenario YAML file (../shared/SCENARIOS.md) to a validated Scenario.
//
// Every key of the contract is accepted as written and every unknown key is an error. Errors
// are InvalidArgument with one message of the form
//   "FILE:LINE: jobs[2].tasks[0].gpu: must be >= 0"
// naming the file, the 1-based line of the offending value (or key) and the field path. Brace
// ranges in node names (`gpu-{0..3}`) are expanded; quantities use the Kubernetes notation,
// durations seconds or "1h30m". A check, event or job that names a job, node or queue that does
// not exist is an error of the file. Keys whose behaviour is not built yet (queue quotas,
// backfill, preemption, DRF fair share, min_runtime; docs/scenarios.md lists them) are parsed and
// validated, then refused with "FILE:LINE: config.backfill: not supported yet".
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

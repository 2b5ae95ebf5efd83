// RunScenarioCommand: `tessera sim --scenario FILE [--seed N]` — parse, run, report.
//
// Prints the run's timeline and a summary to `out`; errors and failed expectations to `err`.
// Returns the process exit status of the contract (../shared/SCENARIOS.md):
//   0  every expectation held
//   1  an expectation failed ("FILE:LINE: expect[3] {…}: failed at 120s: phase is Pending …")
//   2  the file is invalid ("FILE:LINE: jobs[2].tasks[0].gpu: must be >= 0") or cannot be read
// `seed` overrides the file's config.seed. Thread-compatible: one run per call.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace tessera::sim {

int RunScenarioCommand(const std::string& path, std::optional<uint64_t> seed, std::ostream& out,
                       std::ostream& err);

}  // namespace tessera::sim

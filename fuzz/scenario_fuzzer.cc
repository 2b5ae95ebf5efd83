// Feeds arbitrary bytes to the scenario parser (sim/scenario/scenario_parser.h) and checks that
// it never crashes and that every rejection is an InvalidArgument naming the file. Small
// scenarios that parse are also run, so the runner sees the odd shapes the parser accepts; the
// run must end (restarts and instants are bounded) and report one result per expectation.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "sim/scenario/scenario_parser.h"
#include "sim/scenario/scenario_runner.h"

namespace tessera::sim {
namespace {

using ::tessera::fuzz::Require;

constexpr std::string_view kFile = "fuzz.yaml";

// Runs are cheap only for small scenarios whose jobs cannot restart many times.
bool SmallEnoughToRun(const Scenario& s) {
  if (s.nodes.size() > 64 || s.jobs.size() > 64 || s.events.size() > 64 ||
      s.expectations.size() > 256) {
    return false;
  }
  int64_t restarts = 0;
  for (const ScenarioJob& job : s.jobs) {
    restarts += job.spec.restart_policy.max_restarts;
    if (job.spec.TotalTasks() > 256) return false;
  }
  return restarts <= 256;
}

}  // namespace
}  // namespace tessera::sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::sim;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ParseOptions options;
  options.allow_files = false;
  absl::StatusOr<Scenario> scenario = ParseScenario(input, kFile, options);
  if (!scenario.ok()) {
    Require(scenario.status().code() == absl::StatusCode::kInvalidArgument,
            "a rejection is InvalidArgument", input);
    Require(std::string(scenario.status().message()).rfind(kFile, 0) == 0,
            "a rejection names the file", input);
    return 0;
  }
  if (!SmallEnoughToRun(*scenario)) return 0;
  std::ostringstream timeline;
  absl::StatusOr<RunReport> report = RunScenario(*scenario, RunOptions{}, timeline);
  if (report.ok()) {
    Require(report->results.size() == scenario->expectations.size(), "one result per expectation",
            input);
  }
  return 0;
}

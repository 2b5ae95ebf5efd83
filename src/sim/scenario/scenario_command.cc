#include "sim/scenario/scenario_command.h"

#include "fmt/format.h"
#include "sim/scenario/expectation_checker.h"
#include "sim/scenario/scenario_parser.h"
#include "sim/scenario/scenario_runner.h"

namespace tessera::sim {

int RunScenarioCommand(const std::string& path, std::optional<uint64_t> seed, std::ostream& out,
                       std::ostream& err) {
  absl::StatusOr<Scenario> scenario = ParseScenarioFile(path);
  if (!scenario.ok()) {
    err << scenario.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<RunReport> report = RunScenario(*scenario, RunOptions{seed}, out);
  if (!report.ok()) {
    err << report.status().message() << "\n";
    return 2;
  }
  const int failures = report->Failures();
  const int total = static_cast<int>(report->results.size());
  out << fmt::format("{}: {} of {} expectations held (seed {})\n", scenario->name, total - failures,
                     total, report->seed);
  if (report->truncated_after > 0) {
    err << fmt::format(
        "{}: the run was stopped after {} instants, at {}, before it ended; {} expectations could "
        "not be judged\n",
        scenario->file, report->truncated_after, FormatTime(report->end), failures);
  }
  for (const ExpectationResult& r : report->results) {
    if (!r.passed) err << FormatFailure(*scenario, r) << "\n";
  }
  return failures == 0 && report->truncated_after == 0 ? 0 : 1;
}

}  // namespace tessera::sim

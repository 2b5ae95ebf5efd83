// Scenario runner: runs a parsed Scenario through the real scheduler core on a simulated clock.
//
// The cluster is a ClusterState built from the scenario's nodes; scheduling is the job-level
// Scheduler (sched/scheduler.h) over the framework and the built-in plugins, with the
// scenario's profile, seed and a target workload made of the scenario's own task classes.
// Time moves on the discrete-event engine (sim/engine/event_queue.h). Within one instant:
// cluster events (file order), then task completions (job ends, time limits, ends of
// termination grace), then submissions (file order), then one scheduling cycle; expectations
// and invariants are checked at the end of the instant. The run ends when nothing is left to
// happen, or at `until`. Every event and decision is written to the timeline, one line each,
// with its time. A run is deterministic for a scenario and a seed. A run that has not ended
// after a million instants is stopped; RunReport::truncated_after says so.
//
// Errors: InvalidArgument "FILE:LINE: config.profile: …" when the framework rejects the
// profile. A failed expectation is not an error: it is reported in the RunReport.
// Not thread-safe; each call runs its own simulation.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"
#include "tessera/common/clock.h"

namespace tessera::sim {

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides config.seed
};

struct ExpectationResult {
  const Expectation* expectation = nullptr;
  bool passed = false;
  TimePoint at{};    // when it was decided
  std::string seen;  // what was seen, when it failed
};

// One job's life in a run, for reports over many jobs (mean wait, slowdown, utilisation).
struct JobOutcome {
  std::string name;
  TimePoint submit{};
  std::optional<TimePoint> first_start;  // nullopt: never started
  std::optional<TimePoint> end;          // nullopt: still pending or running when the run ended
  std::string phase;                     // "Succeeded", "Failed", "Pending", ...
  int32_t preemptions = 0;
  int32_t restarts = 0;
  // The clusters of its tasks' latest placements (every task ever placed), sorted, without
  // duplicates; empty when it never ran. One entry for a gang (gangs stay in one cluster).
  std::vector<std::string> clusters;
};

struct RunReport {
  std::vector<ExpectationResult> results;  // in `expect` order
  std::vector<JobOutcome> jobs;            // in scenario order
  TimePoint end{};                         // the last instant of the run
  uint64_t seed = 0;
  // Non-zero when the run was stopped after this many instants before its end: expectations
  // not decided by then failed as "not judged".
  int64_t truncated_after = 0;
  int Failures() const;
};

absl::StatusOr<RunReport> RunScenario(const Scenario& scenario, const RunOptions& options,
                                      std::ostream& timeline);

// "FILE:LINE: expect[3] {by: 120s, job: b, phase: Running}: failed at 120s: phase is Pending …"
std::string FormatFailure(const Scenario& scenario, const ExpectationResult& result);

}  // namespace tessera::sim

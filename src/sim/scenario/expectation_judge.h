// ExpectationJudge: when each expectation of a scenario run is decided, and with what result,
// as docs/scenarios.md says: an `at` expectation at its instant, a `by` expectation at the
// first instant up to its time where it holds (failed at its time otherwise), an `always`
// expectation at the first instant it does not hold (passed at the end otherwise), an `end`
// expectation when the run ends. What holds is judged by the expectation checker
// (expectation_checker.h) against the run's SimState.
//
// Not thread-safe: one run, one thread; `scenario` and `state` outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_runner.h"
#include "sim/scenario/sim_state.h"
#include "tessera/common/clock.h"

namespace tessera::sim {

class ExpectationJudge {
 public:
  // `failed` hears of each expectation decided failed (its index and result), as it is decided.
  ExpectationJudge(const Scenario& scenario, const SimState& state,
                   std::function<void(size_t, const ExpectationResult&)> failed);

  // After instant `t` of the run (time since its start).
  void Observe(TimePoint t);
  // The run ended at `t`: every expectation not decided yet is decided now.
  void ObserveEnd(TimePoint t);
  // The run was stopped at `t` after `instants` instants: expectations not decided yet cannot be
  // judged and fail, saying so.
  void ObserveCut(TimePoint t, int64_t instants);
  // One result per expectation, in scenario order.
  std::vector<ExpectationResult> TakeResults() { return std::move(results_); }

 private:
  // nullopt when every check of `e` holds now; otherwise what was seen.
  std::optional<std::string> Evaluate(const Expectation& e) const;
  void Decide(size_t i, bool passed, TimePoint t, std::string seen);

  const Scenario& scenario_;
  const SimState& state_;
  std::function<void(size_t, const ExpectationResult&)> failed_;
  std::vector<ExpectationResult> results_;
  std::vector<bool> decided_;
};

}  // namespace tessera::sim

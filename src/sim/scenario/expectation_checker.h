// Expectation checks: does one Check of a scenario hold in a SimState at this instant?
//
// Each function returns nullopt when the check holds and otherwise what was seen, in words
// ("phase is Pending (InsufficientResources)"), for the failure report. Semantics follow
// ../shared/SCENARIOS.md; where it is silent (docs/scenarios.md):
//   - nodes_in holds when nothing was ever placed; node_model, cluster and pool look at the
//     latest placement of every task and fail when the job was never placed;
//   - started_after / started_before compare first starts strictly and fail when either job has
//     not started; started_after_end_of needs the other job to have ended (first start >= end).
// Invariants are judged against the tasks the run holds, recomputed from their placements, so a
// bookkeeping slip in the ClusterState cannot hide an overcommit. Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sim_state.h"

namespace tessera::sim {

// Judges `check` against the expectation's subject (its job or queue) in `state`.
std::optional<std::string> EvaluateCheck(const Check& check, const Expectation& expectation,
                                         const SimState& state);

std::optional<std::string> EvaluateInvariant(Invariant invariant, const SimState& state);

// Seconds since the start of the run: "12.5s" for 12500 ms, "100s".
std::string FormatTime(TimePoint t);

}  // namespace tessera::sim

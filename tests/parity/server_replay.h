// ServerReplay: runs a scenario's workload through the server's JobManager on simulated time,
// for the parity test (scenario_parity_test.cc).
//
// The wiring: a SimulatedClock is the manager's clock and timers; one SimCluster per scenario
// cluster (nodes without the simulated taint, task ends armed on the clock, signalled tasks
// taking their whole termination grace as the runner's do, `outcome: fail` jobs' tasks failing
// with exit code 1); the scenario's queues, profile, policy, seed, requeue back-off and
// target workload (its own task classes, as the runner's); no periodic cycle (the runner has
// none: cycles follow events and the Scheduler's wake-ups); a SQLite store in `data_dir`.
// Time moves instant by instant — the next scenario event or the next armed timer, whichever
// comes first — and at each one the cycles are held while what is due is handled (task ends,
// node events through SimCluster::ChangeNode, cancels, the submissions of that instant as one batch; a job cancelled before its
// submission is cancelled right after it, as the runner cancels it on arrival), then released
// so that one cycle sees it all, and the manager is waited for (JobManager::WaitIdle); again
// while timers fall due at the same instant. The run stops after `until`.
//
// Errors: InvalidArgument for a scenario the wiring cannot drive (drain, taint and untaint
// events: evictions the control plane would have to make) or a job the
// server refuses at submission; the store's and the manager's errors as they are.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"
#include "tests/parity/decision_log.h"

namespace tessera::parity {

absl::StatusOr<DecisionLogs> ReplayThroughServer(const sim::Scenario& scenario,
                                                 const std::string& data_dir, TimePoint until);

}  // namespace tessera::parity

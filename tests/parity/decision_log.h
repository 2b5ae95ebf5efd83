// Decision logs: one job's life as the sequence of scheduling decisions both wirings of the job
// lifecycle take — the scenario runner (sim/scenario/scenario_runner.h) and the server's
// JobManager (server/job_manager.h) — so that a scenario replayed through both can be compared.
//
// A decision is one of "Admitted" (quota held before its gang is placed), "Placed GROUP@NODE[GPUS]
// ..." (sorted: which replica of a task group took which of the chosen places is no decision),
// "Running", "Preempted", "Reclaimed" (an admission taken back by a queue
// below its guarantee), "Pending" (an admission revoked otherwise: gang timeout, capacity gone),
// "Requeued", "Succeeded", "Failed REASON", "Cancelled", each with its time (FormatTime).
// Steps that are bookkeeping of one wiring only (a submission, a binding, a task's start or end,
// a cancel request) are left out. The terminal decision is taken when the job's tasks are gone.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "server/job_service.h"
#include "sim/scenario/scenario_runner.h"

namespace tessera::parity {

struct Decision {
  std::string time;  // FormatTime
  std::string what;
  bool operator==(const Decision&) const = default;
};

using DecisionLog = std::vector<Decision>;
using DecisionLogs = std::map<std::string, DecisionLog>;  // job name → its decisions

// From a scenario run: its timeline (RunScenario's output) and report (terminal phases and
// their times).
DecisionLogs FromTimeline(const std::string& timeline, const sim::RunReport& report);

// From one job's stored events (JobService::Events).
DecisionLog FromEvents(const std::vector<server::JobEvent>& events);

// Empty when both hold the same decisions for every job; else both logs side by side, job by job,
// with the first difference marked.
std::string Compare(const DecisionLogs& scenario, const DecisionLogs& server);

}  // namespace tessera::parity

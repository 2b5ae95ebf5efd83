// SWF runs: one workload log simulated under the classic batch policies, with its metrics.
//
// A mode is a backfill mode and a queue ordering:
//   fcfs          backfill none, strict FIFO queues: jobs start in submission order only; a job
//                 that does not fit blocks every later job of its queue (First Come First Served)
//   none          backfill none, best-effort FIFO: a job that does not fit is skipped and later
//                 ones start if they fit now (greedy list scheduling; it can starve large jobs)
//   easy          EASY backfill (the first blocked job holds a reservation), best-effort FIFO
//   conservative  conservative backfill (reservations for the first backfill_depth blocked jobs)
// "+fifo" after easy/conservative makes their queues strict FIFO too.
// The run is RunScenario (sim/scenario/scenario_runner.h) over BuildSwfWorkload's scenario; its
// timeline goes to a stream that discards it. Wall time is measured on the steady clock: it is
// reported, never used by the simulation.
//
// Errors: InvalidArgument naming the flag ("--backfill: unknown mode 'x' ...") from
// ParseSwfModes; those of BuildSwfWorkload and RunScenario from RunSwfMode.
// Thread-safety: each call runs its own simulation; calls may run in parallel.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sched/queue/queue_spec.h"
#include "sched/scheduling_policy.h"
#include "sim/swf/swf_metrics.h"
#include "sim/swf/swf_trace.h"
#include "sim/swf/swf_workload.h"

namespace tessera::sim::swf {

struct SwfMode {
  std::string name;  // "fcfs", "none", "easy", "conservative", "easy+fifo", ...
  BackfillMode backfill = BackfillMode::kNone;
  QueueOrdering ordering = QueueOrdering::kBestEffortFifo;
};

// `backfill` is "all" (fcfs, easy, conservative: the three of the results report) or a
// comma-separated list of none, easy, conservative; `fifo` makes the listed modes strict FIFO
// (none becomes fcfs). Errors name --backfill or --fifo.
absl::StatusOr<std::vector<SwfMode>> ParseSwfModes(std::string_view backfill, bool fifo);

struct SwfRunResult {
  SwfMode mode;
  SwfConversionStats stats;
  SwfMetrics metrics;
  double wall_s = 0;            // the simulation's own run time
  int64_t truncated_after = 0;  // RunReport::truncated_after
  // No job started before its submission (checked over the run's jobs).
  bool starts_after_submit = true;
};

// Converts `trace` with `options` (its ordering and policy.backfill replaced by the mode's)
// and runs it.
absl::StatusOr<SwfRunResult> RunSwfMode(const SwfTrace& trace, std::string_view source,
                                        SwfWorkloadOptions options, const SwfMode& mode);

}  // namespace tessera::sim::swf

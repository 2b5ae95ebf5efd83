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
// timeline goes to a stream that discards it. Per cluster (several with options.clusters), the
// run reports the jobs that ran there, how many came from another home cluster, the peak of
// processors in use (never above the cluster's: checked by the slow test) and the metrics. Wall
// time is measured on the steady clock: it is reported, never used by the simulation.
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

// One cluster of a run (the only one, "default", without --clusters).
struct SwfClusterResult {
  SwfCluster cluster;
  int64_t jobs_run = 0;         // jobs whose tasks ran here
  int64_t jobs_away = 0;        // of them, jobs whose home is another cluster
  int64_t peak_processors = 0;  // the most processors its running jobs held at one instant
  // Over the jobs that ran here; utilisation is their work over this cluster's processors x the
  // whole run's makespan (so clusters compare), the rest as SwfMetrics.
  SwfMetrics metrics;
};

struct SwfRunResult {
  SwfMode mode;
  SwfConversionStats stats;
  SwfMetrics metrics;
  double wall_s = 0;            // the simulation's own run time
  int64_t truncated_after = 0;  // RunReport::truncated_after
  // No job started before its submission (checked over the run's jobs).
  bool starts_after_submit = true;
  std::vector<SwfClusterResult> clusters;  // per cluster, in stats.clusters order
  int64_t split_jobs = 0;  // jobs whose tasks ran in more than one cluster (gangs must not)
};

// Converts `trace` with `options` (its ordering and policy.backfill replaced by the mode's)
// and runs it.
absl::StatusOr<SwfRunResult> RunSwfMode(const SwfTrace& trace, std::string_view source,
                                        SwfWorkloadOptions options, const SwfMode& mode);

}  // namespace tessera::sim::swf

// `tessera sim --swf FILE`: a Parallel Workloads Archive log under the batch policies. The
// --swf flags (--backfill, --fifo, --limit, --skip, --queues-from, --fair-share,
// --backfill-depth, --processors, --cpus-per-node, --clusters, --site-placement, --cost-tiers),
// their conversion into SwfWorkloadOptions (sim/swf/swf_workload.h), and the run: one line per
// mode with the batch metrics (mean wait, mean bounded slowdown, utilisation, makespan), per
// cluster with --clusters, and --summary-json.
// Errors: bad flag values or an unreadable log print "tessera sim: MESSAGE" and return 2.
// Thread-safety: none needed; the command runs on one thread.
#pragma once

#include "CLI/CLI.hpp"
#include "cli/sim_flags.h"

namespace tessera::cli::sim_cli {

// Registers the --swf flags on `app`, bound to `f`.
void AddSwfFlags(CLI::App& app, SimFlags& f);

// Runs f.swf in each mode; the exit status: 0, 1 for a failed run, 2 for bad input.
int RunSwfMode(const SimFlags& f);

}  // namespace tessera::cli::sim_cli

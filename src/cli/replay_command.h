// `tessera replay`: submits a real trace's jobs to the control plane at the trace's arrival
// times (divided by --speedup), for load tests of the scheduler on simulated nodes.
//
//   tessera replay (--pods FILE [--nodes-cluster NAME] | --swf FILE) [--speedup X] [--rate N]
//                  [--limit N] [--skip N] [--queue Q] [--batch N] [--dry-run]
// --pods: an Alibaba GPU pod list (11-column form); --swf: a Parallel Workloads Archive log,
// plain or .gz. --nodes-cluster (also --cluster) restricts the jobs to the simulated cluster of
// that name (spec.clusterSelector). How rows become jobs: replay/trace_jobs.h.
// The submissions are paced on the wall clock: job i goes out at start + arrival_i; when the
// server is slower than the trace, jobs go out back to back. --rate N (jobs per second, > 0)
// replaces the trace's arrivals with steady ones: job k goes out at start + k / N (to the ms);
// --speedup then scales only run times and time limits. One process sends one request at a
// time and waits for its answer (a durable commit), so it keeps N only while one answer takes
// less than 1 / N s; for more, run several replays at N / clients each. A job the server
// rate-limits (429) is retried after its Retry-After. Progress goes to stderr every 100 jobs or
// 10 s; the summary names what was submitted (and how many were already there from an earlier
// run: the request ids make a re-run idempotent), refused with the reasons counted, skipped, and
// the rate.
// --batch N (1..1000, default 1) sends N consecutive jobs per request (POST /api/v1/jobs:batch,
// once the last of them is due) and counts each job's own answer; a batch the server refuses
// whole counts all its jobs refused.
// --dry-run prints the job documents (YAML, "---"-separated) without submitting or waiting.
// Exit statuses: 0 every job submitted, 1 some were refused, 2 bad usage or an unreadable trace,
// 3 the server could not be reached (the replay stops there).
#pragma once

#include "cli/command_env.h"

namespace tessera::cli {

// `argv[0]` is "replay".
int RunReplayCommand(int argc, char** argv, const CommandEnv& env);

}  // namespace tessera::cli

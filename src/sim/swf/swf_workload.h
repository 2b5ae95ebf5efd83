// SWF workload: a Parallel Workloads Archive log (swf_trace.h) turned into a Scenario that the
// scenario runner (sim/scenario/scenario_runner.h) runs through the real scheduler core.
//
// The cluster: one node per processor group of the log's header. With MaxNodes and MaxProcs
// both given and MaxProcs a multiple of MaxNodes, MaxNodes nodes of MaxProcs/MaxNodes cpus;
// otherwise MaxProcs (else MaxNodes) nodes of one cpu; with neither, as many one-cpu nodes as
// the largest job asks for (stats.processors_from_jobs says so). One cpu is 1000 millicores.
// options.processors replaces the processor count (a smaller pool makes a lightly loaded log
// contended: LCG offers about 1,300 busy processors on average to its 24,515); with it, or with
// options.cpus_per_node, the processors are grouped into nodes of cpus_per_node cpus (default:
// the header's cpus per node, else 1), the last node taking the remainder.
// Each node has MaxMemory KB x its cpus of memory when the header gives it, else
// options.node_memory_per_cpu per cpu.
//
// A job: the job its row maps to (SwfJobSpec, swf_job.h, the mapping `tessera replay --swf` uses
// too): one task group "proc" of P one-cpu replicas (P = requested processors, else allocated),
// each with the requested memory per processor when the log gives it, all of them the gang (a
// rigid job), run_time seconds long, its time limit (what backfill plans with) the requested
// time raised to the run time when below it, else the run time (stats.time_limit_raised counts
// the raised ones). It is submitted at (submit_time - origin) /
// options.arrival_speedup, rounded to the millisecond, where origin is the earliest submit_time
// of the kept jobs, so that the run starts at t=0; a speedup above 1 compresses the arrivals
// (run times unchanged) and so raises the offered load, as load-scaling studies of these logs do.
// Priority 0, not preemptible, no restarts (restart_policy fail), no expectations.
// Skipped, counted per reason in stats.skipped: the rows SwfJobSpec does not map (unknown
// submit time, run_time <= 0 or unknown, processors unknown, more than kMaxTasksPerJob), and jobs
// with more processors than the (largest) cluster or more memory per processor than a node has.
//
// Queues (options.queues_from):
//   kSingle     one leaf queue "default" (NASA iPSC: the log has no queue data)
//   kQueue      one leaf per SWF queue number (field 15), named "queue-<n>"
//   kPartition  one leaf per SWF partition (field 16), "partition-<n>" (LCG: the 170 sites)
//   kGroup      one leaf per SWF group (field 13), "group-<n>"
// The leaves have weight 1 under one root "swf" and no quota (every resource unlimited), so only
// the order between queues (fair share) differs; an unknown value (-1) goes to "<kind>-unknown".
// options.ordering applies to every leaf: kStrictFifo is FCFS (a job that cannot start blocks
// the jobs behind it in its queue), kBestEffortFifo lets later jobs start around it.
// The policy (backfill mode, fair share) is options.policy, with preemption forced off.
//
// Several clusters (options.clusters = N > 1): the processors are split across N clusters
// "cluster-0" … "cluster-<N-1>" (the first P mod N clusters one processor more), each grouped
// into its own nodes of cpus_per_node cpus (named "cluster-<c>-node-<i>"); every node carries
// `tessera.io/cluster: cluster-<c>` and, with options.cost_tiers, `tessera.io/cost-tier: <c>`
// (cluster-0 cheapest). A job's gang then runs in one cluster (the framework's rule), so a job
// larger than the largest cluster is skipped. Each job has a HOME cluster: its site (the SWF
// partition, LCG's 170 sites; "unknown" counts as one more site) is given to a cluster by
// longest-processing-time-first balancing — sites in decreasing order of their work (run time x
// processors over the kept jobs), each to the cluster with the least work per processor so far
// (lowest index on ties) — so every cluster is home to about the same share of the work.
// options.site_placement says what the home means:
//   kAny        nothing: the scheduler may put the job in any cluster (a grid meta-scheduler)
//   kPreferred  clusterAffinity.preferred {weight 100, tessera.io/cluster In [home]}: home first,
//               elsewhere when home is full
//   kPinned     clusterSelector {tessera.io/cluster: home}: home only (the grid as it ran: each
//               site its own batch system); a job larger than its home is skipped
// With N = 1 the scenario is exactly the single-cluster one described above.
//
// Errors: InvalidArgument "SOURCE: field: problem" for bad options (skip < 0, limit < 1,
// processors < 1, cpus_per_node < 1, arrival_speedup not a finite number > 0) or when no job is
// left to run.
// Thread-safety: a pure function; results are value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sched/queue/queue_spec.h"
#include "sched/scheduling_policy.h"
#include "sim/scenario/scenario.h"
#include "sim/swf/swf_trace.h"

namespace tessera::sim::swf {

enum class QueuesFrom { kSingle, kQueue, kPartition, kGroup };

// What a job's home cluster means when the processors are split across clusters.
enum class SitePlacement { kAny, kPreferred, kPinned };

// "any", "preferred", "pinned".
std::string_view SitePlacementName(SitePlacement placement);
// The inverse of SitePlacementName; nullopt for any other text.
std::optional<SitePlacement> ParseSitePlacement(std::string_view text);

inline constexpr int64_t kMaxSwfClusters = 1000;

// "single", "queue", "partition", "group".
std::string_view QueuesFromName(QueuesFrom from);
// The inverse of QueuesFromName; nullopt for any other text.
std::optional<QueuesFrom> ParseQueuesFrom(std::string_view text);

struct SwfWorkloadOptions {
  QueuesFrom queues_from = QueuesFrom::kSingle;
  QueueOrdering ordering = QueueOrdering::kBestEffortFifo;
  SchedulingPolicy policy;       // backfill, backfill_depth, fair_share; preemption is forced off
  int64_t skip = 0;              // jobs of the file (in file order) left out before the first
  std::optional<int64_t> limit;  // at most this many jobs read after the skipped ones
  std::optional<int64_t> processors;     // replaces the header's processor count
  std::optional<int64_t> cpus_per_node;  // groups the processors into nodes of this many cpus
  double arrival_speedup = 1;            // submit times are divided by this
  int64_t node_memory_per_cpu = int64_t{1} << 30;  // bytes, when the header has no MaxMemory
  int64_t clusters = 1;                            // 1..kMaxSwfClusters; see above
  SitePlacement site_placement = SitePlacement::kAny;
  bool cost_tiers = false;  // cluster c carries tessera.io/cost-tier: c
};

// One simulated cluster of a multi-cluster run.
struct SwfCluster {
  std::string name;
  int64_t processors = 0;
  int64_t nodes = 0;
  int64_t home_sites = 0;  // sites whose home it is
  int64_t home_jobs = 0;   // kept jobs whose home it is
};

struct SwfConversionStats {
  int64_t jobs_read = 0;                   // jobs considered (after --skip, up to --limit)
  int64_t jobs_kept = 0;                   // jobs in the scenario
  std::map<std::string, int64_t> skipped;  // reason -> jobs
  int64_t time_limit_raised = 0;           // requested_time below run_time: limit = run_time
  int64_t nodes = 0;
  int64_t cpus_per_node = 0;  // the last node may have fewer (cpus_per_node option)
  int64_t total_processors = 0;
  bool processors_from_jobs = false;  // the header gave neither MaxProcs nor MaxNodes
  int64_t origin_s = 0;               // the SWF submit time that became t=0
  std::vector<SwfCluster> clusters;   // one entry ("default") with a single cluster
};

struct SwfWorkload {
  Scenario scenario;
  // Per scenario job (same order): the processors it holds while it runs.
  std::vector<int64_t> processors;
  // Per scenario job (same order): its home cluster, an index into stats.clusters.
  std::vector<int32_t> home;
  SwfConversionStats stats;
};

// Converts `trace`; `source` (usually the path) names the scenario and prefixes errors.
absl::StatusOr<SwfWorkload> BuildSwfWorkload(const SwfTrace& trace, std::string_view source,
                                             const SwfWorkloadOptions& options);

}  // namespace tessera::sim::swf

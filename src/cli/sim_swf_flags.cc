#include "cli/sim_swf_flags.h"

#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/alibaba/results_json.h"
#include "sim/swf/swf_run.h"
#include "sim/swf/swf_trace.h"
#include "sim/swf/swf_workload.h"

namespace tessera::cli::sim_cli {
namespace {

namespace alibaba = ::tessera::sim::alibaba;

absl::StatusOr<sim::swf::SwfWorkloadOptions> SwfOptions(const SimFlags& f) {
  sim::swf::SwfWorkloadOptions options;
  const std::optional<sim::swf::QueuesFrom> from = sim::swf::ParseQueuesFrom(f.queues_from);
  if (!from) {
    return absl::InvalidArgumentError(fmt::format(
        "--queues-from: must be single, queue, partition or group, not '{}'", f.queues_from));
  }
  options.queues_from = *from;
  if (f.fair_share != "drf" && f.fair_share != "none") {
    return absl::InvalidArgumentError(
        fmt::format("--fair-share: must be drf or none, not '{}'", f.fair_share));
  }
  options.policy.fair_share = f.fair_share == "drf" ? FairShareMode::kDrf : FairShareMode::kNone;
  options.policy.backfill_depth = f.backfill_depth;
  options.skip = f.skip;
  options.limit = f.limit;
  options.cpus_per_node = f.cpus_per_node;
  options.processors = f.processors;
  options.arrival_speedup = f.arrival_speedup;
  const std::optional<sim::swf::SitePlacement> placement =
      sim::swf::ParseSitePlacement(f.site_placement);
  if (!placement) {
    return absl::InvalidArgumentError(fmt::format(
        "--site-placement: must be any, preferred or pinned, not '{}'", f.site_placement));
  }
  if ((placement != sim::swf::SitePlacement::kAny || f.cost_tiers) && f.clusters < 2) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: needs --clusters 2 or more", f.cost_tiers ? "--cost-tiers" : "--site-placement"));
  }
  options.clusters = f.clusters;
  options.site_placement = *placement;
  options.cost_tiers = f.cost_tiers;
  return options;
}

std::string SkippedText(const std::map<std::string, int64_t>& skipped) {
  std::string out;
  for (const auto& [reason, count] : skipped) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", count, reason);
  }
  return out;
}

nlohmann::json SwfClustersJson(const sim::swf::SwfRunResult& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const sim::swf::SwfClusterResult& c : r.clusters) {
    const sim::swf::SwfMetrics& m = c.metrics;
    out.push_back({{"name", c.cluster.name},
                   {"processors", c.cluster.processors},
                   {"nodes", c.cluster.nodes},
                   {"home_sites", c.cluster.home_sites},
                   {"home_jobs", c.cluster.home_jobs},
                   {"jobs_run", c.jobs_run},
                   {"jobs_away", c.jobs_away},
                   {"peak_processors", c.peak_processors},
                   {"completed", m.completed},
                   {"mean_wait_s", alibaba::Number(m.mean_wait_s, 3)},
                   {"max_wait_s", alibaba::Number(m.max_wait_s, 3)},
                   {"mean_bounded_slowdown", alibaba::Number(m.mean_bounded_slowdown, 4)},
                   {"utilisation", alibaba::Number(m.utilisation, 5)}});
  }
  return out;
}

// With several clusters: one line per cluster under the mode's line.
void PrintSwfClusters(const sim::swf::SwfRunResult& r) {
  if (r.clusters.size() < 2) return;
  for (const sim::swf::SwfClusterResult& c : r.clusters) {
    const sim::swf::SwfMetrics& m = c.metrics;
    std::cout << fmt::format(
        "  {:<16} {:>7} {:>9} {:>14.1f} {:>10.3f} {:>10.2f}%  {} procs, peak {}, home to {} "
        "sites / {} jobs, {} jobs from other homes\n",
        c.cluster.name, c.jobs_run, m.completed, m.mean_wait_s, m.mean_bounded_slowdown,
        100 * m.utilisation, c.cluster.processors, c.peak_processors, c.cluster.home_sites,
        c.cluster.home_jobs, c.jobs_away);
  }
  if (r.split_jobs > 0)
    std::cout << fmt::format("  {} jobs ran split across clusters\n", r.split_jobs);
}

nlohmann::json SwfRunJson(const sim::swf::SwfRunResult& r) {
  const sim::swf::SwfMetrics& m = r.metrics;
  return {{"mode", r.mode.name},
          {"jobs", m.jobs},
          {"completed", m.completed},
          {"never_started", m.never_started},
          {"unfinished", m.unfinished},
          {"mean_wait_s", alibaba::Number(m.mean_wait_s, 3)},
          {"max_wait_s", alibaba::Number(m.max_wait_s, 3)},
          {"mean_bounded_slowdown", alibaba::Number(m.mean_bounded_slowdown, 4)},
          {"slowdown_bound_s", 10},
          {"utilisation", alibaba::Number(m.utilisation, 5)},
          {"makespan_s", alibaba::Number(m.makespan_s, 3)},
          {"truncated_after", r.truncated_after},
          {"wall_seconds", alibaba::Number(r.wall_s, 3)},
          {"split_jobs", r.split_jobs},
          {"clusters", SwfClustersJson(r)}};
}

}  // namespace

void AddSwfFlags(CLI::App& app, SimFlags& f) {
  app.add_option("--swf", f.swf,
                 "Parallel Workloads Archive log (SWF, plain or .gz) to run under batch policies; "
                 "prints mean wait, mean bounded slowdown (10 s), utilisation and makespan per "
                 "mode");
  app.add_option("--backfill", f.backfill,
                 "SWF: modes to run: all (fcfs, easy, conservative; default) or a comma list of "
                 "none, easy, conservative");
  app.add_flag("--fifo", f.fifo,
               "SWF: strict FIFO queues for the listed modes (none becomes fcfs: a job that "
               "does not fit blocks every later job)");
  app.add_option("--limit", f.limit, "SWF: run at most this many jobs of the log")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  app.add_option("--skip", f.skip, "SWF: leave out the log's first N jobs (default 0)")
      ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()));
  app.add_option("--queues-from", f.queues_from,
                 "SWF: one queue per value of this field: single (one queue; default), queue, "
                 "partition (LCG: the site) or group");
  app.add_option("--fair-share", f.fair_share,
                 "SWF: fair share between the queues: drf (default) or none");
  app.add_option("--backfill-depth", f.backfill_depth,
                 "SWF: conservative backfill reserves for this many blocked jobs (default 16)")
      ->check(CLI::Range(1, 1'000'000));
  app.add_option("--processors", f.processors,
                 "SWF: simulate this many processors instead of the header's MaxProcs (a "
                 "smaller pool raises the load; larger jobs are skipped)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  app.add_option("--cpus-per-node", f.cpus_per_node,
                 "SWF: group the log's processors into nodes of this many cpus (default: the "
                 "header's MaxProcs/MaxNodes, else one cpu per node)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  app.add_option("--clusters", f.clusters,
                 "SWF: split the processors across this many clusters (a gang runs in one); each "
                 "site (the SWF partition) gets a home cluster")
      ->check(CLI::Range(int64_t{1}, sim::swf::kMaxSwfClusters));
  app.add_option("--site-placement", f.site_placement,
                 "SWF with --clusters: what a job's home cluster means: any (default: the "
                 "scheduler chooses), preferred (cluster affinity) or pinned (cluster selector)");
  app.add_flag("--cost-tiers", f.cost_tiers,
               "SWF with --clusters: cluster c carries tessera.io/cost-tier: c (cluster-0 "
               "cheapest)");
}

// --swf FILE: one line per mode (--backfill, --fifo) with the batch metrics of the run.
int RunSwfMode(const SimFlags& f) {
  if (absl::Status s = CheckOutputPaths(f); !s.ok()) return BadInput(s);
  absl::StatusOr<std::vector<sim::swf::SwfMode>> modes =
      sim::swf::ParseSwfModes(f.backfill, f.fifo);
  if (!modes.ok()) return BadInput(modes.status());
  absl::StatusOr<sim::swf::SwfWorkloadOptions> options = SwfOptions(f);
  if (!options.ok()) return BadInput(options.status());
  absl::StatusOr<sim::swf::SwfTrace> trace = sim::swf::LoadSwfTrace(f.swf);
  if (!trace.ok()) {
    return BadInput(fmt::format("--swf: {}", std::string(trace.status().message())));
  }
  std::vector<sim::swf::SwfRunResult> runs;
  for (const sim::swf::SwfMode& mode : *modes) {
    absl::StatusOr<sim::swf::SwfRunResult> r = sim::swf::RunSwfMode(*trace, f.swf, *options, mode);
    if (!r.ok()) {
      std::cerr << "tessera sim: " << r.status().message() << "\n";
      return r.status().code() == absl::StatusCode::kInvalidArgument ? kExitBadInput : 1;
    }
    if (runs.empty()) {
      const sim::swf::SwfConversionStats& st = r->stats;
      const std::string skipped = SkippedText(st.skipped);
      std::cout << fmt::format(
          "{}: {} jobs of {} read{}; {} processors on {} nodes of {} cpu{}{}; queues from {}; "
          "arrivals x{}; {} time limit(s) raised to the run time\n",
          f.swf, st.jobs_kept, st.jobs_read,
          skipped.empty() ? "" : fmt::format(" (skipped: {})", skipped), st.total_processors,
          st.nodes, st.cpus_per_node,
          st.processors_from_jobs ? " (no MaxProcs/MaxNodes: the largest job)" : "",
          st.clusters.size() > 1 ? fmt::format(" in {} clusters (sites {}{})", st.clusters.size(),
                                               f.site_placement, f.cost_tiers ? ", cost tiers" : "")
                                 : "",
          f.queues_from, f.arrival_speedup, st.time_limit_raised);
      std::cout << fmt::format("{:<18} {:>7} {:>9} {:>14} {:>10} {:>11} {:>12} {:>8}\n", "mode",
                               "jobs", "completed", "mean wait (s)", "mean bsld", "utilisation",
                               "makespan (s)", "wall (s)");
    }
    const sim::swf::SwfMetrics& m = r->metrics;
    std::cout << fmt::format(
                     "{:<18} {:>7} {:>9} {:>14.1f} {:>10.3f} {:>10.2f}% {:>12.0f} {:>8.2f}{}\n",
                     r->mode.name, m.jobs, m.completed, m.mean_wait_s, m.mean_bounded_slowdown,
                     100 * m.utilisation, m.makespan_s, r->wall_s,
                     r->truncated_after > 0 ? "  (run stopped early)" : "")
              << std::flush;
    PrintSwfClusters(*r);
    std::cout << std::flush;
    runs.push_back(*std::move(r));
  }
  if (!f.summary_json.empty()) {
    const sim::swf::SwfConversionStats& st = runs.front().stats;
    nlohmann::json modes_json = nlohmann::json::array();
    for (const sim::swf::SwfRunResult& r : runs) modes_json.push_back(SwfRunJson(r));
    const nlohmann::json j = {{"trace", f.swf},
                              {"jobs_read", st.jobs_read},
                              {"jobs_kept", st.jobs_kept},
                              {"skipped", st.skipped},
                              {"time_limit_raised", st.time_limit_raised},
                              {"processors", st.total_processors},
                              {"nodes", st.nodes},
                              {"cpus_per_node", st.cpus_per_node},
                              {"arrival_speedup", f.arrival_speedup},
                              {"queues_from", f.queues_from},
                              {"fair_share", f.fair_share},
                              {"clusters", f.clusters},
                              {"site_placement", f.site_placement},
                              {"cost_tiers", f.cost_tiers},
                              {"skip", f.skip},
                              {"limit", f.limit ? nlohmann::json(*f.limit) : nlohmann::json()},
                              {"modes", modes_json}};
    if (absl::Status s = WriteFile(f.summary_json, "--summary-json", j.dump(2) + "\n"); !s.ok()) {
      return BadInput(s);
    }
  }
  return kExitOk;
}

}  // namespace tessera::cli::sim_cli

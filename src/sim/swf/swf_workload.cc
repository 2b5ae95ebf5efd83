#include "sim/swf/swf_workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "core/cluster_name.h"
#include "fmt/format.h"
#include "sched/profile.h"
#include "sim/swf/swf_job.h"

namespace tessera::sim::swf {
namespace {

constexpr std::string_view kRootQueue = "swf";
constexpr std::string_view kCostTierLabel = "tessera.io/cost-tier";
constexpr int32_t kHomeWeight = 100;
constexpr int64_t kBytesPerKb = 1024;

// A job of the scenario: its row and the job the row maps to (swf_job.h).
struct KeptJob {
  const SwfJob* row;
  JobSpec spec;
  bool time_limit_raised;
};

// The processors of a kept job (its rigid gang).
int64_t Processors(const KeptJob& job) { return job.spec.tasks.front().replicas; }

struct ClusterShape {
  int64_t processors = 0;
  int64_t cpus_per_node = 1;
  bool from_jobs = false;
  int64_t nodes() const { return (processors + cpus_per_node - 1) / cpus_per_node; }
};

ClusterShape ShapeOf(const SwfHeader& h, const std::vector<const SwfJob*>& jobs,
                     const SwfWorkloadOptions& options) {
  const int64_t nodes = h.max_nodes.value_or(0);
  const int64_t procs = h.max_procs.value_or(0);
  ClusterShape shape;
  if (nodes > 0 && procs > 0 && procs % nodes == 0) {
    shape = {procs, procs / nodes, false};
  } else if (procs > 0 || nodes > 0) {
    shape = {procs > 0 ? procs : nodes, 1, false};
  } else {
    int64_t largest = 1;
    for (const SwfJob* job : jobs) largest = std::max(largest, SwfJobProcessors(*job).value_or(1));
    shape = {largest, 1, true};
  }
  if (options.processors) {
    shape.processors = *options.processors;
    shape.from_jobs = false;
  }
  if (options.cpus_per_node) shape.cpus_per_node = *options.cpus_per_node;
  return shape;
}

// The leaf queue of a job; "default" for kSingle.
std::string QueueOf(const SwfJob& job, QueuesFrom from) {
  int64_t value = kSwfUnknown;
  switch (from) {
    case QueuesFrom::kSingle:
      return "default";
    case QueuesFrom::kQueue:
      value = job.queue;
      break;
    case QueuesFrom::kPartition:
      value = job.partition;
      break;
    case QueuesFrom::kGroup:
      value = job.group;
      break;
  }
  if (value == kSwfUnknown) return fmt::format("{}-unknown", QueuesFromName(from));
  return fmt::format("{}-{}", QueuesFromName(from), value);
}

// Memory per cpu of every node: the header's MaxMemory (KB per processor) when given.
int64_t MemoryPerCpu(const SwfHeader& h, const SwfWorkloadOptions& options) {
  return h.max_memory && *h.max_memory > 0 ? *h.max_memory * kBytesPerKb
                                           : options.node_memory_per_cpu;
}

// Why a job that maps to `spec` cannot run on these clusters; nullopt when it can. `largest` is
// the processors of the largest cluster (a gang runs in one); `node_memory` the memory of its
// largest node.
std::optional<std::string> ClusterSkipReason(const JobSpec& spec, int64_t largest,
                                             int64_t node_memory, bool several) {
  if (spec.tasks.front().replicas > largest) {
    return several ? "more processors than the largest cluster"
                   : "more processors than the cluster";
  }
  if (spec.tasks.front().request.memory > node_memory) {
    return "more memory per processor than a node has";
  }
  return std::nullopt;
}

// The nodes of one cluster of `processors` processors: node-<i>, or CLUSTER-node-<i> with several
// clusters (then labelled tessera.io/cluster: CLUSTER).
void AddNodes(const SwfHeader& h, const ClusterShape& shape, int64_t processors, bool several,
              const ScenarioCluster& cluster, const SwfWorkloadOptions& options,
              std::vector<ScenarioNode>& nodes) {
  const int64_t memory_per_cpu = MemoryPerCpu(h, options);
  const int64_t count = (processors + shape.cpus_per_node - 1) / shape.cpus_per_node;
  const int width = static_cast<int>(fmt::format("{}", count - 1).size());
  for (int64_t i = 0; i < count; ++i) {
    const int64_t cpus = std::min(shape.cpus_per_node, processors - i * shape.cpus_per_node);
    ScenarioNode n;
    n.node.name = several ? fmt::format("{}-node-{:0{}}", cluster.name, i, width)
                          : fmt::format("node-{:0{}}", i, width);
    n.node.cluster = cluster.name;
    n.node.labels = cluster.labels;
    if (several) n.node.labels[std::string(kClusterLabel)] = cluster.name;
    n.node.capacity.cpu = cpus * kSwfMilliPerCpu;
    n.node.capacity.memory = cpus * memory_per_cpu;
    n.node.allocatable = n.node.capacity;
    nodes.push_back(std::move(n));
  }
}

// Splits the processors across `count` clusters, the first (processors mod count) one more.
std::vector<SwfCluster> SplitClusters(int64_t processors, int64_t count, int64_t cpus_per_node) {
  std::vector<SwfCluster> clusters;
  for (int64_t c = 0; c < count; ++c) {
    SwfCluster cluster;
    cluster.name = count == 1 ? "default" : fmt::format("cluster-{}", c);
    cluster.processors = processors / count + (c < processors % count ? 1 : 0);
    cluster.nodes = (cluster.processors + cpus_per_node - 1) / cpus_per_node;
    clusters.push_back(std::move(cluster));
  }
  return clusters;
}

// The home cluster of every site (SWF partition): longest processing time first, by work per
// processor of each cluster.
std::map<int64_t, int32_t> HomesOfSites(const std::vector<KeptJob>& jobs,
                                        std::vector<SwfCluster>& clusters) {
  std::map<int64_t, double> work;  // site -> run time x processors
  for (const KeptJob& job : jobs) {
    work[job.row->partition] +=
        static_cast<double>(job.row->run_time) * static_cast<double>(Processors(job));
  }
  std::vector<std::pair<double, int64_t>> sites;
  for (const auto& [site, w] : work) sites.emplace_back(w, site);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<double> load(clusters.size(), 0);
  std::map<int64_t, int32_t> home;
  for (const auto& [w, site] : sites) {
    size_t best = 0;
    for (size_t c = 1; c < clusters.size(); ++c) {
      if (load[c] / static_cast<double>(clusters[c].processors) <
          load[best] / static_cast<double>(clusters[best].processors)) {
        best = c;
      }
    }
    load[best] += w;
    home[site] = static_cast<int32_t>(best);
    ++clusters[best].home_sites;
  }
  return home;
}

// The job's constraints for its home cluster.
void PlaceAtHome(SitePlacement placement, const std::string& home, JobSpec& spec) {
  switch (placement) {
    case SitePlacement::kAny:
      return;
    case SitePlacement::kPreferred:
      spec.cluster_affinity.preferred.push_back(PreferredLabelTerm{
          kHomeWeight, {LabelRequirement{std::string(kClusterLabel), LabelOperator::kIn, {home}}}});
      return;
    case SitePlacement::kPinned:
      spec.cluster_selector[std::string(kClusterLabel)] = home;
      return;
  }
}

std::vector<ScenarioQueue> Queues(const std::set<std::string>& leaves, QueuesFrom from,
                                  QueueOrdering ordering) {
  std::vector<ScenarioQueue> queues;
  std::string parent;
  if (from != QueuesFrom::kSingle) {
    queues.push_back(
        ScenarioQueue{.spec = QueueSpec{.name = std::string(kRootQueue)}, .leaf = false});
    parent = kRootQueue;
  }
  for (const std::string& name : leaves) {
    queues.push_back(ScenarioQueue{
        .spec = QueueSpec{.name = name, .parent = parent, .weight = 1, .ordering = ordering},
        .leaf = true});
  }
  return queues;
}

// The scenario job of a kept row: its mapped spec, named and queued, submitted at its scaled
// arrival; not preemptible, no restarts.
ScenarioJob JobOf(KeptJob job, int64_t origin_s, double speedup, std::string name,
                  std::string queue) {
  ScenarioJob sj;
  sj.spec = std::move(job.spec);
  sj.spec.name = std::move(name);
  sj.spec.queue = std::move(queue);
  sj.spec.preemptible = false;
  sj.spec.restart_policy = RestartPolicy{.on_failure = RestartAction::kFail, .max_restarts = 0};
  sj.at = std::chrono::milliseconds(
      std::llround(static_cast<double>(job.row->submit_time - origin_s) * 1000.0 / speedup));
  sj.duration = *sj.spec.duration;
  sj.line = static_cast<int>(std::min<int64_t>(job.row->line, std::numeric_limits<int>::max()));
  return sj;
}

}  // namespace

std::string_view QueuesFromName(QueuesFrom from) {
  switch (from) {
    case QueuesFrom::kSingle:
      return "single";
    case QueuesFrom::kQueue:
      return "queue";
    case QueuesFrom::kPartition:
      return "partition";
    case QueuesFrom::kGroup:
      return "group";
  }
  return "single";
}

std::string_view SitePlacementName(SitePlacement placement) {
  switch (placement) {
    case SitePlacement::kAny:
      return "any";
    case SitePlacement::kPreferred:
      return "preferred";
    case SitePlacement::kPinned:
      return "pinned";
  }
  return "any";
}

std::optional<SitePlacement> ParseSitePlacement(std::string_view text) {
  for (SitePlacement p : {SitePlacement::kAny, SitePlacement::kPreferred, SitePlacement::kPinned}) {
    if (SitePlacementName(p) == text) return p;
  }
  return std::nullopt;
}

std::optional<QueuesFrom> ParseQueuesFrom(std::string_view text) {
  for (QueuesFrom from :
       {QueuesFrom::kSingle, QueuesFrom::kQueue, QueuesFrom::kPartition, QueuesFrom::kGroup}) {
    if (QueuesFromName(from) == text) return from;
  }
  return std::nullopt;
}

absl::StatusOr<SwfWorkload> BuildSwfWorkload(const SwfTrace& trace, std::string_view source,
                                             const SwfWorkloadOptions& options) {
  if (options.skip < 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: skip: must be >= 0, got {}", source, options.skip));
  }
  if (options.limit && *options.limit < 1) {
    return absl::InvalidArgumentError(
        fmt::format("{}: limit: must be >= 1, got {}", source, *options.limit));
  }
  if (options.processors && *options.processors < 1) {
    return absl::InvalidArgumentError(
        fmt::format("{}: processors: must be >= 1, got {}", source, *options.processors));
  }
  if (options.cpus_per_node && *options.cpus_per_node < 1) {
    return absl::InvalidArgumentError(
        fmt::format("{}: cpus_per_node: must be >= 1, got {}", source, *options.cpus_per_node));
  }
  if (!std::isfinite(options.arrival_speedup) || options.arrival_speedup <= 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}: arrival_speedup: must be a finite number > 0, got {}", source,
                    options.arrival_speedup));
  }
  if (options.clusters < 1 || options.clusters > kMaxSwfClusters) {
    return absl::InvalidArgumentError(fmt::format("{}: clusters: must be 1..{}, got {}", source,
                                                  kMaxSwfClusters, options.clusters));
  }
  std::vector<const SwfJob*> window;
  const int64_t total = static_cast<int64_t>(trace.jobs.size());
  const int64_t first = std::min(options.skip, total);
  const int64_t last = options.limit ? std::min(total, first + *options.limit) : total;
  for (int64_t i = first; i < last; ++i) window.push_back(&trace.jobs[static_cast<size_t>(i)]);

  SwfWorkload out;
  SwfConversionStats& stats = out.stats;
  const ClusterShape shape = ShapeOf(trace.header, window, options);
  stats.jobs_read = static_cast<int64_t>(window.size());
  stats.nodes = shape.nodes();
  stats.cpus_per_node = shape.cpus_per_node;
  stats.total_processors = shape.processors;
  stats.processors_from_jobs = shape.from_jobs;
  if (options.clusters > shape.processors) {
    return absl::InvalidArgumentError(
        fmt::format("{}: clusters: must be at most the processors ({}), got {}", source,
                    shape.processors, options.clusters));
  }
  stats.clusters = SplitClusters(shape.processors, options.clusters, shape.cpus_per_node);
  const bool several = stats.clusters.size() > 1;
  stats.nodes = 0;
  for (const SwfCluster& cluster : stats.clusters) stats.nodes += cluster.nodes;

  const int64_t largest = stats.clusters.front().processors;
  const int64_t node_memory =
      std::min(shape.cpus_per_node, largest) * MemoryPerCpu(trace.header, options);
  std::vector<KeptJob> kept;
  for (const SwfJob* job : window) {
    SwfJobMapping mapped = SwfJobSpec(*job);
    if (!mapped.spec) {
      ++stats.skipped[mapped.skip_reason];
    } else if (std::optional<std::string> why =
                   ClusterSkipReason(*mapped.spec, largest, node_memory, several)) {
      ++stats.skipped[*why];
    } else {
      kept.push_back({job, *std::move(mapped.spec), mapped.time_limit_raised});
    }
  }
  std::map<int64_t, int32_t> home_of_site = HomesOfSites(kept, stats.clusters);
  if (several && options.site_placement == SitePlacement::kPinned) {
    std::erase_if(kept, [&](const KeptJob& job) {
      const SwfCluster& home = stats.clusters[home_of_site.at(job.row->partition)];
      if (Processors(job) <= home.processors) return false;
      ++stats.skipped["more processors than its home cluster"];
      return true;
    });
  }
  if (kept.empty()) {
    std::string why;
    for (const auto& [reason, count] : stats.skipped) {
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", count, reason);
    }
    return absl::InvalidArgumentError(
        fmt::format("{}: jobs: none of the {} jobs read can run{}", source, stats.jobs_read,
                    why.empty() ? std::string() : fmt::format(" (skipped: {})", why)));
  }
  stats.origin_s = kept.front().row->submit_time;
  for (const KeptJob& job : kept) stats.origin_s = std::min(stats.origin_s, job.row->submit_time);

  Scenario& s = out.scenario;
  s.file = std::string(source);
  s.name = trace.header.computer.empty() ? std::string(source) : trace.header.computer;
  s.description =
      fmt::format("SWF log {} ({} jobs kept of {} read)", source, kept.size(), stats.jobs_read);
  absl::StatusOr<Profile> profile = BuiltinProfile("default");
  if (!profile.ok()) return profile.status();
  s.config.profile = *std::move(profile);
  s.config.policy = options.policy;
  s.config.policy.preemption = false;
  for (size_t c = 0; c < stats.clusters.size(); ++c) {
    ScenarioCluster cluster{.name = stats.clusters[c].name};
    if (several && options.cost_tiers) {
      cluster.labels[std::string(kCostTierLabel)] = fmt::format("{}", c);
    }
    AddNodes(trace.header, shape, stats.clusters[c].processors, several, cluster, options, s.nodes);
    s.clusters.push_back(std::move(cluster));
  }

  std::set<std::string> leaves;
  std::set<std::string> names;
  s.jobs.reserve(kept.size());
  out.processors.reserve(kept.size());
  for (KeptJob& job : kept) {
    const SwfJob& row = *job.row;
    std::string name = fmt::format("job-{}", row.id);
    if (!names.insert(name).second) name = fmt::format("job-{}-line-{}", row.id, row.line);
    names.insert(name);
    std::string queue = QueueOf(row, options.queues_from);
    leaves.insert(queue);
    const int64_t procs = Processors(job);
    stats.time_limit_raised += job.time_limit_raised ? 1 : 0;
    s.jobs.push_back(JobOf(std::move(job), stats.origin_s, options.arrival_speedup, std::move(name),
                           std::move(queue)));
    const int32_t home = home_of_site.at(row.partition);
    if (several) PlaceAtHome(options.site_placement, stats.clusters[home].name, s.jobs.back().spec);
    ++stats.clusters[home].home_jobs;
    out.processors.push_back(procs);
    out.home.push_back(home);
  }
  s.queues = Queues(leaves, options.queues_from, options.ordering);
  stats.jobs_kept = static_cast<int64_t>(s.jobs.size());
  return out;
}

}  // namespace tessera::sim::swf

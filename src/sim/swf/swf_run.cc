#include "sim/swf/swf_run.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <streambuf>

#include "fmt/format.h"
#include "sim/scenario/scenario_runner.h"

namespace tessera::sim::swf {
namespace {

// A stream buffer that drops everything: the timeline of a long run is not wanted.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

struct NamedMode {
  std::string_view name;
  BackfillMode backfill;
};

constexpr NamedMode kModes[] = {{"none", BackfillMode::kNone},
                                {"easy", BackfillMode::kEasy},
                                {"conservative", BackfillMode::kConservative}};

SwfMode Named(std::string_view name, BackfillMode backfill, bool fifo) {
  SwfMode mode;
  mode.backfill = backfill;
  mode.ordering = fifo ? QueueOrdering::kStrictFifo : QueueOrdering::kBestEffortFifo;
  if (backfill == BackfillMode::kNone && fifo) {
    mode.name = "fcfs";
  } else {
    mode.name = fifo ? fmt::format("{}+fifo", name) : std::string(name);
  }
  return mode;
}

// The most processors held at one instant by `jobs` (releases before starts at one instant).
int64_t PeakProcessors(const std::vector<JobTimes>& jobs) {
  std::vector<std::pair<TimePoint, int64_t>> steps;
  for (const JobTimes& j : jobs) {
    if (!j.start) continue;
    steps.emplace_back(*j.start, j.processors);
    if (j.end) steps.emplace_back(*j.end, -j.processors);
  }
  std::sort(steps.begin(), steps.end());  // at one instant, negative steps sort first
  int64_t now = 0;
  int64_t peak = 0;
  for (const auto& [t, delta] : steps) {
    now += delta;
    peak = std::max(peak, now);
  }
  return peak;
}

// Splits the run's jobs by the cluster they ran in.
std::vector<SwfClusterResult> PerCluster(const RunReport& report, const SwfWorkload& workload,
                                         const std::vector<JobTimes>& jobs, const SwfMetrics& whole,
                                         int64_t* split_jobs) {
  const std::vector<SwfCluster>& clusters = workload.stats.clusters;
  std::vector<SwfClusterResult> out(clusters.size());
  std::vector<std::vector<JobTimes>> ran(clusters.size());
  for (size_t c = 0; c < clusters.size(); ++c) out[c].cluster = clusters[c];
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::vector<std::string>& where = report.jobs[i].clusters;
    if (where.empty()) continue;
    if (where.size() > 1) ++*split_jobs;
    const auto it = std::find_if(clusters.begin(), clusters.end(),
                                 [&](const SwfCluster& c) { return c.name == where.front(); });
    if (it == clusters.end()) continue;
    const auto c = static_cast<size_t>(it - clusters.begin());
    ran[c].push_back(jobs[i]);
    ++out[c].jobs_run;
    if (workload.home[i] != static_cast<int32_t>(c)) ++out[c].jobs_away;
  }
  for (size_t c = 0; c < clusters.size(); ++c) {
    out[c].metrics = ComputeSwfMetrics(ran[c], clusters[c].processors);
    out[c].peak_processors = PeakProcessors(ran[c]);
    double work = 0;
    for (const JobTimes& j : ran[c]) {
      if (j.start && j.end) {
        work += std::chrono::duration<double>(*j.end - *j.start).count() *
                static_cast<double>(j.processors);
      }
    }
    const double capacity = static_cast<double>(clusters[c].processors) * whole.makespan_s;
    out[c].metrics.utilisation = capacity > 0 ? work / capacity : 0;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<SwfMode>> ParseSwfModes(std::string_view backfill, bool fifo) {
  if (backfill == "all") {
    if (fifo) {
      return absl::InvalidArgumentError(
          "--fifo: '--backfill all' already runs fcfs (none with strict FIFO), easy and "
          "conservative; give --fifo with a list of modes instead");
    }
    return std::vector<SwfMode>{Named("none", BackfillMode::kNone, true),
                                Named("easy", BackfillMode::kEasy, false),
                                Named("conservative", BackfillMode::kConservative, false)};
  }
  std::vector<SwfMode> out;
  size_t begin = 0;
  while (begin <= backfill.size()) {
    const size_t comma = std::min(backfill.find(',', begin), backfill.size());
    const std::string_view item = backfill.substr(begin, comma - begin);
    const auto* known = std::find_if(std::begin(kModes), std::end(kModes),
                                     [&](const NamedMode& m) { return m.name == item; });
    if (known == std::end(kModes)) {
      return absl::InvalidArgumentError(fmt::format(
          "--backfill: unknown mode '{}' in '{}' (none, easy, conservative, or all alone)", item,
          backfill));
    }
    SwfMode mode = Named(known->name, known->backfill, fifo);
    if (std::any_of(out.begin(), out.end(),
                    [&](const SwfMode& m) { return m.name == mode.name; })) {
      return absl::InvalidArgumentError(
          fmt::format("--backfill: mode '{}' given twice in '{}'", item, backfill));
    }
    out.push_back(std::move(mode));
    begin = comma + 1;
  }
  return out;
}

absl::StatusOr<SwfRunResult> RunSwfMode(const SwfTrace& trace, std::string_view source,
                                        SwfWorkloadOptions options, const SwfMode& mode) {
  options.ordering = mode.ordering;
  options.policy.backfill = mode.backfill;
  absl::StatusOr<SwfWorkload> workload = BuildSwfWorkload(trace, source, options);
  if (!workload.ok()) return workload.status();

  NullBuffer discard;
  std::ostream timeline(&discard);
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<RunReport> report = RunScenario(workload->scenario, RunOptions{}, timeline);
  if (!report.ok()) return report.status();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  absl::StatusOr<std::vector<JobTimes>> jobs = JobTimesOf(*report, *workload);
  if (!jobs.ok()) return jobs.status();
  SwfRunResult result;
  result.mode = mode;
  result.stats = workload->stats;
  result.metrics = ComputeSwfMetrics(*jobs, workload->stats.total_processors);
  result.wall_s = wall;
  result.truncated_after = report->truncated_after;
  result.starts_after_submit = std::all_of(jobs->begin(), jobs->end(), [](const JobTimes& j) {
    return !j.start || *j.start >= j.submit;
  });
  result.clusters = PerCluster(*report, *workload, *jobs, result.metrics, &result.split_jobs);
  return result;
}

}  // namespace tessera::sim::swf

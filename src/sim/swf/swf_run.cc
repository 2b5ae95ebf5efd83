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
  return result;
}

}  // namespace tessera::sim::swf

// Property tests of the scheduling policies over random scenarios.
//
// Each case is a small random scenario written as YAML text (so that a failure prints a file
// that `tessera sim --scenario` reruns): a few nodes, a random queue tree with random
// guarantees and limits, random jobs (gangs, priorities, time limits no shorter than the
// durations, grace periods, minimum runtimes) and random policy switches (backfill, preemption,
// fair share, gang timeout, preemption rate, aging). Properties:
//   - the four invariants hold at every instant: no node above capacity, every gang whole or
//     absent, no queue above guaranteed + borrowing limit, every pending job with a reason;
//   - with EASY backfill, one queue, equal priorities, no cluster events and every job ending
//     within its time limit, no job starts later than the first start reserved for it (the
//     timeline's "reserved to start in D" at time T): a backfilled job never delays the
//     reservation holder.
// A failure prints the seed, the scenario, the failed expectation and the timeline.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/scenario/scenario_parser.h"
#include "sim/scenario/scenario_runner.h"
#include "tessera/common/rng.h"

namespace tessera::sim {
namespace {

constexpr int kInvariantCases = 1000;
constexpr int kReservationCases = 500;

// A uniform integer in [lo, hi].
int64_t Between(Rng& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(hi - lo + 1)));
}

bool Chance(Rng& rng, double p) { return rng.UniformDouble() < p; }

template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& options) {
  return options[rng.Uniform(options.size())];
}

struct Cluster {
  std::string yaml;
  int64_t nodes = 0;
  int64_t max_gpus = 0;  // GPUs of the largest node
  int64_t total_gpus = 0;
};

Cluster RandomNodes(Rng& rng) {
  Cluster cluster;
  cluster.yaml = "nodes:\n";
  cluster.nodes = Between(rng, 1, 4);
  for (int64_t i = 0; i < cluster.nodes; ++i) {
    const int64_t gpus = Pick(rng, std::vector<int64_t>{2, 4, 8});
    cluster.max_gpus = std::max(cluster.max_gpus, gpus);
    cluster.total_gpus += gpus;
    cluster.yaml += fmt::format(
        "  - {{name: n{}, cpu: {}, memory: {}Gi, gpus: {{model: {}, count: {}, memory: 80Gi}}}}\n",
        i, Pick(rng, std::vector<int>{16, 32, 64}), Pick(rng, std::vector<int>{64, 256}),
        Pick(rng, std::vector<std::string>{"A100", "H100"}), gpus);
  }
  return cluster;
}

// A quota mapping of gpu (and sometimes cpu) with values in [lo, hi] GPUs.
std::string RandomQuota(Rng& rng, int64_t lo, int64_t hi) {
  std::string out = fmt::format("{{gpu: {}", Between(rng, lo, hi));
  if (Chance(rng, 0.3)) out += fmt::format(", cpu: {}", Between(rng, 4, 64));
  return out + "}";
}

// One queue at `indent`; fills `leaves` with the names of leaf queues.
void RandomQueue(Rng& rng, const std::string& name, int depth, int64_t gpus, int indent,
                 std::string& yaml, std::vector<std::string>& leaves) {
  const std::string pad(indent, ' ');
  yaml += fmt::format("{}- name: {}\n", pad, name);
  if (Chance(rng, 0.8)) {
    yaml += fmt::format("{}  guaranteed: {}\n", pad, RandomQuota(rng, gpus / 4, gpus));
  }
  if (Chance(rng, 0.3)) {
    yaml += fmt::format("{}  borrowing_limit: {}\n", pad, RandomQuota(rng, 0, gpus));
  }
  if (Chance(rng, 0.3)) {
    yaml += fmt::format("{}  lending_limit: {}\n", pad, RandomQuota(rng, 0, gpus));
  }
  if (Chance(rng, 0.3)) yaml += fmt::format("{}  weight: {}\n", pad, Between(rng, 1, 3));
  if (Chance(rng, 0.3)) yaml += fmt::format("{}  priority: {}\n", pad, Between(rng, 0, 2));
  if (depth < 2 && Chance(rng, 0.4)) {
    yaml += fmt::format("{}  children:\n", pad);
    const int64_t children = Between(rng, 1, 3);
    for (int64_t c = 0; c < children; ++c) {
      RandomQueue(rng, fmt::format("{}-{}", name, c), depth + 1, gpus, indent + 4, yaml, leaves);
    }
    return;
  }
  if (Chance(rng, 0.3)) yaml += fmt::format("{}  ordering: strict_fifo\n", pad);
  leaves.push_back(name);
}

std::string RandomQueues(Rng& rng, int64_t gpus, std::vector<std::string>& leaves) {
  std::string yaml = "queues:\n";
  // Several top-level queues lend to and borrow from each other: reclaim needs them.
  const int64_t roots = Chance(rng, 0.8) ? Between(rng, 2, 3) : 1;
  for (int64_t r = 0; r < roots; ++r)
    RandomQueue(rng, fmt::format("q{}", r), 0, gpus, 2, yaml, leaves);
  return yaml;
}

struct JobOptions {
  std::vector<std::string> queues;  // empty: the default queue
  bool equal_priorities = false;
  bool always_time_limit = false;
  bool may_fail = true;
};

std::string RandomJobs(Rng& rng, const Cluster& cluster, const JobOptions& options) {
  std::string yaml = "jobs:\n";
  const int64_t jobs = Between(rng, 3, 12);
  for (int64_t j = 0; j < jobs; ++j) {
    const int64_t replicas = Between(rng, 1, 3);
    const int64_t gpus = Between(rng, 0, cluster.max_gpus);
    const int64_t duration = Between(rng, 5, 120);
    std::string job = fmt::format("  - {{name: j{}, at: {}s", j, Between(rng, 0, 120));
    if (!options.queues.empty()) job += fmt::format(", queue: {}", Pick(rng, options.queues));
    if (!options.equal_priorities) job += fmt::format(", priority: {}", Between(rng, 0, 3));
    if (replicas > 1 && Chance(rng, 0.3)) {
      job += fmt::format(", min_available: {}", Between(rng, 1, replicas));
    }
    job += fmt::format(", tasks: [{{name: w, replicas: {}, gpu: {}, cpu: {}}}]", replicas, gpus,
                       Between(rng, 1, 8));
    job += fmt::format(", duration: {}s", duration);
    if (options.always_time_limit || Chance(rng, 0.6)) {
      job += fmt::format(", time_limit: {}s", duration + Between(rng, 0, 60));
    }
    if (Chance(rng, 0.2)) job += ", preemptible: false";
    if (Chance(rng, 0.2)) job += fmt::format(", min_runtime: {}s", Between(rng, 1, 60));
    if (Chance(rng, 0.3)) job += fmt::format(", termination_grace: {}s", Between(rng, 1, 20));
    if (options.may_fail && Chance(rng, 0.1)) job += ", outcome: fail";
    yaml += job + "}\n";
  }
  return yaml;
}

std::string RandomConfig(Rng& rng) {
  std::string yaml = "config:\n";
  yaml += fmt::format("  seed: {}\n", Between(rng, 1, 1000));
  yaml += fmt::format("  backfill: {}\n",
                      Pick(rng, std::vector<std::string>{"none", "easy", "conservative"}));
  if (Chance(rng, 0.5)) yaml += fmt::format("  backfill_depth: {}\n", Between(rng, 1, 4));
  yaml += fmt::format("  preemption: {}\n", Chance(rng, 0.6) ? "true" : "false");
  if (Chance(rng, 0.3)) {
    yaml += fmt::format("  preemption_rate: {{max: {}, per: {}s}}\n", Between(rng, 1, 3),
                        Between(rng, 10, 120));
  }
  if (Chance(rng, 0.3)) yaml += "  on_preemption: cancel\n";
  yaml += fmt::format("  fair_share: {}\n", Chance(rng, 0.7) ? "drf" : "none");
  if (Chance(rng, 0.3)) yaml += fmt::format("  fair_share_half_life: {}s\n", Between(rng, 30, 600));
  if (Chance(rng, 0.3)) yaml += fmt::format("  priority_aging: {}s\n", Between(rng, 5, 120));
  if (Chance(rng, 0.3)) yaml += fmt::format("  gang_timeout: {}s\n", Between(rng, 10, 90));
  return yaml;
}

std::string RandomEvents(Rng& rng, const Cluster& cluster) {
  if (!Chance(rng, 0.4)) return "";
  const int64_t node = Between(rng, 0, cluster.nodes - 1);
  const int64_t at = Between(rng, 10, 150);
  const std::string action = Pick(rng, std::vector<std::string>{"down", "drain", "cordon"});
  const std::string back = action == "down" ? "up" : "uncordon";
  return fmt::format(
      "events:\n  - {{at: {}s, node: n{}, action: {}}}\n"
      "  - {{at: {}s, node: n{}, action: {}}}\n",
      at, node, action, at + Between(rng, 10, 100), node, back);
}

constexpr std::string_view kInvariants = R"(expect:
  - {invariant: no_overcommit}
  - {invariant: gang_atomic}
  - {invariant: quota_respected}
  - {invariant: pending_has_reason}
)";

struct RandomRun {
  Scenario scenario;
  RunReport report;
  std::string timeline;
};

// Parses and runs `yaml`; nullopt (with a test failure naming the seed) when either fails.
std::optional<RandomRun> ParseAndRun(const std::string& yaml, uint64_t seed) {
  absl::StatusOr<Scenario> scenario = ParseScenario(yaml, fmt::format("random-{}.yaml", seed));
  if (!scenario.ok()) {
    ADD_FAILURE() << "seed " << seed
                  << ": the generated scenario does not parse: " << scenario.status() << "\n"
                  << yaml;
    return std::nullopt;
  }
  RandomRun run{*std::move(scenario), {}, {}};
  std::ostringstream timeline;
  absl::StatusOr<RunReport> report = RunScenario(run.scenario, RunOptions{}, timeline);
  if (!report.ok()) {
    ADD_FAILURE() << "seed " << seed << ": the run failed: " << report.status() << "\n" << yaml;
    return std::nullopt;
  }
  run.report = *std::move(report);
  run.timeline = timeline.str();
  return run;
}

// Timeline markers of the decisions the random scenarios must reach, so that a change of the
// generator (or of the timeline) cannot quietly stop testing them.
constexpr std::string_view kDecisions[] = {"  preempt   ", "reclaim",      "QuotaExceeded",
                                           "  unadmit   ", "Reservation:", "  refuse    "};

TEST(PolicyPropertyTest, InvariantsHoldOnRandomScenarios) {
  std::map<std::string_view, int> reached;
  for (int i = 0; i < kInvariantCases; ++i) {
    const uint64_t seed = 1000 + static_cast<uint64_t>(i);
    Rng rng(seed);
    const Cluster cluster = RandomNodes(rng);
    JobOptions options;
    std::string queues;
    if (Chance(rng, 0.8)) queues = RandomQueues(rng, cluster.total_gpus, options.queues);
    std::string yaml = fmt::format("name: random-{}\n", seed);
    yaml += RandomConfig(rng) + cluster.yaml + queues + RandomJobs(rng, cluster, options) +
            RandomEvents(rng, cluster) + std::string(kInvariants) + "until: 3000s\n";
    std::optional<RandomRun> run = ParseAndRun(yaml, seed);
    if (!run) continue;
    for (std::string_view decision : kDecisions) {
      if (run->timeline.find(decision) != std::string::npos) ++reached[decision];
    }
    for (const ExpectationResult& result : run->report.results) {
      EXPECT_TRUE(result.passed) << "seed " << seed << ": " << FormatFailure(run->scenario, result)
                                 << "\n--- scenario\n"
                                 << yaml << "--- timeline\n"
                                 << run->timeline;
    }
    if (HasFailure()) return;  // one failing case is enough to read
  }
  for (std::string_view decision : kDecisions) {
    EXPECT_GE(reached[decision], 3) << "too few random scenarios reach \"" << decision << "\"";
  }
}

// The time of a timeline line ("    12.5s  pending   j3: ...").
std::optional<TimePoint> LineTime(std::string_view line) {
  const size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) return std::nullopt;
  const size_t end = line.find(' ', start);
  absl::StatusOr<Duration> t = ParseDuration(line.substr(start, end - start), "time");
  if (!t.ok()) return std::nullopt;
  return TimePoint{} + *t;
}

// The first reserved start of every job that held a reservation, from the timeline's pending
// lines. The holder's own line ends its reason with "; reserved to start in D"; a job kept back
// by reservations says "Reservation: it fits now but would delay a reserved job (reserved: X in
// D, Y in E)", which lists them. D counts from the line's time ("reserved to start at T'" is
// read too).
std::map<std::string, TimePoint> FirstReservations(const std::string& timeline) {
  constexpr std::string_view kPending = "  pending   ";
  constexpr std::string_view kReservedList = "(reserved: ";
  std::map<std::string, TimePoint> out;
  std::istringstream lines(timeline);
  for (std::string text; std::getline(lines, text);) {
    const std::string_view line = text;
    const size_t kind = line.find(kPending);
    if (kind == std::string_view::npos) continue;
    std::optional<TimePoint> now = LineTime(line);
    if (!now) continue;
    const std::string_view rest = line.substr(kind + kPending.size());
    if (const size_t list = rest.find(kReservedList); list != std::string_view::npos) {
      std::string_view items = rest.substr(list + kReservedList.size());
      items = items.substr(0, items.find(')'));
      while (!items.empty()) {
        const size_t comma = items.find(", ");
        const std::string_view item = items.substr(0, comma);
        items = comma == std::string_view::npos ? std::string_view() : items.substr(comma + 2);
        const size_t in = item.find(" in ");
        if (in == std::string_view::npos) continue;
        absl::StatusOr<Duration> d = ParseDuration(item.substr(in + 4), "reservation");
        if (d.ok()) out.emplace(std::string(item.substr(0, in)), *now + *d);
      }
      continue;
    }
    const std::string holder(rest.substr(0, rest.find(':')));
    std::optional<TimePoint> reserved;
    for (std::string_view marker : {"reserved to start in ", "reserved to start at "}) {
      const size_t at = rest.find(marker);
      if (at == std::string_view::npos) continue;
      std::string_view value = rest.substr(at + marker.size());
      value = value.substr(0, value.find_first_of(" ;,)"));
      absl::StatusOr<Duration> d = ParseDuration(value, "reservation");
      if (!d.ok()) continue;
      reserved = marker.ends_with("in ") ? *now + *d : TimePoint{} + *d;
    }
    if (reserved) out.emplace(holder, *reserved);  // keeps the first
  }
  return out;
}

TEST(PolicyPropertyTest, FirstTimelineReservationParses) {
  const std::map<std::string, TimePoint> reservations = FirstReservations(
      "       1s  pending   big: InsufficientResources: task w-0: 0/2 nodes: 2 insufficient gpu; "
      "reserved to start in 1m39s\n"
      "       2s  pending   big: InsufficientResources: task w-0: 0/2 nodes: 2 insufficient gpu; "
      "reserved to start in 1m38s\n"
      "     2.5s  pending   late: Reservation: it fits now but would delay a reserved job "
      "(reserved: other in 1m37.5s, third in 2m)\n"
      "       3s  pending   small: InsufficientResources: task w-0: 0/2 nodes: 2 insufficient "
      "gpu\n");
  ASSERT_EQ(reservations.size(), 3u);
  EXPECT_EQ(reservations.at("third"), TimePoint{} + std::chrono::milliseconds(122'500));
  EXPECT_EQ(reservations.at("big"), TimePoint{} + std::chrono::seconds(100));
  EXPECT_EQ(reservations.at("other"), TimePoint{} + std::chrono::seconds(100));
}

TEST(PolicyPropertyTest, BackfillNeverDelaysTheReservedStart) {
  int reserved_jobs = 0;
  for (int i = 0; i < kReservationCases; ++i) {
    const uint64_t seed = 5000 + static_cast<uint64_t>(i);
    Rng rng(seed);
    const Cluster cluster = RandomNodes(rng);
    const JobOptions options{
        .equal_priorities = true, .always_time_limit = true, .may_fail = false};
    std::string yaml = fmt::format("name: reservation-{}\nconfig:\n  backfill: easy\n  seed: {}\n",
                                   seed, Between(rng, 1, 1000));
    yaml += cluster.yaml + RandomJobs(rng, cluster, options) + std::string(kInvariants);
    std::optional<RandomRun> run = ParseAndRun(yaml, seed);
    if (!run) continue;
    for (const ExpectationResult& result : run->report.results) {
      EXPECT_TRUE(result.passed) << "seed " << seed << ": " << FormatFailure(run->scenario, result)
                                 << "\n--- scenario\n"
                                 << yaml << "--- timeline\n"
                                 << run->timeline;
    }
    const std::map<std::string, TimePoint> reservations = FirstReservations(run->timeline);
    for (const JobOutcome& job : run->report.jobs) {
      auto reserved = reservations.find(job.name);
      if (reserved == reservations.end() || reserved->second == TimePoint::max()) continue;
      ++reserved_jobs;
      ASSERT_TRUE(job.first_start.has_value())
          << "seed " << seed << ": " << job.name << " never started\n--- scenario\n"
          << yaml << "--- timeline\n"
          << run->timeline;
      EXPECT_LE(*job.first_start, reserved->second)
          << "seed " << seed << ": " << job.name << " was reserved to start at "
          << FormatDuration(reserved->second - TimePoint{}) << " but started at "
          << FormatDuration(*job.first_start - TimePoint{}) << "\n--- scenario\n"
          << yaml << "--- timeline\n"
          << run->timeline;
    }
    if (HasFailure()) return;
  }
  EXPECT_GT(reserved_jobs, 20) << "too few reservations: the generator no longer tests backfill";
}

}  // namespace
}  // namespace tessera::sim

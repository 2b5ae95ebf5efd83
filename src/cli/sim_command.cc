#include "cli/sim_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/sim_flags.h"
#include "cli/sim_swf_flags.h"
#include "core/duration.h"
#include "fmt/format.h"
#include "sched/profile.h"
#include "sim/alibaba/expected_results.h"
#include "sim/alibaba/html_report.h"
#include "sim/alibaba/packing_bound.h"
#include "sim/alibaba/paper_runner.h"
#include "sim/alibaba/replay_runner.h"
#include "sim/alibaba/results_json.h"
#include "sim/alibaba/sweep.h"
#include "sim/alibaba/trace_input.h"
#include "sim/scenario/scenario_command.h"
#include "tessera/common/status_macros.h"

namespace tessera::cli {
namespace {

namespace alibaba = ::tessera::sim::alibaba;
using sim_cli::AddSwfFlags;
using sim_cli::BadInput;
using sim_cli::CheckOutputPaths;
using sim_cli::kExitBadInput;
using sim_cli::kExitOk;
using sim_cli::RunSwfMode;
using sim_cli::SimFlags;
using sim_cli::WriteFile;

// A progress line on stderr, redrawn a few times a second from its own thread.
class ProgressBar {
 public:
  ProgressBar(bool enabled, int64_t total, std::string what)
      : enabled_(enabled && total > 0), total_(total), what_(std::move(what)) {
    if (enabled_) thread_ = std::thread([this] { Loop(); });
  }
  ~ProgressBar() { Stop(); }

  std::atomic<int64_t>* counter() { return &done_; }

  void Stop() {
    if (!enabled_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    Draw();
    std::cerr << "\n";
    enabled_ = false;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      Draw();
    }
  }
  void Draw() {
    const int64_t done = std::min(done_.load(std::memory_order_relaxed), total_);
    const double frac = static_cast<double>(done) / static_cast<double>(total_);
    const int filled = static_cast<int>(frac * 30);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::cerr << fmt::format("\r[{}{}] {:3.0f}% {}/{} {} {:.1f}s", std::string(filled, '#'),
                             std::string(30 - filled, ' '), 100 * frac, done, total_, what_, secs)
              << std::flush;
  }

  bool enabled_;
  int64_t total_;
  std::string what_;
  std::atomic<int64_t> done_{0};
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// --policy NAME, --policies a,b,c or --policies all|paper; fgd when neither is given. Errors
// name the flag that was given.
absl::StatusOr<std::vector<std::string>> ResolvePolicies(const SimFlags& f) {
  if (f.policy.has_value() && f.policies.has_value()) {
    return absl::InvalidArgumentError("give either --policy or --policies, not both");
  }
  const std::string_view flag = f.policies.has_value() ? "--policies" : "--policy";
  std::vector<std::string> out;
  if (f.policies.has_value()) {
    if (*f.policies == "all" || *f.policies == "paper") {
      out = *f.policies == "all" ? alibaba::AllPolicies() : alibaba::PaperPolicies();
    } else {
      std::stringstream in(*f.policies);
      for (std::string p; std::getline(in, p, ',');) out.push_back(p);
      if (f.policies->empty() || f.policies->back() == ',') out.push_back("");
    }
  } else {
    out.push_back(f.policy.value_or("fgd"));
  }
  const std::vector<std::string> known = BuiltinProfileNames();
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string& p = out[i];
    if (p.empty()) {
      return absl::InvalidArgumentError(fmt::format("{}: empty policy name in '{}'", flag,
                                                    f.policies.value_or(f.policy.value_or(""))));
    }
    if (p == "all" || p == "paper") {
      return absl::InvalidArgumentError(
          f.policies.has_value()
              ? fmt::format("{}: '{}' stands for a list of policies and must be given alone",
                            flag, p)
              : fmt::format("{}: '{}' stands for a list of policies: give it as --policies {}",
                            flag, p, p));
    }
    if (std::find(known.begin(), known.end(), p) == known.end()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: unknown policy '{}' (known: {})", flag, p, fmt::join(known, ", ")));
    }
    if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(i), p) !=
        out.begin() + static_cast<std::ptrdiff_t>(i)) {
      return absl::InvalidArgumentError(fmt::format("{}: policy '{}' given twice", flag, p));
    }
  }
  return out;
}

absl::StatusOr<std::vector<uint64_t>> ResolveSeeds(const SimFlags& f) {
  if (f.seed.has_value() && f.seeds.has_value()) {
    return absl::InvalidArgumentError("give either --seed or --seeds, not both");
  }
  if (f.seeds.has_value()) return alibaba::ParseSeedList(*f.seeds);
  if (!f.seed.has_value()) return std::vector<uint64_t>{42};
  TESSERA_ASSIGN_OR_RETURN(const uint64_t seed, alibaba::ParseSeed(*f.seed, "--seed"));
  return std::vector<uint64_t>{seed};
}

// The flags each kind of run takes; any other flag given is an error, not silently ignored.
// --scenario takes only --seed; the trace flags split into both modes, paper only and replay only.
constexpr std::string_view kScenarioFlags[] = {"--scenario", "--seed"};
// --swf takes its own flags, --summary-json and --arrival-speedup.
constexpr std::string_view kSwfOnlyFlags[] = {
    "--swf",         "--backfill",       "--fifo",           "--limit",         "--skip",
    "--queues-from", "--fair-share",     "--backfill-depth", "--cpus-per-node", "--processors",
    "--clusters",    "--site-placement", "--cost-tiers"};
constexpr std::string_view kSwfSharedFlags[] = {"--summary-json", "--arrival-speedup"};
constexpr std::string_view kPaperOnlyFlags[] = {"--inflate",     "--expected", "--no-expected",
                                                "--samples-csv", "--threads",  "--no-node-shuffle"};
constexpr std::string_view kReplayOnlyFlags[] = {"--sample-interval", "--arrival-speedup"};

template <size_t N>
bool Contains(const std::string_view (&list)[N], std::string_view flag) {
  return std::find(std::begin(list), std::end(list), flag) != std::end(list);
}

absl::Status CheckFlagsApply(const CLI::App& app, const SimFlags& f) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string flag = "--" + opt->get_lnames().front();
    if (!f.swf.empty()) {
      if (!Contains(kSwfOnlyFlags, flag) && !Contains(kSwfSharedFlags, flag)) {
        return absl::InvalidArgumentError(fmt::format("{} does not apply to --swf", flag));
      }
    } else if (Contains(kSwfOnlyFlags, flag)) {
      return absl::InvalidArgumentError(fmt::format("{} applies to --swf only", flag));
    } else if (!f.scenario.empty()) {
      if (!Contains(kScenarioFlags, flag)) {
        return absl::InvalidArgumentError(fmt::format("{} does not apply to --scenario", flag));
      }
    } else if (f.mode == "replay" ? Contains(kPaperOnlyFlags, flag)
                                  : Contains(kReplayOnlyFlags, flag)) {
      return absl::InvalidArgumentError(
          fmt::format("{} does not apply to --mode {}", flag, f.mode));
    }
  }
  return absl::OkStatus();
}

// Every floating-point flag must be finite (CLI11's range checks let NaN through), and the
// popularity threshold of M must be in (0, 100].
absl::Status CheckNumbers(const SimFlags& f) {
  const std::pair<std::string_view, double> numbers[] = {
      {"--inflate", f.inflate},
      {"--arrival-speedup", f.arrival_speedup},
      {"--typical-threshold", f.typical_threshold}};
  for (const auto& [flag, value] : numbers) {
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: must be a finite number, got {}", flag, value));
    }
  }
  if (!(f.typical_threshold > 0 && f.typical_threshold <= 100)) {
    return absl::InvalidArgumentError(
        fmt::format("--typical-threshold: must be in (0, 100], got {}", f.typical_threshold));
  }
  return absl::OkStatus();
}

// The artifact's results: --expected DIR, or fgd-expected-results/ beside the pod list.
absl::StatusOr<std::optional<alibaba::ExpectedResults>> LoadExpected(const SimFlags& f) {
  if (f.no_expected) return std::nullopt;
  std::string dir = f.expected_dir;
  if (dir.empty()) {
    const auto beside = std::filesystem::path(f.pods).parent_path() / "fgd-expected-results";
    if (!std::filesystem::exists(beside / "analysis_allo_discrete.csv")) return std::nullopt;
    dir = beside.string();
  }
  absl::StatusOr<alibaba::ExpectedResults> loaded = alibaba::LoadExpectedResults(dir);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--expected: {}", std::string(loaded.status().message())));
  }
  return std::optional<alibaba::ExpectedResults>(std::move(*loaded));
}

std::string CommandLine(int argc, char** argv) {
  std::string out = "tessera";
  for (int i = 0; i < argc; ++i) out += fmt::format(" {}", argv[i]);
  return out;
}

void PrintPaperSummary(const std::vector<alibaba::PolicySummary>& summaries,
                       const std::vector<alibaba::PackingBound>& bounds,
                       const std::string& workload, const alibaba::ExpectedResults* expected,
                       std::ostream& out) {
  out << fmt::format("{:<14} {:>6} {:>16} {:>10} {:>8} {:>12} {:>12}\n", "policy", "runs",
                     "unalloc%@100", "artifact", "diff", "frag%@100", "ratio%@100");
  for (const alibaba::PolicySummary& s : summaries) {
    std::string theirs = "-", diff = "-";
    if (expected != nullptr) {
      if (auto c = expected->Median(alibaba::ExpectedMetric::kAllocation, workload, s.policy)) {
        theirs = fmt::format("{:.2f}", 100.0 - c->At(100));
        diff = fmt::format("{:+.2f}", s.unallocated_median - (100.0 - c->At(100)));
      }
    }
    out << fmt::format("{:<14} {:>6} {:>16.2f} {:>10} {:>8} {:>12.2f} {:>12.1f}\n",
                       alibaba::PolicyDisplayName(s.policy), s.runs, s.unallocated_median, theirs,
                       diff, s.frag_amount_median, s.frag_ratio_median);
  }
  // No policy can go below the bound (docs/simulator.md, "Packing bound").
  out << fmt::format("{:<14} {:>6} {:>16.2f} {:>10} {:>8} {:>12} {:>12}\n", "bound (LP)",
                     bounds.size(), alibaba::MedianBound(bounds), "-", "-", "-", "-");
}

int RunPaperMode(const SimFlags& f, const alibaba::TraceInput& input,
                 const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
                 const alibaba::ReportContext& context) {
  absl::StatusOr<std::optional<alibaba::ExpectedResults>> expected = LoadExpected(f);
  if (!expected.ok()) return BadInput(expected.status());
  const alibaba::ExpectedResults* theirs = expected->has_value() ? &**expected : nullptr;

  alibaba::SweepOptions sweep;
  sweep.policies = policies;
  sweep.seeds = seeds;
  sweep.inflate = f.inflate;
  sweep.shuffle_nodes = !f.no_node_shuffle;
  sweep.keep_samples = !f.samples_csv.empty();
  const int32_t cores = std::max(1, static_cast<int32_t>(std::thread::hardware_concurrency()));
  sweep.threads = f.threads > 0 ? f.threads : cores;
  ProgressBar bar(f.progress || isatty(STDERR_FILENO) != 0, alibaba::ExpectedArrivals(input, sweep),
                  "arrivals");
  sweep.progress = bar.counter();
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<alibaba::PaperRunResult>> runs = alibaba::RunSweep(input, sweep);
  bar.Stop();
  if (!runs.ok()) {
    std::cerr << "tessera sim: " << runs.status().message() << "\n";
    return runs.status().code() == absl::StatusCode::kInvalidArgument ? kExitBadInput : 1;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::vector<alibaba::PolicySummary> summaries = alibaba::SummarizeByPolicy(*runs);
  absl::StatusOr<std::vector<alibaba::PackingBound>> bounds =
      alibaba::ComputePackingBounds(input, seeds, f.inflate);
  if (!bounds.ok()) {
    std::cerr << "tessera sim: " << bounds.status().message() << "\n";
    return 1;
  }

  const bool single = runs->size() == 1;
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> outputs;
  if (!f.summary_json.empty()) {
    const nlohmann::json j =
        single ? alibaba::RunSummaryJson(runs->front(), /*with_curves=*/true)
               : alibaba::SweepSummaryJson(*runs, summaries, theirs, /*with_curves=*/true, *bounds);
    outputs.push_back({f.summary_json, {"--summary-json", j.dump(2) + "\n"}});
  }
  if (!f.metrics_csv.empty()) {
    std::ostringstream csv;
    alibaba::WriteCurvesCsv(*runs, csv);
    outputs.push_back({f.metrics_csv, {"--metrics-csv", csv.str()}});
  }
  if (!f.metrics_json.empty()) {
    outputs.push_back(
        {f.metrics_json, {"--metrics-json", alibaba::CurvesJson(*runs).dump() + "\n"}});
  }
  if (!f.samples_csv.empty()) {
    std::ostringstream csv;
    alibaba::WriteSamplesCsv(*runs, csv);
    outputs.push_back({f.samples_csv, {"--samples-csv", csv.str()}});
  }
  if (!f.report.empty()) {
    outputs.push_back(
        {f.report,
         {"--report", alibaba::PaperReportHtml(context, *runs, summaries, theirs, *bounds)}});
  }
  for (const auto& [path, what] : outputs) {
    if (absl::Status s = WriteFile(path, what.first, what.second); !s.ok()) return BadInput(s);
  }

  std::cout << fmt::format(
      "{}: {} run(s), {} node(s), {} task(s) in the trace, M = {} of {} "
      "classes ({:.1f}% of tasks), {:.1f}s wall ({} thread(s))\n",
      input.workload_name, runs->size(), input.nodes.nodes.size(), input.pods.tasks.size(),
      input.target_stats.kept_classes, input.target_stats.distinct_classes,
      input.target_stats.covered_pct, wall, sweep.threads);
  PrintPaperSummary(summaries, *bounds, input.workload_name, theirs, std::cout);
  return kExitOk;
}

int RunReplayMode(const SimFlags& f, const alibaba::TraceInput& input,
                  const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
                  const alibaba::ReportContext& context) {
  absl::StatusOr<Duration> interval = ParseDuration(f.sample_interval, "--sample-interval");
  if (!interval.ok()) return BadInput(interval.status());
  ProgressBar bar(f.progress || isatty(STDERR_FILENO) != 0,
                  static_cast<int64_t>(input.pods.tasks.size() * policies.size() * seeds.size()),
                  "submissions");
  std::vector<alibaba::ReplayResult> runs;
  for (const std::string& policy : policies) {
    for (uint64_t seed : seeds) {
      alibaba::ReplayOptions options;
      options.policy = policy;
      options.seed = seed;
      options.sample_interval = *interval;
      options.arrival_speedup = f.arrival_speedup;
      options.progress = bar.counter();
      absl::StatusOr<alibaba::ReplayResult> r = alibaba::RunReplay(input, options);
      if (!r.ok()) {
        bar.Stop();
        std::cerr << "tessera sim: " << r.status().message() << "\n";
        return r.status().code() == absl::StatusCode::kInvalidArgument ? kExitBadInput : 1;
      }
      runs.push_back(std::move(*r));
    }
  }
  bar.Stop();

  nlohmann::json summary = nlohmann::json::array();
  for (const alibaba::ReplayResult& r : runs) {
    summary.push_back({{"policy", r.policy},
                       {"seed", r.seed},
                       {"workload", r.workload},
                       {"submitted", r.submitted},
                       {"placed_on_arrival", r.placed_on_arrival},
                       {"placed_after_wait", r.placed_after_wait},
                       {"failed", r.failed},
                       {"still_pending", r.still_pending},
                       {"completed", r.completed},
                       {"wait_mean_s", alibaba::Number(r.wait_mean_s, 1)},
                       {"wait_p50_s", alibaba::Number(r.wait_p50_s, 1)},
                       {"wait_p95_s", alibaba::Number(r.wait_p95_s, 1)},
                       {"gpu_alloc_time_mean_pct", alibaba::Number(r.gpu_alloc_time_mean_pct)},
                       {"frag_ratio_time_mean_pct", alibaba::Number(r.frag_ratio_time_mean_pct)},
                       {"gpu_alloc_peak_pct", alibaba::Number(r.gpu_alloc_peak_pct)},
                       {"simulated_seconds", r.simulated_seconds},
                       {"wall_seconds", alibaba::Number(r.wall_seconds, 3)}});
  }
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> outputs;
  if (!f.summary_json.empty()) {
    const nlohmann::json j = runs.size() == 1 ? summary[0] : nlohmann::json{{"runs", summary}};
    outputs.push_back({f.summary_json, {"--summary-json", j.dump(2) + "\n"}});
  }
  if (!f.metrics_csv.empty() || !f.metrics_json.empty()) {
    std::string csv =
        "policy,seed,time_s,gpu_alloc_pct,cpu_alloc_pct,memory_alloc_pct,fragment_pct,"
        "frag_ratio_pct,running,pending,failed,completed\n";
    nlohmann::json series = nlohmann::json::array();
    for (const alibaba::ReplayResult& r : runs) {
      nlohmann::json samples = nlohmann::json::array();
      for (const alibaba::ReplaySample& s : r.samples) {
        csv +=
            fmt::format("{},{},{:.0f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{},{}\n", r.policy,
                        r.seed, s.time_s, s.gpu_alloc_pct, s.cpu_alloc_pct, s.memory_alloc_pct,
                        s.frag_pct, s.frag_ratio_pct, s.running, s.pending, s.failed, s.completed);
        samples.push_back({s.time_s, alibaba::Number(s.gpu_alloc_pct),
                           alibaba::Number(s.cpu_alloc_pct), alibaba::Number(s.memory_alloc_pct),
                           alibaba::Number(s.frag_pct), alibaba::Number(s.frag_ratio_pct),
                           s.running, s.pending, s.failed, s.completed});
      }
      series.push_back(
          {{"policy", r.policy},
           {"seed", r.seed},
           {"columns",
            {"time_s", "gpu_alloc_pct", "cpu_alloc_pct", "memory_alloc_pct", "fragment_pct",
             "frag_ratio_pct", "running", "pending", "failed", "completed"}},
           {"samples", samples}});
    }
    if (!f.metrics_csv.empty()) outputs.push_back({f.metrics_csv, {"--metrics-csv", csv}});
    if (!f.metrics_json.empty()) {
      outputs.push_back({f.metrics_json, {"--metrics-json", series.dump() + "\n"}});
    }
  }
  if (!f.report.empty()) {
    outputs.push_back({f.report, {"--report", alibaba::ReplayReportHtml(context, runs)}});
  }
  for (const auto& [path, what] : outputs) {
    if (absl::Status s = WriteFile(path, what.first, what.second); !s.ok()) return BadInput(s);
  }
  for (const alibaba::ReplayResult& r : runs) {
    std::cout << fmt::format(
        "{} seed {}: {} submitted, {} placed on arrival, {} after waiting (p50 {:.0f}s, p95 "
        "{:.0f}s), {} failed, {} pending at end; GPU allocation {:.2f}% and frag ratio {:.1f}% "
        "(time means), GPU allocation peak {:.2f}%; {:.2f}s wall\n",
        alibaba::PolicyDisplayName(r.policy), r.seed, r.submitted, r.placed_on_arrival,
        r.placed_after_wait, r.wait_p50_s, r.wait_p95_s, r.failed, r.still_pending,
        r.gpu_alloc_time_mean_pct, r.frag_ratio_time_mean_pct, r.gpu_alloc_peak_pct,
        r.wall_seconds);
  }
  return kExitOk;
}

}  // namespace

int RunSimCommand(int argc, char** argv) {
  SimFlags f;
  CLI::App app{
      "Run the scheduler core on a simulated cluster: a real trace (--nodes/--pods) or a "
      "scenario file (--scenario).\n\nExamples:\n"
      "  tessera sim --nodes DIR/openb_node_list_gpu_node.csv --pods "
      "DIR/openb_pod_list_default.csv --policy fgd --seed 42 --inflate 1.3 --summary-json "
      "out.json\n"
      "  tessera sim --nodes ... --pods ... --policies all --seeds 42-51 --report out.html\n"
      "  tessera sim --scenario tests/scenarios/gang-min-available.yaml --seed 7\n"
      "  tessera sim --swf NASA-iPSC-1993-3.1-cln.swf.gz --backfill all --summary-json out.json",
      "tessera sim"};
  app.add_option("--scenario", f.scenario,
                 "Scenario file (YAML) to run instead of a trace; takes --seed only");
  AddSwfFlags(app, f);
  app.add_option("--seed", f.seed,
                 "Seed of the run, 0 to 2^64-1 (default: 42 for a trace; the file's config.seed, "
                 "else 1, for a scenario)");
  app.add_option("--seeds", f.seeds, "Several seeds: 42-51 or 42,43,50 (a sweep)");
  app.add_option("--nodes", f.nodes, "Node list CSV (sn,cpu_milli,memory_mib,gpu,model)");
  app.add_option("--pods", f.pods, "Pod list CSV of the Alibaba GPU trace");
  app.add_option("--policy", f.policy,
                 "Placement policy: a built-in profile (fgd, fgdcpu, bestfit, packing, "
                 "clustering, dotprod, random, default, ...); default fgd");
  app.add_option("--policies", f.policies,
                 "Several policies: comma-separated, 'paper' (the paper's six) or 'all' (the "
                 "paper's six and fgdcpu)");
  app.add_option("--mode", f.mode,
                 "paper (each task placed once, nothing leaves; default) or "
                 "replay (arrivals and departures on the trace's times)")
      ->check(CLI::IsMember({"paper", "replay"}));
  app.add_option("--inflate", f.inflate,
                 "Paper mode: add clones until the GPU requests reach this multiple of the "
                 "cluster's GPUs (default 1.3; 0 = no tuning)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--expected", f.expected_dir,
                 "Paper mode: directory of the FGD artifact's analysis_*_discrete.csv (default: "
                 "fgd-expected-results/ beside --pods, when present)");
  app.add_flag("--no-expected", f.no_expected, "Paper mode: do not compare with the artifact's results");
  app.add_option("--summary-json", f.summary_json, "Write the summary as JSON");
  app.add_option("--metrics-csv", f.metrics_csv,
                 "Write the curves over arrived workload (paper) or time (replay) as CSV");
  app.add_option("--metrics-json", f.metrics_json, "The same as JSON");
  app.add_option("--samples-csv", f.samples_csv, "Paper mode: write every per-arrival sample");
  app.add_option("--report", f.report, "Write a self-contained HTML report");
  app.add_option("--sample-interval", f.sample_interval,
                 "Replay mode: simulated time between samples (default 1h)");
  app.add_option("--arrival-speedup", f.arrival_speedup,
                 "Replay and SWF: divide the trace's arrival times by this factor (run times "
                 "unchanged) to raise the load; default 1")
      ->check(CLI::Range(1e-6, 1e9));
  app.add_option("--typical-threshold", f.typical_threshold,
                 "Popularity threshold (%), in (0, 100], of the target workload M (default 95)");
  app.add_option("--threads", f.threads, "Paper mode: runs in parallel (default: one per core)")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--progress", f.progress, "Show progress on stderr even when it is not a terminal");
  app.add_flag("--no-node-shuffle", f.no_node_shuffle,
               "Paper mode: keep the node list's order instead of permuting it per seed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  if (absl::Status s = CheckFlagsApply(app, f); !s.ok()) return BadInput(s);
  if (absl::Status s = CheckNumbers(f); !s.ok()) return BadInput(s);

  if (!f.swf.empty()) return RunSwfMode(f);
  if (!f.scenario.empty()) {
    std::optional<uint64_t> seed;
    if (f.seed.has_value()) {
      absl::StatusOr<uint64_t> parsed = alibaba::ParseSeed(*f.seed, "--seed");
      if (!parsed.ok()) return BadInput(parsed.status());
      seed = *parsed;
    }
    return sim::RunScenarioCommand(f.scenario, seed, std::cout, std::cerr);
  }
  if (f.nodes.empty() || f.pods.empty()) {
    return BadInput("give --scenario FILE, --swf FILE, or both --nodes and --pods (see --help)");
  }
  if (absl::Status s = CheckOutputPaths(f); !s.ok()) return BadInput(s);
  absl::StatusOr<std::vector<std::string>> policies = ResolvePolicies(f);
  if (!policies.ok()) return BadInput(policies.status());
  absl::StatusOr<std::vector<uint64_t>> seeds = ResolveSeeds(f);
  if (!seeds.ok()) return BadInput(seeds.status());

  alibaba::TargetWorkloadOptions target;
  target.popularity_threshold_pct = f.typical_threshold;
  absl::StatusOr<std::unique_ptr<alibaba::TraceInput>> input =
      alibaba::TraceInput::Load(f.nodes, f.pods, target);
  if (!input.ok()) return BadInput(input.status());

  alibaba::ReportContext context;
  context.title =
      fmt::format("Tessera trace simulation: {} ({} mode)", (*input)->workload_name, f.mode);
  context.command = CommandLine(argc, argv);
  context.nodes_path = f.nodes;
  context.pods_path = f.pods;
  if (f.mode == "replay") return RunReplayMode(f, **input, *policies, *seeds, context);
  return RunPaperMode(f, **input, *policies, *seeds, context);
}

}  // namespace tessera::cli

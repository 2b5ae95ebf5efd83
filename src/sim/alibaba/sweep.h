// Sweep: the paper experiment for every (policy, seed) pair of a trace, on a pool of threads.
//
// Runs are independent and each is deterministic (paper_runner.h), so they may execute in any
// order on any thread: results come back in (policy, seed) order whatever the thread count. The
// TraceInput is shared read-only. Progress is reported through an atomic counter of arrivals
// that a watcher thread (the command line's progress bar) may read at any time.
// Thread-safety: RunSweep is called from one thread; it starts and joins its workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba/paper_runner.h"
#include "sim/alibaba/trace_input.h"

namespace tessera::sim::alibaba {

struct SweepOptions {
  std::vector<std::string> policies;  // built-in profile names
  std::vector<uint64_t> seeds;
  double inflate = 1.3;
  bool shuffle_nodes = true;
  bool keep_samples = false;
  int32_t threads = 1;                       // >= 1
  std::atomic<int64_t>* progress = nullptr;  // arrivals done, over all runs
};

// One run's result per (policy, seed), policies outer, seeds inner. The first failing run's
// status is returned (the other runs still finish).
absl::StatusOr<std::vector<PaperRunResult>> RunSweep(const TraceInput& input,
                                                     const SweepOptions& options);

// The number of arrivals a sweep will process (for progress bars): exactly the sum of every
// run's inflated trace size (which depends on the seed).
int64_t ExpectedArrivals(const TraceInput& input, const SweepOptions& options);

// Per-policy summary over its seeds.
struct PolicySummary {
  std::string policy;
  int32_t runs = 0;
  Curve gpu_allocation;  // medians per x
  Curve frag_amount;
  Curve frag_ratio;
  // At x = 100: median, 25% and 75% quantiles, mean and sample sd of the unallocated GPU %.
  double unallocated_median = 0, unallocated_q25 = 0, unallocated_q75 = 0;
  double unallocated_mean = 0, unallocated_sd = 0;
  double frag_amount_median = 0;  // at x = 100
  double frag_ratio_median = 0;   // at x = 100
  double failed_tasks_median = 0;
  double wall_seconds_total = 0;
};

// Groups `runs` by policy (in first-appearance order) and summarizes each.
std::vector<PolicySummary> SummarizeByPolicy(const std::vector<PaperRunResult>& runs);

// One seed: decimal digits only, 0 to 2^64-1 (no sign, no blanks). InvalidArgument names `flag`.
absl::StatusOr<uint64_t> ParseSeed(std::string_view text, std::string_view flag);

// "42-51" -> 42..51; "42,45,50" -> those; "7" -> 7; each seed as ParseSeed takes it. An empty
// list or item, a seed given twice and more than 100,000 seeds are InvalidArgument naming
// --seeds.
absl::StatusOr<std::vector<uint64_t>> ParseSeedList(const std::string& text);

}  // namespace tessera::sim::alibaba

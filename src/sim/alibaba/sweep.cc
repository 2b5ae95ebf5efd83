#include "sim/alibaba/sweep.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <thread>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sim/alibaba/inflation.h"
#include "sim/alibaba/internal/text.h"

namespace tessera::sim::alibaba {

absl::StatusOr<std::vector<PaperRunResult>> RunSweep(const TraceInput& input,
                                                     const SweepOptions& options) {
  const size_t seeds = options.seeds.size();
  const size_t total = options.policies.size() * seeds;
  std::vector<std::optional<absl::StatusOr<PaperRunResult>>> results(total);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < total; i = next.fetch_add(1)) {
      PaperRunOptions run;
      run.policy = options.policies[i / seeds];
      run.seed = options.seeds[i % seeds];
      run.inflate = options.inflate;
      run.shuffle_nodes = options.shuffle_nodes;
      run.keep_samples = options.keep_samples;
      run.progress = options.progress;
      results[i] = RunPaperExperiment(input, run);
    }
  };
  const auto threads = static_cast<size_t>(std::max(1, options.threads));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, total); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  std::vector<PaperRunResult> out;
  out.reserve(total);
  for (auto& r : results) {
    if (!r->ok()) return r->status();
    out.push_back(std::move(**r));
  }
  return out;
}

int64_t ExpectedArrivals(const TraceInput& input, const SweepOptions& options) {
  if (options.seeds.empty() || options.policies.empty()) return 0;
  // The inflated size depends on the seed's draws; the first seed's is a close estimate.
  Rng rng(options.seeds.front());
  const ArrivalOrder order =
      BuildArrivalOrder(input.pods.tasks, input.nodes.total_gpu_milli, options.inflate, rng);
  return static_cast<int64_t>(order.arrivals.size() * options.seeds.size() *
                              options.policies.size());
}

std::vector<PolicySummary> SummarizeByPolicy(const std::vector<PaperRunResult>& runs) {
  std::vector<PolicySummary> out;
  for (const PaperRunResult& r : runs) {
    if (std::none_of(out.begin(), out.end(), [&](const auto& s) { return s.policy == r.policy; })) {
      out.push_back(PolicySummary{.policy = r.policy});
    }
  }
  for (PolicySummary& s : out) {
    std::vector<Curve> alloc, frag, ratio;
    std::vector<double> unallocated, failed;
    for (const PaperRunResult& r : runs) {
      if (r.policy != s.policy) continue;
      ++s.runs;
      alloc.push_back(r.gpu_allocation);
      frag.push_back(r.frag_amount);
      ratio.push_back(r.frag_ratio);
      unallocated.push_back(100.0 - r.gpu_allocation.At(100));
      failed.push_back(static_cast<double>(r.failed_tasks));
      s.wall_seconds_total += r.wall_seconds;
    }
    s.gpu_allocation = MedianCurve(alloc);
    s.frag_amount = MedianCurve(frag);
    s.frag_ratio = MedianCurve(ratio);
    s.unallocated_median = Quantile(unallocated, 0.5);
    s.unallocated_q25 = Quantile(unallocated, 0.25);
    s.unallocated_q75 = Quantile(unallocated, 0.75);
    double sum = 0, n = 0;
    for (double v : unallocated) {
      if (!std::isnan(v)) sum += v, n += 1;
    }
    s.unallocated_mean = n > 0 ? sum / n : std::nan("");
    double sq = 0;
    for (double v : unallocated) {
      if (!std::isnan(v)) sq += (v - s.unallocated_mean) * (v - s.unallocated_mean);
    }
    s.unallocated_sd = n > 1 ? std::sqrt(sq / (n - 1)) : 0.0;
    s.frag_amount_median = s.frag_amount.At(100);
    s.frag_ratio_median = s.frag_ratio.At(100);
    s.failed_tasks_median = Quantile(failed, 0.5);
  }
  return out;
}

absl::StatusOr<std::vector<uint64_t>> ParseSeedList(const std::string& text) {
  std::vector<uint64_t> seeds;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("--seeds: {} in '{}' (use e.g. 42-51 or 42,43)", why, text));
  };
  for (std::string_view part : internal::Split(text, ',')) {
    const size_t dash = part.find('-', 1);
    int64_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!internal::ParseInt64(part, &lo) || lo < 0) return bad("not a seed");
      hi = lo;
    } else if (!internal::ParseInt64(part.substr(0, dash), &lo) ||
               !internal::ParseInt64(part.substr(dash + 1), &hi) || lo < 0 || hi < lo) {
      return bad("not a range");
    }
    if (hi - lo >= 100000) return bad("range too large");
    for (int64_t s = lo; s <= hi; ++s) seeds.push_back(static_cast<uint64_t>(s));
  }
  if (seeds.empty()) return bad("no seeds");
  return seeds;
}

}  // namespace tessera::sim::alibaba

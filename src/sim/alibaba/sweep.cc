#include "sim/alibaba/sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sim/alibaba/inflation.h"
#include "sim/alibaba/internal/text.h"
#include "tessera/common/status_macros.h"

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
  // The inflated size depends on the seed's draws (the same a run makes first), not on the
  // policy: each seed's own count, times the policies.
  int64_t per_policy = 0;
  for (uint64_t seed : options.seeds) {
    Rng rng(seed);
    per_policy += static_cast<int64_t>(
        BuildArrivalOrder(input.pods.tasks, input.nodes.total_gpu_milli, options.inflate, rng)
            .arrivals.size());
  }
  return per_policy * static_cast<int64_t>(options.policies.size());
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

absl::StatusOr<uint64_t> ParseSeed(std::string_view text, std::string_view flag) {
  uint64_t seed = 0;
  const char* end = text.data() + text.size();
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  const auto [ptr, ec] = std::from_chars(text.data(), end, seed);
  if (!digits || ec == std::errc::invalid_argument || ptr != end) {
    return absl::InvalidArgumentError(
        fmt::format("{}: not a seed: '{}' (a whole number from 0 to {})", flag, text,
                    std::numeric_limits<uint64_t>::max()));
  }
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(fmt::format("{}: seed '{}' is out of range (0 to {})", flag,
                                                  text, std::numeric_limits<uint64_t>::max()));
  }
  return seed;
}

absl::StatusOr<std::vector<uint64_t>> ParseSeedList(const std::string& text) {
  constexpr uint64_t kMaxSeeds = 100000;
  std::vector<uint64_t> seeds;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("--seeds: {} in '{}' (use e.g. 42-51 or 42,43)", why, text));
  };
  for (std::string_view part : internal::Split(text, ',')) {
    if (part.empty()) return bad("empty seed");
    const size_t dash = part.find('-', 1);
    const std::string_view first = part.substr(0, dash);
    TESSERA_ASSIGN_OR_RETURN(const uint64_t lo, ParseSeed(first, "--seeds"));
    uint64_t hi = lo;
    if (dash != std::string_view::npos) {
      TESSERA_ASSIGN_OR_RETURN(hi, ParseSeed(part.substr(dash + 1), "--seeds"));
      if (hi < lo) return bad(fmt::format("range {} ends before it starts", part));
    }
    if (hi - lo >= kMaxSeeds || seeds.size() + (hi - lo) >= kMaxSeeds) {
      return bad("too many seeds");
    }
    for (uint64_t s = lo;; ++s) {  // stops at hi without overflowing at the type's maximum
      seeds.push_back(s);
      if (s == hi) break;
    }
  }
  std::vector<uint64_t> sorted = seeds;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
    return bad(fmt::format("seed {} given twice", *dup));
  }
  return seeds;
}

}  // namespace tessera::sim::alibaba

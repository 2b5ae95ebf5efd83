// Reproduction of the FGD paper (USENIX ATC'23) on the real Alibaba trace: for each of the six
// policies, seeds 42..51 on the default trace, the median unallocated GPU % at 100% arrived
// workload must be within kUnallocatedTolerance of the artifact's median (computed from its
// analysis_allo_discrete.csv); along the whole curve (x = 0, 10, ..., 130 and 95) the median
// fragment amount F(M) must be within kFragTolerance of analysis_frag_discrete.csv and the
// fragmentation ratio within kFragRatioTolerance of analysis_frag_ratio_discrete.csv. The
// paper's ordering of the policies must hold.
//
// The same sweep runs Tessera's FGD-CPU (docs/policies/fgd-cpu.md): its median must stay at or
// below kFgdCpuMedianLimit and below FGD's. The packing bound (packing_bound.h) of each seed must
// be at most every policy's unallocated GPU % at 100 for that seed.
//
// The trace directory is $TESSERA_TRACE_DIR (the traces root, or alibaba-gpu-v2023 itself), or
// ../shared/traces or ./traces (where scripts/fetch-traces.sh puts it) relative to the source
// tree ($TESSERA_SOURCE_DIR); without it the test is skipped.
// Label "slow": about 10-70 s of CPU (70 runs of ~10,800 arrivals on 1,213 nodes).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "sim/alibaba/expected_results.h"
#include "sim/alibaba/packing_bound.h"
#include "sim/alibaba/sweep.h"
#include "sim/alibaba/trace_input.h"

namespace tessera::sim::alibaba {
namespace {

namespace fs = std::filesystem;

// The acceptance bar: the artifact's run-to-run sd at x = 100 is 0.1-0.6 points and we cannot
// replay Go's random stream, so medians over 10 seeds may differ by a few tenths.
constexpr double kUnallocatedTolerance = 0.5;
// F(M) as % of all GPUs; measured differences are at most 0.35 points anywhere on the curve.
constexpr double kFragTolerance = 0.6;
// F(M) / free GPU, %: steep between x = 80 and 95, where the policies saturate (the artifact's
// own seeds spread by several points there); measured differences are at most 1.9 points.
constexpr double kFragRatioTolerance = 3.0;
// FGD-CPU's median unallocated GPU % at 100 on the default trace: measured 4.42 (FGD 4.80).
constexpr double kFgdCpuMedianLimit = 4.60;
const int32_t kCurveChecks[] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 100, 110, 120, 130};
constexpr const char* kWorkload = "openb_pod_list_default";

std::optional<fs::path> TraceDir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("TESSERA_TRACE_DIR"); env != nullptr && *env != '\0') {
    candidates.emplace_back(fs::path(env) / "alibaba-gpu-v2023");
    candidates.emplace_back(env);
  }
  if (const char* src = std::getenv("TESSERA_SOURCE_DIR"); src != nullptr && *src != '\0') {
    candidates.emplace_back(fs::path(src) / ".." / "shared" / "traces" / "alibaba-gpu-v2023");
    candidates.emplace_back(fs::path(src) / "traces" / "alibaba-gpu-v2023");
  }
  for (const fs::path& dir : candidates) {
    if (fs::exists(dir / "openb_node_list_gpu_node.csv") &&
        fs::exists(dir / "fgd-expected-results" / "analysis_allo_discrete.csv")) {
      return dir;
    }
  }
  return std::nullopt;
}

class FgdReproductionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::optional<fs::path> dir = TraceDir();
    if (!dir) return;
    auto input = TraceInput::Load((*dir / "openb_node_list_gpu_node.csv").string(),
                                  (*dir / fmt::format("{}.csv", kWorkload)).string());
    ASSERT_TRUE(input.ok()) << input.status();
    auto expected = LoadExpectedResults((*dir / "fgd-expected-results").string());
    ASSERT_TRUE(expected.ok()) << expected.status();
    SweepOptions options;
    options.policies = AllPolicies();
    for (uint64_t seed = 42; seed <= 51; ++seed) options.seeds.push_back(seed);
    options.inflate = 1.3;
    options.threads = std::max(1u, std::thread::hardware_concurrency());
    auto runs = RunSweep(**input, options);
    ASSERT_TRUE(runs.ok()) << runs.status();
    auto bounds = ComputePackingBounds(**input, options.seeds, options.inflate);
    ASSERT_TRUE(bounds.ok()) << bounds.status();
    summaries_ = new std::vector<PolicySummary>(SummarizeByPolicy(*runs));
    runs_ = new std::vector<PaperRunResult>(std::move(*runs));
    bounds_ = new std::vector<PackingBound>(std::move(*bounds));
    expected_ = new ExpectedResults(std::move(*expected));
  }
  static void TearDownTestSuite() {
    delete summaries_;
    delete runs_;
    delete bounds_;
    delete expected_;
    summaries_ = nullptr;
    runs_ = nullptr;
    bounds_ = nullptr;
    expected_ = nullptr;
  }
  void SetUp() override {
    if (summaries_ == nullptr) {
      GTEST_SKIP() << "The Alibaba GPU trace (alibaba-gpu-v2023 with fgd-expected-results/) was "
                      "not found in $TESSERA_TRACE_DIR, ../shared/traces or ./traces beside the "
                      "source tree: run scripts/fetch-traces.sh from the source tree, or set "
                      "TESSERA_TRACE_DIR to a copy";
    }
  }

  const PolicySummary& Ours(const std::string& policy) {
    for (const PolicySummary& s : *summaries_) {
      if (s.policy == policy) return s;
    }
    ADD_FAILURE() << "no runs for " << policy;
    return summaries_->front();
  }

  static std::vector<PolicySummary>* summaries_;
  static std::vector<PaperRunResult>* runs_;
  static std::vector<PackingBound>* bounds_;
  static ExpectedResults* expected_;
};

std::vector<PolicySummary>* FgdReproductionTest::summaries_ = nullptr;
std::vector<PaperRunResult>* FgdReproductionTest::runs_ = nullptr;
std::vector<PackingBound>* FgdReproductionTest::bounds_ = nullptr;
ExpectedResults* FgdReproductionTest::expected_ = nullptr;

TEST_F(FgdReproductionTest, UnallocatedGpuAt100MatchesTheArtifact) {
  for (const std::string& policy : PaperPolicies()) {
    std::optional<Curve> theirs = expected_->Median(ExpectedMetric::kAllocation, kWorkload, policy);
    ASSERT_TRUE(theirs.has_value()) << policy;
    const double expected_unallocated = 100.0 - theirs->At(100);
    EXPECT_NEAR(Ours(policy).unallocated_median, expected_unallocated, kUnallocatedTolerance)
        << PolicyDisplayName(policy) << ": median unallocated GPU % at 100% arrived";
  }
}

TEST_F(FgdReproductionTest, FragmentAmountCurveMatchesTheArtifact) {
  for (const std::string& policy : PaperPolicies()) {
    std::optional<Curve> theirs = expected_->Median(ExpectedMetric::kFragAmount, kWorkload, policy);
    ASSERT_TRUE(theirs.has_value()) << policy;
    for (int32_t x : kCurveChecks) {
      EXPECT_NEAR(Ours(policy).frag_amount.At(x), theirs->At(x), kFragTolerance)
          << PolicyDisplayName(policy) << ": median F(M) as % of GPUs at x = " << x;
    }
  }
}

TEST_F(FgdReproductionTest, FragmentationRatioCurveMatchesTheArtifact) {
  for (const std::string& policy : PaperPolicies()) {
    std::optional<Curve> theirs = expected_->Median(ExpectedMetric::kFragRatio, kWorkload, policy);
    ASSERT_TRUE(theirs.has_value()) << policy;
    for (int32_t x : kCurveChecks) {
      EXPECT_NEAR(Ours(policy).frag_ratio.At(x), theirs->At(x), kFragRatioTolerance)
          << PolicyDisplayName(policy) << ": median fragmentation ratio % at x = " << x;
    }
  }
}

TEST_F(FgdReproductionTest, UnallocatedGpuCurveMatchesTheArtifact) {
  for (const std::string& policy : PaperPolicies()) {
    std::optional<Curve> theirs = expected_->Median(ExpectedMetric::kAllocation, kWorkload, policy);
    ASSERT_TRUE(theirs.has_value()) << policy;
    for (int32_t x : kCurveChecks) {
      EXPECT_NEAR(Ours(policy).gpu_allocation.At(x), theirs->At(x), kUnallocatedTolerance)
          << PolicyDisplayName(policy) << ": median GPU allocation % at x = " << x;
    }
  }
}

TEST_F(FgdReproductionTest, ThePapersOrderHolds) {
  // FGD < BestFit < Packing ~ Clustering < DotProd < Random.
  const double fgd = Ours("fgd").unallocated_median;
  const double bestfit = Ours("bestfit").unallocated_median;
  const double packing = Ours("packing").unallocated_median;
  const double clustering = Ours("clustering").unallocated_median;
  const double dotprod = Ours("dotprod").unallocated_median;
  const double random = Ours("random").unallocated_median;
  EXPECT_LT(fgd, bestfit);
  EXPECT_LT(bestfit, std::min(packing, clustering));
  EXPECT_LT(std::max(packing, clustering), dotprod);
  EXPECT_LT(dotprod, random);
  // FGD's headline: about 49% fewer unallocated GPUs than DotProd (290 of 6,212 GPUs).
  EXPECT_NEAR(1.0 - fgd / dotprod, 0.495, 0.06);
}

TEST_F(FgdReproductionTest, FgdCpuLeavesFewerGpusUnallocatedThanFgd) {
  const double fgd_cpu = Ours("fgdcpu").unallocated_median;
  EXPECT_LE(fgd_cpu, kFgdCpuMedianLimit);
  EXPECT_LT(fgd_cpu, Ours("fgd").unallocated_median - 0.2);
}

TEST_F(FgdReproductionTest, PackingBoundIsAtMostEveryPolicysResultForEverySeed) {
  int32_t compared = 0;
  for (const PackingBound& bound : *bounds_) {
    ASSERT_FALSE(std::isnan(bound.unallocated_pct_at_100)) << "seed " << bound.seed;
    for (const PaperRunResult& run : *runs_) {
      if (run.seed != bound.seed) continue;
      EXPECT_LE(bound.unallocated_pct_at_100, 100.0 - run.gpu_allocation.At(100))
          << PolicyDisplayName(run.policy) << ", seed " << run.seed;
      ++compared;
    }
  }
  EXPECT_EQ(compared, static_cast<int32_t>(runs_->size()));
}

}  // namespace
}  // namespace tessera::sim::alibaba

#include "sim/alibaba/expected_results.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sim::alibaba {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kAllo =
    "workload,sc_policy,tune,seed,total_gpus,0,1,2\n"
    "w,06-FGD,1.3,42,6212,0.1,1.0,2.0\n"
    "w,06-FGD,1.3,43,6212,0.3,,2.2\n"
    "w,06-FGD,1.3,44,6212,0.2,1.5,2.1\n"
    "w,99-Other,1.3,42,6212,9,9,9\n"
    "v,01-Random,1.3,42,6212,5,5,5\n";

TEST(ExpectedResultsTest, ParsesRunsAndMapsPolicyNames) {
  absl::StatusOr<std::vector<ExpectedRun>> runs = ParseExpectedCsv(kAllo, "allo.csv");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 4u);  // the unknown policy is left out
  EXPECT_EQ((*runs)[0].policy, "fgd");
  EXPECT_EQ((*runs)[0].seed, 42);
  EXPECT_DOUBLE_EQ((*runs)[0].tune, 1.3);
  EXPECT_DOUBLE_EQ((*runs)[0].curve.At(1), 1.0);
  EXPECT_FALSE((*runs)[1].curve.Has(1));
  EXPECT_FALSE((*runs)[0].curve.Has(3));
  EXPECT_EQ((*runs)[3].policy, "random");
}

TEST(ExpectedResultsTest, MedianOverSeeds) {
  ExpectedResults results;
  results.allocation = *ParseExpectedCsv(kAllo, "allo.csv");
  std::optional<Curve> m = results.Median(ExpectedMetric::kAllocation, "w", "fgd");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->At(0), 0.2);
  EXPECT_DOUBLE_EQ(m->At(1), 1.25);
  EXPECT_FALSE(results.Median(ExpectedMetric::kAllocation, "w", "bestfit").has_value());
  EXPECT_EQ(results.Workloads(), (std::vector<std::string>{"v", "w"}));
}

TEST(ExpectedResultsTest, FragFileWithoutTotalGpusColumn) {
  absl::StatusOr<std::vector<ExpectedRun>> runs =
      ParseExpectedCsv("workload,sc_policy,tune,seed,0,1\nw,05-BestFit,1.3,42,14.1,14.0\n", "f");
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_DOUBLE_EQ((*runs)[0].curve.At(0), 14.1);
  EXPECT_EQ((*runs)[0].policy, "bestfit");
}

TEST(ExpectedResultsTest, BadInputNamesLineAndField) {
  EXPECT_THAT(ParseExpectedCsv("a,b\n", "f.csv").status().message(), HasSubstr("f.csv:1: header"));
  EXPECT_THAT(ParseExpectedCsv("workload,sc_policy,tune,seed,0\nw,06-FGD,1.3,x,1\n", "f.csv")
                  .status()
                  .message(),
              HasSubstr("f.csv:2: seed: not an integer"));
  EXPECT_THAT(ParseExpectedCsv("workload,sc_policy,tune,seed,0\nw,06-FGD,1.3,1,abc\n", "f.csv")
                  .status()
                  .message(),
              HasSubstr("f.csv:2: column 0: not a number"));
  EXPECT_THAT(
      ParseExpectedCsv("workload,sc_policy,tune,seed,0\nw,06-FGD\n", "f.csv").status().message(),
      HasSubstr("expected 5 fields"));
}

TEST(ExpectedResultsTest, PolicyNames) {
  EXPECT_EQ(PolicyFromArtifactName("04-GpuPacking"), "packing");
  EXPECT_EQ(PolicyDisplayName("clustering"), "GpuClustering");
  EXPECT_EQ(PaperPolicies().size(), 6u);
}

}  // namespace
}  // namespace tessera::sim::alibaba

#include "core/resources.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

Resources Make(int64_t cpu, int64_t memory, int64_t gpu, int64_t gpu_memory = 0) {
  Resources r;
  r.cpu = cpu;
  r.memory = memory;
  r.gpu = gpu;
  r.gpu_memory = gpu_memory;
  return r;
}

TEST(ResourcesTest, AddAndSubtractFieldWise) {
  Resources a = Make(1000, 2 * kGi, 500, kGi);
  a.extended["rdma/hca"] = 1;
  Resources b = Make(500, kGi, 1000);
  b.extended["rdma/hca"] = 2;
  b.extended["ephemeral-storage"] = 10;

  const Resources sum = a + b;
  EXPECT_EQ(sum.cpu, 1500);
  EXPECT_EQ(sum.memory, 3 * kGi);
  EXPECT_EQ(sum.gpu, 1500);
  EXPECT_EQ(sum.gpu_memory, kGi);
  EXPECT_EQ(sum.extended.at("rdma/hca"), 3);
  EXPECT_EQ(sum.extended.at("ephemeral-storage"), 10);
  EXPECT_EQ(sum - b, a);
}

TEST(ResourcesTest, SubtractingToZeroDropsExtendedEntries) {
  Resources a;
  a.extended["rdma/hca"] = 2;
  Resources b = a;
  a -= b;
  EXPECT_TRUE(a.extended.empty());
  EXPECT_EQ(a, Resources{});
  EXPECT_TRUE(a.IsZero());
}

TEST(ResourcesTest, SumsSaturateInsteadOfOverflowing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Resources big = Make(kMax, kMax, 0);
  big.extended["x"] = kMax;
  Resources sum = big + Make(1, 5, 0);
  sum.extended["x"] = kMax;
  sum += big;
  EXPECT_EQ(sum.cpu, kMax);
  EXPECT_EQ(sum.memory, kMax);
  EXPECT_EQ(sum.extended.at("x"), kMax);
  EXPECT_EQ((Make(kMin, 0, 0) - Make(1, 0, 0)).cpu, kMin);
  EXPECT_EQ((Make(0, 0, 0) - Make(kMin, 0, 0)).cpu, kMax);
}

struct FitsCase {
  std::string name;
  Resources request;
  Resources limit;
  bool want;
};

Resources WithExtended(Resources r, std::string name, int64_t value) {
  r.extended[name] = value;
  return r;
}

class FitsInTest : public ::testing::TestWithParam<FitsCase> {};
TEST_P(FitsInTest, ComparesEveryQuantity) {
  EXPECT_EQ(GetParam().request.FitsIn(GetParam().limit), GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    Resources, FitsInTest,
    ::testing::Values(
        FitsCase{"equal", Make(1000, kGi, 1000, kGi), Make(1000, kGi, 1000, kGi), true},
        FitsCase{"smaller", Make(500, 1, 0), Make(1000, kGi, 1000), true},
        FitsCase{"zero_in_zero", Resources{}, Resources{}, true},
        FitsCase{"cpu_over", Make(1001, 0, 0), Make(1000, kGi, 0), false},
        FitsCase{"memory_over", Make(0, kGi + 1, 0), Make(1000, kGi, 0), false},
        FitsCase{"gpu_over", Make(0, 0, 1001), Make(0, 0, 1000), false},
        FitsCase{"gpu_memory_over", Make(0, 0, 0, 2), Make(0, 0, 0, 1), false},
        FitsCase{"extended_missing_in_limit", WithExtended({}, "rdma/hca", 1), Resources{}, false},
        FitsCase{"extended_zero_missing_in_limit", WithExtended({}, "rdma/hca", 0), Resources{},
                 true},
        FitsCase{"extended_fits", WithExtended({}, "rdma/hca", 1), WithExtended({}, "rdma/hca", 1),
                 true},
        FitsCase{"extended_over", WithExtended({}, "rdma/hca", 2), WithExtended({}, "rdma/hca", 1),
                 false},
        FitsCase{"negative_limit_exceeded_by_missing", Resources{},
                 WithExtended({}, "rdma/hca", -1), false}),
    [](const auto& info) { return info.param.name; });

TEST(ResourcesTest, IsZero) {
  EXPECT_TRUE(Resources{}.IsZero());
  EXPECT_TRUE(WithExtended({}, "x", 0).IsZero());
  EXPECT_FALSE(WithExtended({}, "x", 1).IsZero());
  EXPECT_FALSE(Make(0, 0, 1).IsZero());
  EXPECT_FALSE(Make(0, 0, 0, 1).IsZero());
}

TEST(ResourcesTest, ToStringUsesEdgeNotationAndSkipsZeros) {
  EXPECT_EQ(Make(8000, 64 * kGi, 4000).ToString(), "cpu=8, memory=64Gi, gpu=4");
  EXPECT_EQ(WithExtended(Make(500, 0, 500, 16 * kGi), "rdma/hca", 1).ToString(),
            "cpu=500m, gpu=0.5, gpu_memory=16Gi, rdma/hca=1");
  EXPECT_EQ(Resources{}.ToString(), "none");
  EXPECT_EQ(Make(-1000, 0, 0).ToString(), "cpu=-1");
}

}  // namespace
}  // namespace tessera

#include "sim/scenario/name_range.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::sim {
namespace {

using Names = std::vector<std::string>;

TEST(ExpandNameRangesTest, ExpandsRanges) {
  struct Case {
    std::string pattern;
    Names want;
  };
  const Case cases[] = {
      {"gpu-0", {"gpu-0"}},
      {"gpu-{0..3}", {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}},
      {"n{8..10}x", {"n8x", "n9x", "n10x"}},
      {"r{0..1}-n{0..1}", {"r0-n0", "r0-n1", "r1-n0", "r1-n1"}},
      {"n{08..10}", {"n08", "n09", "n10"}},
      {"{5..5}", {"5"}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Names> got = ExpandNameRanges(c.pattern);
    ASSERT_TRUE(got.ok()) << c.pattern << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.pattern;
  }
}

TEST(ExpandNameRangesTest, RejectsMalformedRanges) {
  for (const char* pattern : {"gpu-{3..1}", "gpu-{0..}", "gpu-{a..b}", "gpu-{0..3", "gpu-0}",
                              "gpu-{-1..2}", "gpu-{0,1}", "gpu-{}"}) {
    EXPECT_FALSE(ExpandNameRanges(pattern).ok()) << pattern;
  }
}

TEST(ExpandNameRangesTest, RefusesTooManyNames) {
  EXPECT_FALSE(ExpandNameRanges("n{0..99}-{0..99}", 5000).ok());
  EXPECT_TRUE(ExpandNameRanges("n{0..99}-{0..49}", 5000).ok());
  EXPECT_FALSE(ExpandNameRanges("n{0..9223372036854775806}").ok());
}

}  // namespace
}  // namespace tessera::sim

#include "sched/plugins/basic/gang.h"

#include "gtest/gtest.h"

namespace tessera {
namespace {

using Code = SchedStatus::Code;

struct GangCase {
  int32_t min_available;
  int32_t reserved;
  int32_t remaining;
  Code code;
};

class GangTest : public ::testing::TestWithParam<GangCase> {};

TEST_P(GangTest, Permit) {
  const GangCase& c = GetParam();
  Gang gang;
  const SchedStatus status = gang.Permit({c.min_available, c.reserved, c.remaining});
  EXPECT_EQ(status.code(), c.code) << c.min_available << "/" << c.reserved << "/" << c.remaining;
  if (c.code == Code::kUnschedulable) {
    ASSERT_NE(status.reason(), nullptr);
    EXPECT_EQ(status.reason()->code, "GangIncomplete");
    EXPECT_EQ(status.reason()->detail, "gang incomplete");
  } else {
    EXPECT_EQ(status.reason(), nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GangTest,
                         ::testing::Values(
                             // {min_available, reserved, remaining, verdict}
                             GangCase{1, 1, 0, Code::kSuccess},        // a single task
                             GangCase{4, 4, 0, Code::kSuccess},        // complete
                             GangCase{4, 4, 3, Code::kSuccess},        // beyond the gang: elastic
                             GangCase{4, 5, 0, Code::kSuccess},        // more than needed
                             GangCase{4, 1, 3, Code::kWait},           // exactly enough left
                             GangCase{4, 3, 5, Code::kWait},           // more than enough left
                             GangCase{4, 0, 4, Code::kWait},           // nothing reserved yet
                             GangCase{4, 2, 1, Code::kUnschedulable},  // cannot complete
                             GangCase{4, 0, 0, Code::kUnschedulable},
                             GangCase{1, 0, 0, Code::kUnschedulable}));

TEST(GangTest, FactoryRejectsArguments) {
  EXPECT_TRUE(Gang::New({}, Handle{}).ok());
  EXPECT_EQ(Gang::New({{"timeout", "30s"}}, Handle{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera

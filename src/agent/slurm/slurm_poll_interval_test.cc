#include "agent/slurm/slurm_poll_interval.h"

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

constexpr SlurmPollIntervals kIntervals{.active = Duration(200), .idle = Duration(1000)};

TEST(SlurmPollIntervalTest, ShortWhileTesserasJobsAreOutstandingLongWhenNone) {
  SlurmPollInterval interval(kIntervals);
  EXPECT_EQ(interval.Next(/*outstanding=*/false, /*failed=*/false, Duration(5)), Duration(1000));
  EXPECT_EQ(interval.Next(true, false, Duration(5)), Duration(200));
  EXPECT_EQ(interval.Next(true, false, Duration(0)), Duration(200));
  EXPECT_EQ(interval.Next(false, false, Duration(5)), Duration(1000));
}

TEST(SlurmPollIntervalTest, ASlowReadWaitsAsLongAsItTookButNoLongerThanIdle) {
  SlurmPollInterval interval(kIntervals);
  EXPECT_EQ(interval.Next(true, false, Duration(350)), Duration(350));
  EXPECT_EQ(interval.Next(true, false, Duration(5000)), Duration(1000));
  EXPECT_EQ(interval.Next(true, false, Duration(10)), Duration(200));
}

TEST(SlurmPollIntervalTest, FailuresDoubleTheWaitUpToIdleAndASuccessResetsIt) {
  SlurmPollInterval interval(kIntervals);
  EXPECT_EQ(interval.Next(true, /*failed=*/true, Duration(1)), Duration(200));
  EXPECT_EQ(interval.Next(true, true, Duration(1)), Duration(400));
  EXPECT_EQ(interval.Next(true, true, Duration(1)), Duration(800));
  EXPECT_EQ(interval.Next(true, true, Duration(1)), Duration(1000));
  EXPECT_EQ(interval.Next(true, true, Duration(1)), Duration(1000));
  EXPECT_EQ(interval.Next(true, false, Duration(1)), Duration(200));
}

TEST(SlurmPollIntervalTest, AFailureAfterIdleStaysIdle) {
  SlurmPollInterval interval(kIntervals);
  EXPECT_EQ(interval.Next(false, false, Duration(1)), Duration(1000));
  EXPECT_EQ(interval.Next(true, true, Duration(1)), Duration(1000));
}

}  // namespace
}  // namespace tessera::agent

#include "server/auth/rate_limiter.h"

#include "gtest/gtest.h"

namespace tessera::server {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiterTest, BurstThenRefillAtRate) {
  ManualClock clock(TimePoint{milliseconds{5'000}});
  RateLimiter limiter({.rate_per_second = 2, .burst = 3}, &clock);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("a").ok()) << i;
  Duration retry_after{0};
  absl::Status refused = limiter.Admit("a", &retry_after);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(retry_after, milliseconds{500});
  EXPECT_EQ(refused.message(), "rate limit exceeded for tenant a; retry in 500 ms");

  clock.Set(clock.Now() + milliseconds{499});
  EXPECT_FALSE(limiter.Admit("a").ok());
  clock.Set(clock.Now() + milliseconds{1});
  EXPECT_TRUE(limiter.Admit("a").ok());
  EXPECT_FALSE(limiter.Admit("a").ok());
}

TEST(RateLimiterTest, RetryAfterTheHintIsAdmitted) {
  ManualClock clock;
  RateLimiter limiter({.rate_per_second = 3, .burst = 1}, &clock);
  ASSERT_TRUE(limiter.Admit("a").ok());
  for (int i = 0; i < 20; ++i) {
    Duration retry_after{0};
    ASSERT_FALSE(limiter.Admit("a", &retry_after).ok());
    EXPECT_GT(retry_after, Duration{0});
    clock.Set(clock.Now() + retry_after);
    EXPECT_TRUE(limiter.Admit("a").ok()) << i;
  }
}

TEST(RateLimiterTest, TenantsHaveTheirOwnBuckets) {
  ManualClock clock;
  RateLimiter limiter({.rate_per_second = 1, .burst = 1}, &clock);
  EXPECT_TRUE(limiter.Admit("a").ok());
  EXPECT_FALSE(limiter.Admit("a").ok());
  EXPECT_TRUE(limiter.Admit("b").ok());
}

TEST(RateLimiterTest, BucketNeverHoldsMoreThanBurst) {
  ManualClock clock;
  RateLimiter limiter({.rate_per_second = 10, .burst = 2}, &clock);
  clock.Set(clock.Now() + std::chrono::hours{1});
  EXPECT_TRUE(limiter.Admit("a").ok());
  EXPECT_TRUE(limiter.Admit("a").ok());
  EXPECT_FALSE(limiter.Admit("a").ok());
}

TEST(RateLimiterTest, NonPositiveRateIsUnlimited) {
  ManualClock clock;
  RateLimiter limiter({.rate_per_second = 0, .burst = 0}, &clock);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Admit("a").ok());
}

}  // namespace
}  // namespace tessera::server

#include "server/auth/rate_limiter.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "fmt/format.h"

namespace tessera::server {

RateLimiter::RateLimiter(RateLimit limit, const Clock* clock) : limit_(limit), clock_(clock) {}

absl::Status RateLimiter::Admit(std::string_view tenant, Duration* retry_after) {
  if (limit_.rate_per_second <= 0) return absl::OkStatus();
  const TimePoint now = clock_->Now();
  std::lock_guard lock(mu_);
  auto [it, inserted] =
      buckets_.try_emplace(std::string(tenant), Bucket{.tokens = limit_.burst, .refilled = now});
  Bucket& bucket = it->second;
  if (now > bucket.refilled) {
    const double seconds = std::chrono::duration<double>(now - bucket.refilled).count();
    bucket.tokens = std::min(limit_.burst, bucket.tokens + seconds * limit_.rate_per_second);
    bucket.refilled = now;
  }
  // The tolerance absorbs rounding, so that a retry after the hint below is admitted.
  if (bucket.tokens >= 1 - 1e-9) {
    bucket.tokens -= 1;
    return absl::OkStatus();
  }
  // Whole milliseconds, rounded up, so that retrying after the hint always succeeds.
  const Duration wait{
      static_cast<int64_t>(std::ceil((1 - bucket.tokens) / limit_.rate_per_second * 1000))};
  if (retry_after != nullptr) *retry_after = wait;
  return absl::ResourceExhaustedError(
      fmt::format("rate limit exceeded for tenant {}; retry in {} ms", tenant, wait.count()));
}

}  // namespace tessera::server

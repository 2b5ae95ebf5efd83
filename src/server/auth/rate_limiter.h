// RateLimiter: one token bucket per tenant, so that no tenant's burst of requests starves the
// others (the API answers 429 / RESOURCE_EXHAUSTED with a retry hint).
//
// Each tenant's bucket holds up to `burst` tokens and refills at `rate_per_second`; a request
// takes one token. Buckets are created on first use and start full. Time comes from the injected
// Clock, so tests move it by hand.
//
// Errors: Admit returns ResourceExhausted("rate limit exceeded for tenant T; retry in N ms")
// when the bucket is empty; `retry_after` then says how long until one token is back.
// Thread-safety: Admit may be called concurrently.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "tessera/common/clock.h"

namespace tessera::server {

struct RateLimit {
  double rate_per_second = 50;  // sustained requests per second per tenant; <= 0: unlimited
  double burst = 100;           // bucket size
};

class RateLimiter {
 public:
  // `clock` outlives the RateLimiter.
  RateLimiter(RateLimit limit, const Clock* clock);

  // Takes one token from `tenant`'s bucket. On ResourceExhausted, *retry_after (when not null)
  // is the wait until a token is back.
  absl::Status Admit(std::string_view tenant, Duration* retry_after = nullptr);

 private:
  struct Bucket {
    double tokens = 0;
    TimePoint refilled{};
  };

  const RateLimit limit_;
  const Clock* const clock_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_;
};

}  // namespace tessera::server

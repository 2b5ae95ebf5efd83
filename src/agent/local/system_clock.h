// SystemClock: the real wall clock behind tessera::Clock, for the agent's edge components.
//
// Milliseconds since the Unix epoch from std::chrono::system_clock, held non-decreasing: a step
// of the system clock backwards reads as a pause, never as time running back (deadlines that
// a task's state file persists across restarts are wall-clock instants, so a monotonic clock
// whose epoch is the boot would not do). Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "tessera/common/clock.h"

namespace tessera::agent {

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override {
    const int64_t now =
        std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    int64_t last = last_.load(std::memory_order_relaxed);
    while (now > last && !last_.compare_exchange_weak(last, now, std::memory_order_relaxed)) {
    }
    return TimePoint(Duration(now > last ? now : last));
  }

  // One instance for the process.
  static const SystemClock& Get() {
    static const SystemClock* const kClock = new SystemClock();
    return *kClock;
  }

 private:
  mutable std::atomic<int64_t> last_{0};
};

}  // namespace tessera::agent

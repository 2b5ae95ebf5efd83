// Clock: the only source of time for the scheduler core.
//
// Core code never calls std::chrono::*::now(); it receives a Clock. The server wires a
// SystemClock, the simulator a SimClock whose time moves only when its event loop advances it.
// Time is kept in milliseconds since an epoch (the Unix epoch for the system clock, the start of
// the run for a simulation). Implementations must be safe to call from any thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace tessera {

// A duration in milliseconds; the edges convert from seconds or "1h30m" strings.
using Duration = std::chrono::milliseconds;
// An instant: milliseconds since the clock's epoch.
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

class Clock {
 public:
  virtual ~Clock() = default;
  // The current instant. Monotonic non-decreasing for every implementation.
  virtual TimePoint Now() const = 0;
};

// A clock that is set explicitly. Used by the simulator and by tests.
// Not thread-safe: the owner of the simulation advances it from one thread.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint{}) : now_(start) {}
  TimePoint Now() const override { return now_; }
  // REQUIRES: t >= Now().
  void Set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

}  // namespace tessera

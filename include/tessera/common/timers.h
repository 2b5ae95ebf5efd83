// Timers: wake-ups at an instant of a Clock's time, so that a loop takes both its time and its
// wake-ups from one source and runs alike on real and on simulated time. Two implementations:
// TimerThread (core/timer_thread.h) fires on its own thread as real time passes; SimulatedClock
// (tessera/common/simulated_clock.h) fires when its owner moves the time.
//
// Thread-safety: Arm and Cancel may be called from any thread, from within a callback too.
// Callbacks run one at a time on the implementation's firing thread (TimerThread's thread;
// SimulatedClock's owner, inside Set or Advance), with no lock of the implementation held.
#pragma once

#include <cstdint>
#include <functional>

#include "tessera/common/clock.h"

namespace tessera {

using TimerId = uint64_t;  // never 0

class Timers {
 public:
  virtual ~Timers() = default;
  // Runs `fire` once, when the time reads `at` or later. Never runs it from within Arm: a timer
  // armed for an instant already past fires at the implementation's next chance.
  virtual TimerId Arm(TimePoint at, std::function<void()> fire) = 0;
  // Once Cancel returns, the timer's callback will not start, and a callback of it already
  // running on another thread has returned (so do not cancel while holding a lock that the
  // callback takes). From within the timer's own callback it returns at once. An id that fired
  // or was cancelled is ignored.
  virtual void Cancel(TimerId id) = 0;
};

}  // namespace tessera

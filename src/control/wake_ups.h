// WakeUps: the timers an event loop has armed, so that the loop takes its wake-ups from the
// clock's Timers (tessera/common/timers.h) instead of waiting on real time, and cancels what is
// left when it stops. A fired timer only posts its wake-up's number to the loop (`post`); the
// loop then calls Handled and does whatever the wake-up was for (a scheduling cycle).
//
// Not thread-safe: owned by the loop's thread (or its owner while the loop does not run).
// `post` is called on the timers' firing thread; `timers` outlives this.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "tessera/common/timers.h"

namespace tessera::control {

class WakeUps {
 public:
  WakeUps(Timers& timers, std::function<void(uint64_t wake)> post);

  // Arms a wake-up at `at`; returns its number (never 0).
  uint64_t At(TimePoint at);
  // Arms the periodic wake-up at now + interval unless it is armed already.
  void ArmPeriodic(TimePoint now, Duration interval);
  // The loop has handled wake-up `wake`; when it was the periodic one, that one is disarmed.
  void Handled(uint64_t wake);
  // Cancels every wake-up not handled yet; once it returns, `post` runs no more for them.
  void CancelAll();

 private:
  Timers& timers_;
  std::function<void(uint64_t)> post_;
  std::map<uint64_t, TimerId> armed_;  // wake-up → timer, until handled
  uint64_t next_ = 1;
  uint64_t periodic_ = 0;  // 0: not armed
};

}  // namespace tessera::control

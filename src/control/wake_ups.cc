#include "control/wake_ups.h"

#include <utility>

namespace tessera::control {

WakeUps::WakeUps(Timers& timers, std::function<void(uint64_t)> post)
    : timers_(timers), post_(std::move(post)) {}

uint64_t WakeUps::At(TimePoint at) {
  const uint64_t wake = next_++;
  armed_[wake] = timers_.Arm(at, [this, wake] { post_(wake); });
  return wake;
}

void WakeUps::ArmPeriodic(TimePoint now, Duration interval) {
  if (periodic_ == 0) periodic_ = At(now + interval);
}

void WakeUps::Handled(uint64_t wake) {
  armed_.erase(wake);
  if (wake == periodic_) periodic_ = 0;
}

void WakeUps::CancelAll() {
  for (const auto& [wake, timer] : armed_) timers_.Cancel(timer);
  armed_.clear();
  periodic_ = 0;
}

}  // namespace tessera::control

// SimulatedClock: a Clock with Timers (tessera/common/timers.h) whose time moves only when its
// owner sets it: simulated time for tests and simulations of the control plane.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "tessera/common/clock.h"
#include "tessera/common/timers.h"

namespace tessera {

// A clock whose time moves only when its owner sets it, with timers: simulated time for tests
// and simulations of the control plane. Now, Arm and Cancel: any thread. Set and Advance: one
// thread at a time (the owner); the timers due by the new time fire on it, in time order (ties
// in arm order), and Now() reads each timer's instant while it fires. A timer armed for an
// instant already reached fires at the next Set or Advance (Advance(Duration::zero()) too).
class SimulatedClock final : public Clock, public Timers {
 public:
  explicit SimulatedClock(TimePoint start = TimePoint{})
      : now_(start.time_since_epoch().count()) {}

  TimePoint Now() const override {
    return TimePoint(Duration(now_.load(std::memory_order_acquire)));
  }
  // Moves the time to `t`, firing the timers due by then. REQUIRES: t >= Now().
  void Set(TimePoint t) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!timers_.empty() && timers_.begin()->first.first <= t) {
      auto timer = timers_.extract(timers_.begin());
      const auto [at, id] = timer.key();
      armed_.erase(id);
      if (at > Now()) Store(at);
      firing_ = id;
      firing_thread_ = std::this_thread::get_id();
      lock.unlock();
      timer.mapped()();
      lock.lock();
      firing_ = 0;
      fired_.notify_all();
    }
    Store(t);
  }
  void Advance(Duration d) { Set(Now() + d); }

  // The instant of the earliest timer armed and not fired; nullopt when none is. Any thread.
  std::optional<TimePoint> NextDue() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (timers_.empty()) return std::nullopt;
    return timers_.begin()->first.first;
  }

  TimerId Arm(TimePoint at, std::function<void()> fire) override {
    std::lock_guard<std::mutex> lock(mu_);
    const TimerId id = next_id_++;
    timers_.emplace(std::make_pair(at, id), std::move(fire));
    armed_.emplace(id, at);
    return id;
  }

  void Cancel(TimerId id) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = armed_.find(id); it != armed_.end()) {
      timers_.erase({it->second, id});
      armed_.erase(it);
      return;
    }
    if (firing_ == id && firing_thread_ == std::this_thread::get_id()) return;
    fired_.wait(lock, [&] { return firing_ != id; });
  }

 private:
  void Store(TimePoint t) { now_.store(t.time_since_epoch().count(), std::memory_order_release); }

  std::atomic<int64_t> now_;
  mutable std::mutex mu_;
  std::condition_variable fired_;  // a callback returned
  std::map<std::pair<TimePoint, TimerId>, std::function<void()>> timers_;  // in due order
  std::map<TimerId, TimePoint> armed_;                                      // id → instant
  TimerId next_id_ = 1;
  TimerId firing_ = 0;  // the timer whose callback runs now, on firing_thread_
  std::thread::id firing_thread_;
};

}  // namespace tessera

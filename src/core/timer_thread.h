// TimerThread: Timers (tessera/common/timers.h) over a clock that follows real time, such as the
// system clock: one thread keeps the armed timers in due order, sleeps in real time until the
// first is due by the clock, and runs the callbacks there, one at a time. Cancel from another
// thread waits for a callback of that timer already running (Timers::Cancel).
//
// The destructor stops the thread and joins it; timers still armed then never fire.
// Thread-safety: as Timers; the clock outlives this.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "tessera/common/timers.h"

namespace tessera {

class TimerThread final : public Timers {
 public:
  explicit TimerThread(const Clock& clock);
  ~TimerThread() override;
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  TimerId Arm(TimePoint at, std::function<void()> fire) override;
  void Cancel(TimerId id) override;

 private:
  void Run();

  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable wake_;   // a timer armed, or stopping
  std::condition_variable fired_;  // a callback returned
  std::map<std::pair<TimePoint, TimerId>, std::function<void()>> timers_;  // due order
  std::map<TimerId, TimePoint> armed_;                                      // id → instant
  TimerId next_id_ = 1;
  TimerId firing_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace tessera

#include "core/timer_thread.h"

namespace tessera {

TimerThread::TimerThread(const Clock& clock) : clock_(clock), thread_([this] { Run(); }) {}

TimerThread::~TimerThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

TimerId TimerThread::Arm(TimePoint at, std::function<void()> fire) {
  TimerId id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    timers_.emplace(std::make_pair(at, id), std::move(fire));
    armed_.emplace(id, at);
  }
  wake_.notify_all();
  return id;
}

void TimerThread::Cancel(TimerId id) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = armed_.find(id); it != armed_.end()) {
    timers_.erase({it->second, id});
    armed_.erase(it);
    return;
  }
  if (std::this_thread::get_id() == thread_.get_id()) return;  // from a callback
  fired_.wait(lock, [&] { return firing_ != id; });
}

void TimerThread::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (timers_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const TimePoint at = timers_.begin()->first.first;
    if (const TimePoint now = clock_.Now(); at > now) {
      wake_.wait_for(lock, at - now);  // then the clock is read again
      continue;
    }
    auto timer = timers_.extract(timers_.begin());
    firing_ = timer.key().second;
    armed_.erase(firing_);
    lock.unlock();
    timer.mapped()();
    lock.lock();
    firing_ = 0;
    fired_.notify_all();
  }
}

}  // namespace tessera

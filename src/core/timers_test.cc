// Timers: SimulatedClock (fires as its owner moves the time) and TimerThread (fires in real time).
#include <chrono>
#include <future>
#include <vector>

#include "core/timer_thread.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/common/simulated_clock.h"
#include "tessera/common/timers.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;

TimePoint At(int64_t ms) { return TimePoint(Duration(ms)); }

// Only a guard against a hang: nothing here depends on how long a wait takes.
constexpr std::chrono::seconds kHangGuard{30};

TEST(SimulatedClockTest, FireInTimeOrderTiesInArmOrderEachAtItsInstant) {
  SimulatedClock clock;
  std::vector<std::pair<int, int64_t>> fired;  // (timer, Now() while it fired)
  auto note = [&](int timer) {
    return [&, timer] { fired.emplace_back(timer, clock.Now().time_since_epoch().count()); };
  };
  clock.Arm(At(30), note(1));
  clock.Arm(At(10), note(2));
  clock.Arm(At(30), note(3));
  clock.Arm(At(50), note(4));
  clock.Set(At(20));
  EXPECT_THAT(fired, ElementsAre(std::make_pair(2, 10)));
  EXPECT_EQ(clock.Now(), At(20));
  clock.Advance(Duration(20));
  EXPECT_THAT(fired, ElementsAre(std::make_pair(2, 10), std::make_pair(1, 30),
                                 std::make_pair(3, 30)));
  EXPECT_EQ(clock.Now(), At(40));
}

TEST(SimulatedClockTest, NextDueIsTheEarliestTimerStillArmed) {
  SimulatedClock clock;
  EXPECT_EQ(clock.NextDue(), std::nullopt);
  const TimerId early = clock.Arm(At(10), [] {});
  clock.Arm(At(30), [] {});
  EXPECT_EQ(clock.NextDue(), At(10));
  clock.Cancel(early);
  EXPECT_EQ(clock.NextDue(), At(30));
  clock.Set(At(30));  // fired
  EXPECT_EQ(clock.NextDue(), std::nullopt);
}

TEST(SimulatedClockTest, CancelledTimerNeverFires) {
  SimulatedClock clock;
  std::vector<int> fired;
  const TimerId first = clock.Arm(At(10), [&] { fired.push_back(1); });
  clock.Arm(At(10), [&] { fired.push_back(2); });
  clock.Cancel(first);
  clock.Set(At(100));
  EXPECT_THAT(fired, ElementsAre(2));
  clock.Cancel(first);  // already gone: ignored
}

TEST(SimulatedClockTest, CallbackMayRearmAndCancelItself) {
  SimulatedClock clock;
  std::vector<int64_t> fired;
  std::function<void()> tick;
  TimerId id = 0;
  tick = [&] {
    clock.Cancel(id);  // its own id, while it fires: returns at once
    fired.push_back(clock.Now().time_since_epoch().count());
    if (fired.size() < 3) id = clock.Arm(clock.Now() + Duration(10), tick);
  };
  id = clock.Arm(At(10), tick);
  clock.Set(At(100));  // the re-armed timers are due by 100 too: all fire within this Set
  EXPECT_THAT(fired, ElementsAre(10, 20, 30));
}

TEST(SimulatedClockTest, ATimerArmedInThePastFiresAtTheNextAdvance) {
  SimulatedClock clock(At(100));
  bool fired = false;
  clock.Arm(At(50), [&] { fired = true; });
  EXPECT_FALSE(fired);  // Arm never runs the callback
  clock.Advance(Duration::zero());
  EXPECT_TRUE(fired);
  EXPECT_EQ(clock.Now(), At(100));
}

TEST(TimerThreadTest, FiresOnceTheClockReachesTheInstant) {
  SimulatedClock clock(At(1'000));
  TimerThread timers(clock);
  std::promise<TimePoint> fired;
  timers.Arm(At(900), [&] { fired.set_value(clock.Now()); });  // already due
  std::future<TimePoint> done = fired.get_future();
  ASSERT_EQ(done.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_EQ(done.get(), At(1'000));
}

TEST(TimerThreadTest, CancelledTimerNeverFiresAndLaterOnesStillDo) {
  SimulatedClock clock(At(1'000));
  TimerThread timers(clock);
  std::promise<void> later;
  bool cancelled_fired = false;  // written on the timer thread, read after `later` fired
  std::promise<void> hold;       // keeps the timer thread busy until the cancel is done
  std::shared_future<void> held = hold.get_future().share();
  timers.Arm(At(0), [held] { held.wait(); });
  const TimerId cancelled = timers.Arm(At(500), [&] { cancelled_fired = true; });
  timers.Arm(At(600), [&] { later.set_value(); });
  timers.Cancel(cancelled);
  hold.set_value();
  std::future<void> done = later.get_future();
  ASSERT_EQ(done.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_FALSE(cancelled_fired);
}

TEST(TimerThreadTest, CancelWaitsForARunningCallback) {
  SimulatedClock clock(At(1'000));
  TimerThread timers(clock);
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> finished{false};
  const TimerId id = timers.Arm(At(0), [&, released] {
    started.set_value();
    released.wait();
    finished = true;
  });
  std::future<void> running = started.get_future();
  ASSERT_EQ(running.wait_for(kHangGuard), std::future_status::ready);
  std::future<void> cancel = std::async(std::launch::async, [&] { timers.Cancel(id); });
  release.set_value();
  ASSERT_EQ(cancel.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_TRUE(finished);  // Cancel returned only after the callback did
}

TEST(TimerThreadTest, TimersStillArmedAtDestructionNeverFire) {
  SimulatedClock clock(At(0));
  bool fired = false;
  {
    TimerThread timers(clock);
    timers.Arm(At(1'000'000), [&] { fired = true; });
  }
  EXPECT_FALSE(fired);
}

}  // namespace
}  // namespace tessera

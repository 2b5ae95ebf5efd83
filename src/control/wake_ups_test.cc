#include "control/wake_ups.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::control {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TimePoint At(int64_t ms) { return TimePoint(Duration(ms)); }

TEST(WakeUpsTest, PostsEachWakeUpWhenTheClockReachesIt) {
  SimulatedClock clock;
  std::vector<uint64_t> posted;
  WakeUps wake_ups(clock, [&](uint64_t wake) { posted.push_back(wake); });
  const uint64_t late = wake_ups.At(At(30));
  const uint64_t early = wake_ups.At(At(10));
  clock.Set(At(20));
  EXPECT_THAT(posted, ElementsAre(early));
  clock.Set(At(30));
  EXPECT_THAT(posted, ElementsAre(early, late));
}

TEST(WakeUpsTest, ThePeriodicWakeUpIsArmedOnceUntilHandled) {
  SimulatedClock clock;
  std::vector<uint64_t> posted;
  WakeUps wake_ups(clock, [&](uint64_t wake) { posted.push_back(wake); });
  wake_ups.ArmPeriodic(clock.Now(), Duration(10));
  wake_ups.ArmPeriodic(clock.Now(), Duration(10));  // armed already: no second one
  clock.Set(At(10));
  ASSERT_EQ(posted.size(), 1u);
  wake_ups.ArmPeriodic(clock.Now(), Duration(10));  // not handled yet: still counts as armed
  clock.Set(At(20));
  EXPECT_EQ(posted.size(), 1u);
  wake_ups.Handled(posted[0]);
  wake_ups.ArmPeriodic(clock.Now(), Duration(10));
  clock.Set(At(30));
  EXPECT_EQ(posted.size(), 2u);
}

TEST(WakeUpsTest, CancelAllStopsEveryWakeUpNotHandled) {
  SimulatedClock clock;
  std::vector<uint64_t> posted;
  WakeUps wake_ups(clock, [&](uint64_t wake) { posted.push_back(wake); });
  wake_ups.At(At(10));
  wake_ups.ArmPeriodic(clock.Now(), Duration(5));
  wake_ups.CancelAll();
  clock.Set(At(100));
  EXPECT_THAT(posted, IsEmpty());
}

}  // namespace
}  // namespace tessera::control

#include "control/attempt_tally.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::control {
namespace {

TaskState Active() { return {.active = true, .phase = TaskPhase::kRunning}; }
TaskState Ended(TaskPhase phase) { return {.active = false, .phase = phase}; }

TEST(AttemptTallyTest, FollowsAWideJobTaskByTask) {
  AttemptTally tally(4096);
  EXPECT_EQ(tally.Assess(false).step, AttemptStep::kRunning);  // nothing placed yet
  for (int32_t i = 0; i < 4096; ++i) tally.Set(i, Active());
  for (int32_t i = 0; i < 4095; ++i) {
    tally.Set(i, Ended(TaskPhase::kSucceeded));
    ASSERT_EQ(tally.Assess(false).step, AttemptStep::kRunning) << i;
  }
  tally.Set(4095, Ended(TaskPhase::kSucceeded));
  const AttemptState state = tally.Assess(false);
  EXPECT_EQ(state.step, AttemptStep::kOver);
  EXPECT_FALSE(state.failed.has_value());
}

TEST(AttemptTallyTest, TheFirstFailedTaskInTaskOrderNamesTheFailure) {
  AttemptTally tally(5);
  for (int32_t i = 0; i < 5; ++i) tally.Set(i, Active());
  tally.Set(3, Ended(TaskPhase::kFailed));
  EXPECT_EQ(tally.Assess(false).failed, 3);
  EXPECT_EQ(tally.Assess(false).step, AttemptStep::kTearDown);
  tally.Set(1, Ended(TaskPhase::kFailed));
  EXPECT_EQ(tally.Assess(false).failed, 1);
  // Task 1 placed again (a new attempt resets it): task 3 names the failure again.
  tally.Set(1, Active());
  EXPECT_EQ(tally.Assess(false).failed, 3);
  for (int32_t i : {0, 1, 2, 4}) tally.Set(i, Ended(TaskPhase::kCancelled));
  EXPECT_EQ(tally.Assess(false).step, AttemptStep::kOver);
  EXPECT_EQ(tally.Assess(false).failed, 3);
}

TEST(AttemptTallyTest, ACancelledTaskIsAFailureOnlyWhenNothingStopsTheJob) {
  AttemptTally tally(2);
  tally.Set(0, Active());
  tally.Set(1, Ended(TaskPhase::kCancelled));
  EXPECT_EQ(tally.Assess(false).failed, 1);
  EXPECT_EQ(tally.Assess(false).step, AttemptStep::kTearDown);
  EXPECT_FALSE(tally.Assess(true).failed.has_value());
  EXPECT_EQ(tally.Assess(true).step, AttemptStep::kTearDown);
  tally.Set(0, Ended(TaskPhase::kCancelled));
  EXPECT_EQ(tally.Assess(true).step, AttemptStep::kOver);
}

TEST(AttemptTallyTest, NoTasksIsOver) {
  EXPECT_EQ(AttemptTally(0).Assess(false).step, AttemptStep::kOver);
}

// Any sequence of changes leaves the tally as one built from the final states alone, and it
// answers as Assess over them.
TEST(AttemptTallyTest, ChangesInAnyOrderAnswerAsTheFinalStates) {
  const std::vector<TaskState> kinds = {{},
                                        Active(),
                                        {.active = true, .phase = TaskPhase::kPending},
                                        Ended(TaskPhase::kSucceeded),
                                        Ended(TaskPhase::kFailed),
                                        Ended(TaskPhase::kCancelled)};
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int32_t size = 1 + static_cast<int32_t>(rng() % 8);
    AttemptTally tally(size);
    std::vector<TaskState> tasks(static_cast<size_t>(size));
    for (int change = 0; change < 40; ++change) {
      const int32_t index = static_cast<int32_t>(rng() % size);
      tasks[index] = kinds[rng() % kinds.size()];
      tally.Set(index, tasks[index]);
      for (bool stopping : {false, true}) {
        const AttemptState incremental = tally.Assess(stopping);
        const AttemptState whole = Assess(tasks, stopping);
        ASSERT_EQ(incremental.step, whole.step) << round << "/" << change;
        ASSERT_EQ(incremental.failed, whole.failed) << round << "/" << change;
      }
    }
  }
}

TEST(FailureOfTest, NamesAReasonlessFailureError) {
  EXPECT_EQ(FailureOf(""), "Error");
  EXPECT_EQ(FailureOf("Lost"), "Lost");
}

}  // namespace
}  // namespace tessera::control

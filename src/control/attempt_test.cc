#include "control/attempt.h"

#include <vector>

#include "gtest/gtest.h"

namespace tessera::control {
namespace {

TaskState Active() { return {.active = true, .phase = TaskPhase::kRunning}; }
TaskState NotPlaced() { return {}; }
TaskState Ended(TaskPhase phase, std::string_view reason = "") {
  return {.active = false, .phase = phase, .reason = reason};
}

TEST(AssessTest, RunningTasksAndTasksWaitingToBePlacedKeepTheAttemptRunning) {
  const std::vector<TaskState> tasks = {Active(), NotPlaced(), Ended(TaskPhase::kSucceeded)};
  const AttemptState state = Assess(tasks, /*stopping=*/false);
  EXPECT_EQ(state.step, AttemptStep::kRunning);
  EXPECT_FALSE(state.failed.has_value());
  EXPECT_EQ(state.failure, "");
}

TEST(AssessTest, EveryTaskSucceededEndsTheAttemptWithoutAFailure) {
  const std::vector<TaskState> tasks = {Ended(TaskPhase::kSucceeded), Ended(TaskPhase::kSucceeded)};
  const AttemptState state = Assess(tasks, false);
  EXPECT_EQ(state.step, AttemptStep::kOver);
  EXPECT_EQ(state.failure, "");
}

TEST(AssessTest, AFailedTaskTearsDownTheOthersAndNamesTheFailure) {
  std::vector<TaskState> tasks = {Active(), Ended(TaskPhase::kFailed, "Lost"), Active()};
  AttemptState state = Assess(tasks, false);
  EXPECT_EQ(state.step, AttemptStep::kTearDown);
  EXPECT_EQ(state.failed, 1);
  EXPECT_EQ(state.failure, "Lost");

  // The others end cancelled by the teardown: the attempt is over, still failed by task 1.
  tasks[0] = Ended(TaskPhase::kCancelled);
  tasks[2] = Ended(TaskPhase::kCancelled);
  state = Assess(tasks, false);
  EXPECT_EQ(state.step, AttemptStep::kOver);
  EXPECT_EQ(state.failed, 1);
  EXPECT_EQ(state.failure, "Lost");
}

TEST(AssessTest, TheFirstFailedTaskInTaskOrderNamesTheFailureAndNoReasonReadsError) {
  const std::vector<TaskState> tasks = {Ended(TaskPhase::kSucceeded), Ended(TaskPhase::kFailed),
                                        Ended(TaskPhase::kFailed, "TimeLimitExceeded")};
  const AttemptState state = Assess(tasks, false);
  EXPECT_EQ(state.step, AttemptStep::kOver);
  EXPECT_EQ(state.failed, 1);
  EXPECT_EQ(state.failure, "Error");
}

TEST(AssessTest, AStopTearsDownActiveTasksAndIsOverOnceTheyAreGone) {
  std::vector<TaskState> tasks = {Active(), NotPlaced()};
  EXPECT_EQ(Assess(tasks, /*stopping=*/true).step, AttemptStep::kTearDown);
  tasks[0] = Ended(TaskPhase::kCancelled);
  const AttemptState state = Assess(tasks, true);
  EXPECT_EQ(state.step, AttemptStep::kOver);
  EXPECT_FALSE(state.failed.has_value());  // cancelled by the stop: not a failure
}

TEST(AssessTest, ATaskCancelledOnItsClusterWithNoStopIsAFailure) {
  const std::vector<TaskState> tasks = {Ended(TaskPhase::kCancelled), Active()};
  const AttemptState state = Assess(tasks, false);
  EXPECT_EQ(state.step, AttemptStep::kTearDown);
  EXPECT_EQ(state.failed, 0);
  EXPECT_EQ(state.failure, "Error");
}

TEST(AssessTest, AFailureDuringAStopIsStillNamed) {
  const std::vector<TaskState> tasks = {Ended(TaskPhase::kCancelled),
                                        Ended(TaskPhase::kFailed, "Lost")};
  const AttemptState state = Assess(tasks, /*stopping=*/true);
  EXPECT_EQ(state.step, AttemptStep::kOver);
  EXPECT_EQ(state.failed, 1);
  EXPECT_EQ(state.failure, "Lost");
}

}  // namespace
}  // namespace tessera::control

#include "control/restart_rules.h"

#include "gtest/gtest.h"

namespace tessera::control {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(BackoffTest, DoublesPerRestartUpToAnHour) {
  EXPECT_EQ(Backoff(seconds(5), 1), seconds(5));
  EXPECT_EQ(Backoff(seconds(5), 2), seconds(10));
  EXPECT_EQ(Backoff(seconds(5), 3), seconds(20));
  EXPECT_EQ(Backoff(minutes(20), 3), hours(1));  // 80m, capped
  EXPECT_EQ(Backoff(seconds(5), 1'000'000), hours(1));
}

TEST(BackoffTest, ABaseAboveTheCapStaysTheBase) {
  EXPECT_EQ(Backoff(hours(2), 1), hours(2));
  EXPECT_EQ(Backoff(hours(2), 5), hours(2));
}

TEST(BackoffTest, NoBaseOrNoRestartMeansNoWait) {
  EXPECT_EQ(Backoff(Duration::zero(), 3), Duration::zero());
  EXPECT_EQ(Backoff(seconds(5), 0), Duration::zero());
}

TEST(AfterFailureTest, RequeuesCountingARestartWithTheDoublingBackoff) {
  const RestartPolicy policy{.on_failure = RestartAction::kRequeue, .max_restarts = 3};
  const RestartDecision first = AfterFailure(policy, 0, "Error", seconds(5));
  EXPECT_TRUE(first.requeue);
  EXPECT_EQ(first.restarts, 1);
  EXPECT_EQ(first.backoff, seconds(5));
  const RestartDecision second = AfterFailure(policy, first.restarts, "Error", seconds(5));
  EXPECT_TRUE(second.requeue);
  EXPECT_EQ(second.restarts, 2);
  EXPECT_EQ(second.backoff, seconds(10));
}

TEST(AfterFailureTest, FailsOnceTheRestartsAreUsedUp) {
  const RestartPolicy policy{.on_failure = RestartAction::kRequeue, .max_restarts = 2};
  const RestartDecision decision = AfterFailure(policy, 2, "Error", seconds(5));
  EXPECT_FALSE(decision.requeue);
  EXPECT_EQ(decision.restarts, 2);
}

TEST(AfterFailureTest, FailsWhenThePolicySaysFail) {
  const RestartPolicy policy{.on_failure = RestartAction::kFail, .max_restarts = 3};
  EXPECT_FALSE(AfterFailure(policy, 0, "Error", seconds(5)).requeue);
}

TEST(AfterFailureTest, NeverRetriesATimeLimitOrAProgramThatCannotStart) {
  const RestartPolicy policy{.on_failure = RestartAction::kRequeue, .max_restarts = 3};
  EXPECT_FALSE(IsRetryable("TimeLimitExceeded"));
  EXPECT_FALSE(IsRetryable("StartFailed"));
  EXPECT_TRUE(IsRetryable("Lost"));
  EXPECT_FALSE(AfterFailure(policy, 0, "TimeLimitExceeded", seconds(5)).requeue);
  EXPECT_FALSE(AfterFailure(policy, 0, "StartFailed", seconds(5)).requeue);
}

TEST(AfterPreemptionTest, RequeuesAtOnceWithoutCountingARestart) {
  const RestartDecision requeued = AfterPreemption(true, 2);
  EXPECT_TRUE(requeued.requeue);
  EXPECT_EQ(requeued.restarts, 2);
  EXPECT_EQ(requeued.backoff, Duration::zero());
  EXPECT_FALSE(AfterPreemption(false, 2).requeue);
}

const RestartPolicy kRequeueTwice{.on_failure = RestartAction::kRequeue, .max_restarts = 2};

TEST(AfterAttemptTest, ACancelEndsTheJobWhateverElseHappened) {
  const AttemptOutcome outcome = AfterAttempt(
      kRequeueTwice, 1, {.cancel_requested = true, .eviction = Eviction::kDrain, .failure = "Lost"},
      seconds(5));
  EXPECT_EQ(outcome.verdict, Verdict::kCancelled);
  EXPECT_EQ(outcome.restarts, 1);
}

TEST(AfterAttemptTest, ATimeLimitInsideAnEvictionsGraceFailsTheJob) {
  for (const Eviction eviction : {Eviction::kNone, Eviction::kPreemptRequeue, Eviction::kDrain}) {
    const AttemptOutcome outcome = AfterAttempt(
        kRequeueTwice, 0, {.eviction = eviction, .failure = "TimeLimitExceeded"}, seconds(5));
    EXPECT_EQ(outcome.verdict, Verdict::kFailed);
    EXPECT_EQ(outcome.restarts, 0);
  }
}

TEST(AfterAttemptTest, ADrainOrTaintRequeuesAtOnceEvenPastMaxRestartsOrUnderOnFailureFail) {
  const RestartPolicy fail{.on_failure = RestartAction::kFail, .max_restarts = 0};
  for (const Eviction eviction : {Eviction::kDrain, Eviction::kTaint}) {
    for (const RestartPolicy& policy : {kRequeueTwice, fail}) {
      // A task lost during the eviction's grace does not turn the eviction into a failure.
      const AttemptOutcome outcome =
          AfterAttempt(policy, 2, {.eviction = eviction, .failure = "Lost"}, seconds(5));
      EXPECT_EQ(outcome.verdict, Verdict::kRequeue);
      EXPECT_EQ(outcome.restarts, 2);
      EXPECT_EQ(outcome.backoff, Duration::zero());
    }
  }
}

TEST(AfterAttemptTest, APreemptionFollowsTheSchedulingPolicy) {
  const AttemptOutcome requeued =
      AfterAttempt(kRequeueTwice, 2, {.eviction = Eviction::kPreemptRequeue}, seconds(5));
  EXPECT_EQ(requeued.verdict, Verdict::kRequeue);
  EXPECT_EQ(requeued.restarts, 2);
  EXPECT_EQ(requeued.backoff, Duration::zero());
  EXPECT_EQ(
      AfterAttempt(kRequeueTwice, 0, {.eviction = Eviction::kPreemptCancel}, seconds(5)).verdict,
      Verdict::kCancelled);
}

TEST(AfterAttemptTest, AFailureFollowsTheRestartPolicy) {
  const AttemptOutcome first = AfterAttempt(kRequeueTwice, 0, {.failure = "Error"}, seconds(5));
  EXPECT_EQ(first.verdict, Verdict::kRequeue);
  EXPECT_EQ(first.restarts, 1);
  EXPECT_EQ(first.backoff, seconds(5));
  const AttemptOutcome last = AfterAttempt(kRequeueTwice, 2, {.failure = "Error"}, seconds(5));
  EXPECT_EQ(last.verdict, Verdict::kFailed);
  EXPECT_EQ(last.restarts, 2);
  EXPECT_EQ(AfterAttempt(kRequeueTwice, 0, {.failure = "StartFailed"}, seconds(5)).verdict,
            Verdict::kFailed);
}

TEST(AfterAttemptTest, AnAttemptWithNothingWrongSucceeded) {
  EXPECT_EQ(AfterAttempt(kRequeueTwice, 1, {}, seconds(5)).verdict, Verdict::kSucceeded);
}

}  // namespace
}  // namespace tessera::control

// Restart rules: what becomes of a job once one of its attempts ended, written once and followed
// by the server's job manager and the simulator's scenario runner alike.
//
// After a failed task (the gang is torn down first: its other tasks are cancelled):
//   * a reason that a new attempt would meet again is never retried (IsRetryable):
//     "TimeLimitExceeded" (the attempt ran out of time) and "StartFailed" (the program cannot
//     start) fail the job at once;
//   * otherwise, with restartPolicy.onFailure = requeue and fewer than maxRestarts restarts
//     so far, the job is requeued as a new attempt after a back-off, and the restart counts;
//   * otherwise the job fails, with the failed task's reason.
// Back-off (as Kubernetes' CrashLoopBackOff): restart n waits base x 2^(n-1) — base, 2 x base,
// 4 x base, … — capped at kMaxBackoff (1h), or at base itself when base is longer than 1h.
// base is the configured requeue back-off (the server's requeueBackoff, a scenario's
// config.requeue_backoff); 0 means no wait.
// After a preemption (not the job's fault): the job is requeued at once, without back-off and
// without counting a restart, or cancelled, as the scheduling policy says (onPreemption).
// After an eviction by a node drain or a NoExecute taint (not the job's fault either, as a
// Kubernetes disruption): the job is always requeued at once, counting neither a restart nor a
// preemption.
// AfterAttempt puts these together for an attempt whose tasks are all gone.
//
// Pure functions of their arguments: no clock, no I/O, no threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "core/job.h"
#include "tessera/common/clock.h"

namespace tessera::control {

// The doubling back-off stops growing here (or at the base, when the base is longer).
inline constexpr Duration kMaxBackoff = std::chrono::hours(1);

// False for the failure reasons a new attempt would end with again.
bool IsRetryable(std::string_view reason);

// The wait before restart `restart` (1 for the first): base x 2^(restart-1), capped at
// max(base, kMaxBackoff). Zero when base <= 0 or restart <= 0.
Duration Backoff(Duration base, int32_t restart);

struct RestartDecision {
  bool requeue = false;  // false: the job ends (Failed after a failure, Cancelled after a
                         // preemption)
  int32_t restarts = 0;  // the job's restart count once the decision is applied
  Duration backoff{0};   // requeue only: how long the new attempt waits before it may be placed
};

// After an attempt whose task failed with `reason`, for a job that has restarted `restarts`
// times, with back-off base `base_backoff`.
RestartDecision AfterFailure(const RestartPolicy& policy, int32_t restarts,
                             std::string_view reason, Duration base_backoff);

// After an attempt ended by preemption: `requeue` is the scheduling policy's choice
// (requeue, else cancel).
RestartDecision AfterPreemption(bool requeue, int32_t restarts);

// Why a job that did not fail is being torn down, if it is.
enum class Eviction {
  kNone,
  kPreemptRequeue,  // preempted (or reclaimed); the scheduling policy requeues preempted jobs
  kPreemptCancel,   // preempted; the policy cancels preempted jobs
  kDrain,           // a node it runs on is drained
  kTaint,           // a node it runs on gained a NoExecute taint one of its tasks does not tolerate
};

// How an attempt whose tasks are all gone ended, as its wiring saw it.
struct AttemptEnd {
  bool cancel_requested = false;  // a user cancelled the job
  Eviction eviction = Eviction::kNone;
  // The reason of the attempt's first failed task ("TimeLimitExceeded", "Lost", ...); empty when
  // no task failed.
  std::string_view failure;
};

enum class Verdict { kRequeue, kSucceeded, kFailed, kCancelled };

struct AttemptOutcome {
  Verdict verdict = Verdict::kSucceeded;
  int32_t restarts = 0;  // the job's restart count once the outcome is applied
  Duration backoff{0};   // kRequeue only: the new attempt's wait before it may be placed
};

// What becomes of the job, in this order: a cancel ends it Cancelled; a time limit that passed
// (even inside an eviction's grace) fails it; an eviction requeues it (drain, taint) or follows
// AfterPreemption; a failure follows AfterFailure; an attempt with none of these succeeded.
AttemptOutcome AfterAttempt(const RestartPolicy& policy, int32_t restarts, const AttemptEnd& end,
                            Duration base_backoff);

}  // namespace tessera::control

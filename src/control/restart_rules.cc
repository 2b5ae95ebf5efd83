#include "control/restart_rules.h"

#include <algorithm>

namespace tessera::control {

bool IsRetryable(std::string_view reason) {
  return reason != "TimeLimitExceeded" && reason != "StartFailed";
}

Duration Backoff(Duration base, int32_t restart) {
  if (base <= Duration::zero() || restart <= 0) return Duration::zero();
  const Duration cap = std::max(base, kMaxBackoff);
  Duration backoff = base;
  for (int32_t i = 1; i < restart && backoff < cap; ++i) backoff = std::min(backoff * 2, cap);
  return backoff;
}

RestartDecision AfterFailure(const RestartPolicy& policy, int32_t restarts,
                             std::string_view reason, Duration base_backoff) {
  if (!IsRetryable(reason) || policy.on_failure != RestartAction::kRequeue ||
      restarts >= policy.max_restarts) {
    return {.requeue = false, .restarts = restarts};
  }
  return {.requeue = true,
          .restarts = restarts + 1,
          .backoff = Backoff(base_backoff, restarts + 1)};
}

RestartDecision AfterPreemption(bool requeue, int32_t restarts) {
  return {.requeue = requeue, .restarts = restarts};
}

AttemptOutcome AfterAttempt(const RestartPolicy& policy, int32_t restarts, const AttemptEnd& end,
                            Duration base_backoff) {
  if (end.cancel_requested) return {.verdict = Verdict::kCancelled, .restarts = restarts};
  if (end.failure == "TimeLimitExceeded") {
    return {.verdict = Verdict::kFailed, .restarts = restarts};
  }
  RestartDecision decision;
  switch (end.eviction) {
    case Eviction::kDrain:
    case Eviction::kTaint:
      return {.verdict = Verdict::kRequeue, .restarts = restarts};
    case Eviction::kPreemptRequeue:
    case Eviction::kPreemptCancel:
      decision = AfterPreemption(end.eviction == Eviction::kPreemptRequeue, restarts);
      if (!decision.requeue) return {.verdict = Verdict::kCancelled, .restarts = restarts};
      break;
    case Eviction::kNone:
      if (end.failure.empty()) return {.verdict = Verdict::kSucceeded, .restarts = restarts};
      decision = AfterFailure(policy, restarts, end.failure, base_backoff);
      if (!decision.requeue) return {.verdict = Verdict::kFailed, .restarts = restarts};
      break;
  }
  return {.verdict = Verdict::kRequeue, .restarts = decision.restarts, .backoff = decision.backoff};
}

}  // namespace tessera::control

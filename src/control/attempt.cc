#include "control/attempt.h"

#include "control/attempt_tally.h"

namespace tessera::control {

// The rules are AttemptTally's, so that both forms answer alike.
AttemptState Assess(std::span<const TaskState> tasks, bool stopping) {
  AttemptTally tally(static_cast<int32_t>(tasks.size()));
  for (size_t i = 0; i < tasks.size(); ++i) tally.Set(static_cast<int32_t>(i), tasks[i]);
  AttemptState state = tally.Assess(stopping);
  if (state.failed) state.failure = FailureOf(tasks[*state.failed].reason);
  return state;
}

}  // namespace tessera::control

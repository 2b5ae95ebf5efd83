// PreFilterPlugin: runs once per scheduling attempt, before any Filter.
//
// Called on the scheduling thread. May write per-task data to the CycleState for its Filter to
// read, reject the task outright (Unresolvable: "can never run anywhere"), or return Skip when
// it has nothing to do for this task (its Filter is then not called for this attempt).
#pragma once

#include "core/job.h"
#include "tessera/sched/cycle_state.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class PreFilterPlugin : public virtual Plugin {
 public:
  virtual SchedStatus PreFilter(CycleState& state, const TaskRequest& task) = 0;
};

}  // namespace tessera

// PreScorePlugin: runs once per attempt after filtering, before any Score.
//
// Called on the scheduling thread with the number of feasible nodes. Writes per-task data to the
// CycleState for its Score to read, or returns Skip when it has nothing to do: the framework then
// does not call the plugin's Score in this attempt (its score counts as 0), as kube-scheduler
// skips the Score of a plugin whose PreScore skipped. The skip must depend only on the task's
// equivalence class and on what the framework writes to the CycleState (cluster_count.h), since
// scores are cached per class.
#pragma once

#include "core/job.h"
#include "tessera/sched/cycle_state.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class PreScorePlugin : public virtual Plugin {
 public:
  virtual SchedStatus PreScore(CycleState& state, const TaskRequest& task) = 0;
};

}  // namespace tessera

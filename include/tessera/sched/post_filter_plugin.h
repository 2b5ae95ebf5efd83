// PostFilterPlugin: runs when no node passed the filters; preemption lives here.
//
// Called on the scheduling thread with the attempt's Diagnosis. Returns Success when it made
// room (for example by nominating victims through the DecisionSink; the task is retried in a
// later cycle), or Unschedulable when nothing can be done. Plugins run in profile order until
// one succeeds.
#pragma once

#include "core/job.h"
#include "tessera/sched/cycle_state.h"
#include "tessera/sched/diagnosis.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class PostFilterPlugin : public virtual Plugin {
 public:
  virtual SchedStatus PostFilter(CycleState& state, const TaskRequest& task,
                                 const Diagnosis& diagnosis) = 0;
};

}  // namespace tessera

// FilterPlugin: decides whether one task can run on one node.
//
// Called by the framework for each candidate node of an attempt, possibly from several worker
// threads at once (so Filter is const and must not mutate shared state), after every PreFilter
// plugin succeeded. Filters run in profile order and stop at the first rejection.
//
// Contract: the verdict must be a pure function of (the task's equivalence class — see
// TaskRequest::EquivalenceKey —, the node's state, the plugin's configuration): the framework
// caches verdicts per class and node version. Returns Success, or Unschedulable /
// Unresolvable with a named Reason; never kError for "does not fit".
#pragma once

#include "core/job.h"
#include "core/node.h"
#include "tessera/sched/cycle_state.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class FilterPlugin : public virtual Plugin {
 public:
  virtual SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                             const Node& node) const = 0;
};

}  // namespace tessera

// ReservePlugin: holds what a task needs on the node the framework chose for it.
//
// Reserve is called on the scheduling thread once the node is chosen, in profile order, before
// the placement is assumed into the cluster state. A Reserve plugin that chooses GPU devices
// (the device policy of FGD, BestFit, Random, ...) fills `placement->gpus` when it is still empty;
// later plugins see the choice. When no plugin chose devices for a GPU task the framework picks
// the tightest fitting devices (core/device_selection.h).
//
// Unreserve undoes Reserve when a later step fails (another Reserve, Permit, Bind). It may be
// called for a plugin whose Reserve was never called, so it must be idempotent and must not fail.
#pragma once

#include "core/job.h"
#include "core/node.h"
#include "core/placement.h"
#include "tessera/sched/cycle_state.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class ReservePlugin : public virtual Plugin {
 public:
  virtual SchedStatus Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                              Placement* placement) = 0;
  virtual void Unreserve(CycleState& state, const TaskRequest& task, const Placement& placement) {}
};

}  // namespace tessera

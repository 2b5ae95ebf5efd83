// Handle: what the framework gives plugins at construction — their only window on the world.
//
// Every pointer is owned by the wiring (server or simulator) and outlives the framework and its
// plugins. `rng` and `sink` are used only from the scheduling thread. `target_workload` is null
// when the wiring has none; plugins that need it (FGD) fail at start-up without it. It is the
// first workload only: a wiring replaces it through Scheduler::SetTargetWorkload
// (target_workload_plugin.h).
#pragma once

#include "core/target_workload.h"
#include "tessera/common/clock.h"
#include "tessera/common/rng.h"
#include "tessera/sched/decision_sink.h"

namespace tessera {

struct Handle {
  Rng* rng = nullptr;
  const Clock* clock = nullptr;
  const TargetWorkload* target_workload = nullptr;
  DecisionSink* sink = nullptr;
};

}  // namespace tessera

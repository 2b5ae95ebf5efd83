// The target workload of a scenario run (what FGD measures fragmentation against): the
// scenario's own task classes, each weighted by its share of the scenario's tasks (replicas
// summed over every job). A scenario without tasks gets one empty class, so that policies
// built on the workload have something to read. Used by the scenario runner and by the server
// wiring of the parity test, so that both score alike. Pure function.
#pragma once

#include "core/target_workload.h"
#include "sim/scenario/scenario.h"

namespace tessera::sim {

TargetWorkload ScenarioWorkload(const Scenario& scenario);

}  // namespace tessera::sim

// TargetWorkload: the distribution of "typical" task classes that fragmentation is measured
// against (the FGD paper's M, §2.1 of its definitions): each class is a task request with the
// probability that a task drawn at random from the workload has it. Probabilities sum to 1;
// no classes at all means nothing is known about the workload yet (no fragmentation anywhere).
// A value type: the plugins that read it copy it, and a wiring may hand them a new one between
// scheduling cycles (Scheduler::SetTargetWorkload).
#pragma once

#include <vector>

#include "core/job.h"

namespace tessera {

struct TaskClassShare {
  TaskRequest request;
  double probability = 0;
};

struct TargetWorkload {
  std::vector<TaskClassShare> classes;
};

}  // namespace tessera

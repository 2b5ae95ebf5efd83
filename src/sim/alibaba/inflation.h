// The FGD artifact's submission order and trace inflation ("workload tuning", §2.6 of the
// paper's definitions), on Tessera's seeded Rng.
//
// 1. The tasks are sorted by name, then shuffled with `rng`.
// 2. With ratio > 0, the total requested milli-GPU is brought to just under ratio x the cluster's
//    GPU capacity:
//    - below the target, clones of tasks drawn uniformly with replacement from the trace (in
//      name order) are appended after the shuffled originals until the next draw would go over
//      the target. Like the artifact, the check adds the clone's milli-GPU *per device*, while
//      the running total adds its full request (count x per device), so a multi-GPU clone may
//      overshoot the target;
//    - above the target, tasks are removed uniformly at random until it is met.
// Go's RNG stream cannot be reproduced, so runs match the artifact's protocol, not its draws.
// The same (trace, capacity, ratio, seed) always gives the same order.
// Thread-safety: pure functions apart from the Rng they advance.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/alibaba/alibaba_trace.h"
#include "tessera/common/rng.h"

namespace tessera::sim::alibaba {

struct Arrival {
  int32_t task = 0;    // index into the trace's tasks
  int32_t clone = -1;  // -1 for an original task; 0, 1, ... for the n-th clone appended
};

struct ArrivalOrder {
  std::vector<Arrival> arrivals;
  int64_t requested_gpu_milli = 0;  // total over `arrivals`
  int32_t clones = 0;
  int32_t removed = 0;
};

// The submission order for one run. ratio <= 0, or a trace without GPU requests, keeps every
// task (shuffled) without tuning.
ArrivalOrder BuildArrivalOrder(const std::vector<TraceTask>& tasks, int64_t cluster_gpu_milli,
                               double ratio, Rng& rng);

// Permutes `items` with `rng` (the artifact also shuffles the node order before placement).
template <typename T>
void PermuteNodes(std::vector<T>& items, Rng& rng) {
  rng.Shuffle(items);
}

}  // namespace tessera::sim::alibaba

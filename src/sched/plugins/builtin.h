// BuiltinPlugins: every in-tree scheduling plugin, listed in one place.
//
//   filters     NodeUnschedulable, NodeResourcesFit, TaintToleration, NodeAffinity
//   scorers     LeastAllocated, MostAllocated, TaintToleration, and the FGD paper's placement
//               policies Random, DotProduct, GpuPacking, GpuClustering, BestFit, FGD (which also
//               choose GPU devices in Reserve)
//   queue sort  PrioritySort          permit  Gang          bind  DefaultBinder
#pragma once

#include "tessera/sched/registry.h"

namespace tessera {

Registry BuiltinPlugins();

}  // namespace tessera

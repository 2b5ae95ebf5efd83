// BuiltinPlugins: every in-tree scheduling plugin, listed in one place.
//
//   filters     NodeUnschedulable, NodeResourcesFit, TaintToleration, NodeAffinity, and the
//               cluster-level ClusterSelector and ClusterAffinity (also a scorer)
//   scorers     LeastAllocated, MostAllocated, TaintToleration, ClusterScore (cost tiers), and
//               the FGD paper's placement policies Random, DotProduct, GpuPacking, GpuClustering,
//               BestFit, FGD (which also choose GPU devices in Reserve)
//   queue sort  PrioritySort          permit  Gang          bind  DefaultBinder
#pragma once

#include "tessera/sched/registry.h"

namespace tessera {

Registry BuiltinPlugins();

}  // namespace tessera

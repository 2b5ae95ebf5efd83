#include "sched/plugins/builtin.h"

#include "sched/plugins/basic/default_binder.h"
#include "sched/plugins/basic/gang.h"
#include "sched/plugins/basic/least_allocated.h"
#include "sched/plugins/basic/most_allocated.h"
#include "sched/plugins/basic/node_affinity.h"
#include "sched/plugins/basic/node_resources_fit.h"
#include "sched/plugins/basic/node_unschedulable.h"
#include "sched/plugins/basic/priority_sort.h"
#include "sched/plugins/basic/taint_toleration.h"
#include "sched/plugins/cluster/cluster_affinity.h"
#include "sched/plugins/cluster/cluster_score.h"
#include "sched/plugins/cluster/cluster_selector.h"
#include "sched/plugins/gpushare/best_fit.h"
#include "sched/plugins/gpushare/dot_product.h"
#include "sched/plugins/gpushare/fgd.h"
#include "sched/plugins/gpushare/fgd_cpu.h"
#include "sched/plugins/gpushare/gpu_clustering.h"
#include "sched/plugins/gpushare/gpu_packing.h"
#include "sched/plugins/gpushare/random.h"

namespace tessera {
namespace {

template <typename P>
void Add(Registry& registry) {
  // Built-in names are distinct by construction; a duplicate is a programming error.
  absl::Status status = registry.Register(P::kName, &P::New);
  if (!status.ok()) std::abort();
}

}  // namespace

Registry BuiltinPlugins() {
  Registry r;
  // Filters.
  Add<NodeUnschedulable>(r);
  Add<NodeResourcesFit>(r);
  Add<TaintToleration>(r);
  Add<NodeAffinity>(r);
  // Cluster-level filters and scorers (which cluster a gang may use and prefers).
  Add<ClusterSelector>(r);
  Add<ClusterAffinity>(r);
  Add<ClusterScore>(r);
  // Generic scorers.
  Add<LeastAllocated>(r);
  Add<MostAllocated>(r);
  // The GPU-sharing placement policies of the FGD paper (score + device choice in Reserve).
  Add<Random>(r);
  Add<DotProduct>(r);
  Add<GpuPacking>(r);
  Add<GpuClustering>(r);
  Add<BestFit>(r);
  Add<Fgd>(r);
  Add<FgdCpu>(r);
  // Queue order, gang barrier, binding.
  Add<PrioritySort>(r);
  Add<Gang>(r);
  Add<DefaultBinder>(r);
  return r;
}

}  // namespace tessera

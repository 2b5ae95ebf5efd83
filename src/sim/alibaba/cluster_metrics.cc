#include "sim/alibaba/cluster_metrics.h"

namespace tessera::sim::alibaba {
namespace {

double Pct(int64_t part, int64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// Only the quantities the metrics read: copying the extended-resource map per change is waste.
Resources Core(const Resources& r) {
  Resources out;
  out.cpu = r.cpu;
  out.memory = r.memory;
  out.gpu = r.gpu;
  return out;
}

}  // namespace

ClusterMetrics::ClusterMetrics(const ClusterState& state,
                               const gpushare::PreparedWorkload& workload)
    : state_(state), workload_(workload) {
  const int32_t n = state.size();
  node_fragment_.resize(n);
  node_allocated_.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    const Node& node = state.node(i);
    if (node.removed) continue;
    capacity_.cpu += node.allocatable.cpu;
    capacity_.memory += node.allocatable.memory;
    capacity_.gpu += node.allocatable.gpu;
    node_allocated_[i] = Core(node.allocated);
    allocated_ += node_allocated_[i];
    node_fragment_[i] = gpushare::NodeFragmentation(node, workload_);
    fragment_milli_ += node_fragment_[i];
  }
}

void ClusterMetrics::NodeChanged(int32_t index) {
  const Node& node = state_.node(index);
  allocated_ -= node_allocated_[index];
  node_allocated_[index] = Core(node.allocated);
  allocated_ += node_allocated_[index];
  fragment_milli_ -= node_fragment_[index];
  node_fragment_[index] = gpushare::NodeFragmentation(node, workload_);
  fragment_milli_ += node_fragment_[index];
}

double ClusterMetrics::FragmentRatioPct() const {
  const int64_t free = FreeGpuMilli();
  return free <= 0 ? 0.0 : 100.0 * fragment_milli_ / static_cast<double>(free);
}

double ClusterMetrics::CpuAllocationPct() const { return Pct(allocated_.cpu, capacity_.cpu); }
double ClusterMetrics::MemoryAllocationPct() const {
  return Pct(allocated_.memory, capacity_.memory);
}
double ClusterMetrics::GpuAllocationPct() const { return Pct(allocated_.gpu, capacity_.gpu); }
double ClusterMetrics::FragmentPctOfCapacity() const {
  return capacity_.gpu == 0 ? 0.0 : 100.0 * fragment_milli_ / static_cast<double>(capacity_.gpu);
}

}  // namespace tessera::sim::alibaba

// ClusterMetrics: the simulator's running view of one cluster's allocation and fragmentation.
//
// Keeps the allocated cpu, memory and milli-GPU over all nodes, and each node's F_n(M) (the FGD
// paper's fragmentation against the target workload M, gpushare/fragmentation.h) with their sum
// F(M). Both are updated incrementally: after a task is assumed or forgotten on a node, call
// NodeChanged(node) and only that node's F_n(M) is recomputed, so a sample after every arrival
// costs O(classes) instead of O(nodes x classes).
// Not thread-safe: one per simulation run.
#pragma once

#include <cstdint>
#include <vector>

#include "core/resources.h"
#include "sched/cluster_state.h"
#include "sched/plugins/gpushare/fragmentation.h"

namespace tessera::sim::alibaba {

class ClusterMetrics {
 public:
  // Measures every node of `state`. `state` and `workload` must outlive this object.
  ClusterMetrics(const ClusterState& state, const gpushare::PreparedWorkload& workload);

  // Re-reads node `index` after a change (Assume/Forget).
  void NodeChanged(int32_t index);

  const Resources& capacity() const { return capacity_; }
  const Resources& allocated() const { return allocated_; }
  // F(M) in milli-GPU.
  double FragmentMilli() const { return fragment_milli_; }
  // Free milli-GPU over all nodes.
  int64_t FreeGpuMilli() const { return capacity_.gpu - allocated_.gpu; }
  // F(M) / free milli-GPU x 100; 0 when nothing is free.
  double FragmentRatioPct() const;
  // 100 x allocated / capacity per resource; 0 when the capacity is 0.
  double CpuAllocationPct() const;
  double MemoryAllocationPct() const;
  double GpuAllocationPct() const;
  // F(M) as a percentage of all milli-GPU (the paper's "fragment amount").
  double FragmentPctOfCapacity() const;

 private:
  const ClusterState& state_;
  const gpushare::PreparedWorkload& workload_;
  std::vector<double> node_fragment_;
  std::vector<Resources> node_allocated_;
  Resources capacity_;
  Resources allocated_;
  double fragment_milli_ = 0;
};

}  // namespace tessera::sim::alibaba

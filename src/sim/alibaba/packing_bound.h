// A lower bound on the unallocated GPU share that any placement policy can reach in the FGD
// paper's experiment (paper_runner.h) for one seed: no policy that places each arriving task
// once, on one node, and never moves it can leave fewer GPUs unallocated at 100% arrived
// workload than this.
//
// The curve's value at x = 100 is the mean GPU allocation over the samples taken after the
// arrivals whose arrived % rounds to 100 (to 99-101 when none does, curve.h). Cut the run's
// arrivals (the seed's order and clones, inflation.h) after the last of them. A policy's
// allocation after any of them is at most what had arrived by then, and at most its allocation
// after the cut, because nothing ever leaves; and that is at most the optimum of this linear
// program over the tasks up to the cut:
//
//   node types t: nodes grouped by (GPU model, devices, cpu, memory, device memory), N_t of them
//   task classes c: the tasks up to the cut grouped by request (cpu, memory, GPU count,
//                   milli-GPU per device, device memory, allowed models), n_c of them
//   x[c,t] >= 0: how many tasks of c are placed on nodes of type t (only where one fits an
//                empty node of t: model allowed, enough devices, cpu, memory, device memory)
//
//   maximise   sum x[c,t] * gpu_count_c * gpu_milli_c
//   subject to sum_t x[c,t] <= n_c                                      (each task placed once)
//              for each t and each of cpu, memory, milli-GPU, device memory:
//                sum_c x[c,t] * demand_c <= N_t * capacity_t            (capacity of the type)
//              for each t, devices: sum_c x[c,t] * devices_c <= N_t * devices_t, where a task
//                of g whole GPUs counts g and a sharing task of more than half a GPU counts 1
//                (no device holds two of those)
//              for each t and each of cpu, memory, milli-GPU: the tasks that need more than
//                half of one node's amount number at most N_t (no node holds two of them)
//
// This is a relaxation of the real problem (tasks may be split between nodes of a type and
// across devices), so its optimum is at least the allocation of every real placement, and
//
//   bound = 100 - 100 * mean over the samples of min(arrived, optimum) / cluster milli-GPU
//        <= every policy's unallocated % at 100.
//
// Per seed; the median of the per-seed bounds is at most the median of any policy's per-seed
// results. It ignores the order of the arrivals up to the cut (an offline, clairvoyant placement)
// and lets tasks be split, so it is weak: on the openb traces its optimum fills every GPU, and
// what remains of the bound is the part of the bucket's samples taken before a full cluster's
// worth of GPUs had arrived. It shows how far a policy may be from the best possible, not that
// the best is reachable. Solved with GLPK's simplex (exact up to its tolerances; the optimum is
// rounded up to the next milli-GPU before the bound is computed).
//
// Thread-safety: calls are serialised on a process-wide mutex (GLPK keeps global state); each
// takes milliseconds. Errors: Internal when GLPK fails to solve.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba/trace_input.h"

namespace tessera::sim::alibaba {

struct PackingBound {
  uint64_t seed = 0;
  int32_t prefix_arrivals = 0;   // arrivals up to the cut
  int64_t prefix_gpu_milli = 0;  // milli-GPU they request
  int32_t task_classes = 0;      // LP size: classes x node types
  int32_t node_types = 0;
  double max_allocated_milli = 0;     // the LP optimum
  double unallocated_pct_at_100 = 0;  // the bound; NaN when no arrival rounds to 99-101%
};

// The bound for one seed of the paper experiment with `inflate` (as PaperRunOptions::inflate).
absl::StatusOr<PackingBound> ComputePackingBound(const TraceInput& input, uint64_t seed,
                                                 double inflate);

// One bound per seed, in the order of `seeds`.
absl::StatusOr<std::vector<PackingBound>> ComputePackingBounds(const TraceInput& input,
                                                               const std::vector<uint64_t>& seeds,
                                                               double inflate);

// The median over seeds of the bounds' unallocated GPU % at 100 (NaN when empty).
double MedianBound(std::span<const PackingBound> bounds);

}  // namespace tessera::sim::alibaba

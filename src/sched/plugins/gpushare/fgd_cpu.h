// FGD-CPU: FGD (fgd.h) with a fragmentation measure that sees GPUs stranded by a lack of CPU —
// Tessera's own policy for GPU-sharing clusters, measured on the FGD paper's experiment.
//
// The paper's measure F_n(M) counts all the free GPU of a node as usable by a task class m as
// soon as one task of m fits: a node with 8 free GPUs and 12 free cores "fits" a 1-GPU, 11-core
// class, so all 8 GPUs count as usable, although only one such task can ever run there. FGD-CPU
// descends a CPU-aware measure instead (fragmentation.h, NodeFragmentationDelta::CpuAware*):
//
//   S_n(m)  = U_n(m) - min(U_n(m), floor(free_cpu(n) / m.cpu) * m.gpu_count * m.gpu_milli)
//   F~_n(m) = F_n(m) + 0.75 * S_n(m)
//
// where U_n(m) is the free GPU the paper's measure counts usable by m and S_n(m) the part of it
// that the copies of m the node's free cpu admits could not take: GPU stranded by CPU. So a
// CPU-only or CPU-heavy task placed on a node whose GPUs need its cores now raises the
// fragmentation it causes.
// For task p on feasible node n, with n' the node after placing p,
//
//   delta = F~_{n'}(M) - F~_n(M)
//   score = trunc(100 * sigmoid(-delta / 5000))       an integer in [0, 100]; 50 for no change
//
// The weight 0.75 and the scale 5000 (FGD: 1000) were chosen by measuring a few values on the
// default trace and checked on other seeds and traces (docs/policies/fgd-cpu.md); the coarser
// integer scores tie more often, and ties go to the first node in node order, as FGD's.
// Devices, as FGD: a sharing task tries every fitting device (the highest score wins, the
// lowest index among equal ones); a whole-GPU task takes the lowest-index fully free devices; a
// GPU task with no fitting device scores 0. Reserve places the task on the devices its score
// used. Profile `fgdcpu`: this plugin alone, first-of-ties.
//
// Arguments: none. Needs handle.target_workload (the factory fails without it); the wiring may
// replace it between cycles (TargetWorkloadPlugin). Thread-safety: Score is const and pure; it
// allocates nothing for nodes of up to 8 devices. Cost: FGD's (one pass over the node's devices
// per threshold, then O(classes + thresholds) per candidate device).
// Source: Tessera. Built on Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
// Workloads with Fragmentation Gradient Descent", USENIX ATC'23.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "sched/plugins/gpushare/fgd.h"
#include "sched/plugins/gpushare/fragmentation.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"

namespace tessera::gpushare {

// The weight of stranded GPU in FGD-CPU's measure, and the divisor of delta (milli-GPU) in the
// sigmoid of its score.
inline constexpr double kFgdCpuStrandedWeight = 0.75;
inline constexpr double kFgdCpuScale = 5000;
inline constexpr FgdMeasure kFgdCpuMeasure{.stranded_weight = kFgdCpuStrandedWeight,
                                           .scale = kFgdCpuScale};

// trunc(100 * sigmoid((before - after) / kFgdCpuScale)).
inline int64_t FgdCpuScoreOf(double before, double after) {
  return FgdScoreOf(before, after, kFgdCpuScale);
}

// Evaluates `task` on `node` against `workload` (see above).
inline FgdChoice EvaluateFgdCpu(const TaskRequest& task, const Node& node,
                                const PreparedWorkload& workload) {
  return EvaluateFgd(task, node, workload, kFgdCpuMeasure);
}

}  // namespace tessera::gpushare

namespace tessera {

// The plugin: FGD's (class Fgd, fgd.h) descending kFgdCpuMeasure.
struct FgdCpu {
  static constexpr std::string_view kName = "FGD-CPU";

  // Errors as Fgd::New.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle) {
    return Fgd::NewVariant(kName, gpushare::kFgdCpuMeasure, args, handle);
  }
};

}  // namespace tessera

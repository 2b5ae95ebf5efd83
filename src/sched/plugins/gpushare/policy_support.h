// Helpers shared by the GPU-sharing placement policies (the FGD paper's six): the argument check
// of their factories, the node vector constants of their scores, and the device choice of their
// Reserve step.
//
// Each policy is a Score plugin and a Reserve plugin. Its Reserve fills `placement->gpus` (and
// the per-device milli-GPU and memory) with the policy's device choice when the task needs GPUs
// and no earlier Reserve plugin chose devices; when no device fits it rejects the node with
// kNoFittingDevices. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "core/device_selection.h"
#include "core/job.h"
#include "core/node.h"
#include "core/placement.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/reserve_plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera::gpushare {

// The "largest node" the artifact normalises node and task vectors by: 128 cores, 8 GPUs.
inline constexpr int64_t kMaxSpecCpu = 128000;  // millicores
inline constexpr int64_t kMaxSpecGpu = 8000;    // milli-GPU

inline constexpr Reason kNoFittingDevices{"InsufficientResources", "no fitting gpu devices"};

// InvalidArgument when `args` is not empty: the policies take no arguments.
absl::Status CheckNoArgs(std::string_view plugin, const PluginArgs& args);

// True when the task asks for GPU devices (a CPU-only task has gpu_count 0 or gpu_milli 0).
inline bool UsesGpu(const TaskRequest& task) { return task.NeedsGpu() && task.gpu_milli > 0; }

// The devices a non-sharing task takes when placed by packing, as the artifact's node-resource
// subtraction does: devices in ascending order of free milli-GPU (ties by index), the first
// gpu_count that fit. For whole-GPU tasks these are the lowest-index fully free devices.
// Empty when fewer than gpu_count fit.
DeviceList PackedDevices(const Node& node, const TaskRequest& task);

// Writes `devices` into `placement` with the task's per-device milli-GPU and memory, or rejects
// with kNoFittingDevices when fewer than gpu_count devices were chosen.
SchedStatus FillDevices(const TaskRequest& task, const DeviceList& devices, Placement* placement);

// True when Reserve has to choose devices: a GPU task whose placement lists none yet.
inline bool NeedsDeviceChoice(const TaskRequest& task, const Placement& placement) {
  return UsesGpu(task) && placement.gpus.empty();
}

// The Reserve step of the policies that take the tightest devices (the artifact's "best" GPU
// selection: core/device_selection.h SelectTightestDevices): DotProduct, GpuPacking,
// GpuClustering, BestFit.
class TightestDeviceReserve : public ReservePlugin {
 public:
  SchedStatus Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                      Placement* placement) override;
};

}  // namespace tessera::gpushare

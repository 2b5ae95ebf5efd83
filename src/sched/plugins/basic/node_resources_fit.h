// NodeResourcesFit: does the task's request fit what the node has left?
//
// A PreFilter and a Filter. Quantities are in the standard units (core/resources.h).
//
// Node-level quantities — cpu, memory and every extended resource the task names — are checked
// against `allocatable - allocated` (a resource the node does not list has 0 allocatable).
// A zero request never fails, even on an over-allocated node.
//
// GPUs are checked per device, never against the node-level `gpu` sum, because milli-GPU only
// means something on one device: a task of gpu_count devices of gpu_milli each needs gpu_count
// distinct devices that each pass DeviceFits (core/device_selection.h): healthy, of an allowed
// model, with gpu_milli free (a whole-GPU task needs the device fully free; a sharing task needs
// free milli >= its share, so shares never overcommit a device) and gpu_memory bytes of device
// memory free.
//
// Verdicts. A task that could never run on the node, even with nothing placed on it (request
// above allocatable, too few healthy devices of an allowed model, device memory too small), gets
// UnschedulableAndUnresolvable; a task that does not fit only because of what is placed gets
// Unschedulable (preemption may help). The first failing check gives the Reason, in this order:
//   cpu, memory, extended resources, GPU model, GPU count, GPU memory.
//   code "InsufficientResources": "insufficient cpu", "insufficient memory",
//       "insufficient extended resource", "insufficient gpu", "insufficient gpu memory";
//   code "GpuModelMismatch": "gpu model not allowed" — the task restricts models and the node has
//       devices, none of an allowed model. A node without devices reports "insufficient gpu".
//
// PreFilter returns Skip for a task that requests nothing (the Filter would pass every node), and
// Success otherwise; it rejects nothing. The task request is already flat, so there is nothing to
// precompute in the CycleState.
//
// Arguments: none. Thread-safe: Filter is const and reads only its inputs.
// Source: kube-scheduler's NodeResourcesFit (Fits/Insufficient*), the device-level GPU-sharing
// checks of the FGD paper's open-gpu-share scheduler.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/filter_plugin.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/pre_filter_plugin.h"
#include "tessera/sched/registry.h"

namespace tessera {

class NodeResourcesFit final : public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";

  static constexpr Reason kInsufficientCpu{"InsufficientResources", "insufficient cpu"};
  static constexpr Reason kInsufficientMemory{"InsufficientResources", "insufficient memory"};
  static constexpr Reason kInsufficientExtended{"InsufficientResources",
                                                "insufficient extended resource"};
  static constexpr Reason kInsufficientGpu{"InsufficientResources", "insufficient gpu"};
  static constexpr Reason kInsufficientGpuMemory{"InsufficientResources",
                                                 "insufficient gpu memory"};
  static constexpr Reason kGpuModelMismatch{"GpuModelMismatch", "gpu model not allowed"};

  // InvalidArgument on any argument.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  std::string_view name() const override { return kName; }
  SchedStatus PreFilter(CycleState& state, const TaskRequest& task) override;
  SchedStatus Filter(const CycleState& state, const TaskRequest& task,
                     const Node& node) const override;
};

}  // namespace tessera

#include "sched/plugins/gpushare/fgd_cpu.h"

#include <cmath>
#include <concepts>

#include "sched/plugins/gpushare/policy_support.h"

namespace tessera::gpushare {

int64_t FgdCpuScoreOf(double before, double after) {
  const double sigmoid = 1.0 / (1.0 + std::exp((after - before) / kFgdCpuScale));
  return static_cast<int64_t>(sigmoid * static_cast<double>(kMaxNodeScore));
}

FgdChoice EvaluateFgdCpu(const TaskRequest& task, const Node& node,
                         const PreparedWorkload& workload) {
  const NodeFragmentationDelta eval(node, workload);
  const double before = eval.CpuAwareBefore(kFgdCpuStrandedWeight);
  FgdChoice choice;
  if (!UsesGpu(task)) {
    choice.score =
        FgdCpuScoreOf(before, eval.CpuAwareAfter({.cpu = task.cpu, .devices = {}, .gpu_milli = 0},
                                                 kFgdCpuStrandedWeight));
    return choice;
  }
  if (!task.IsSharing()) {
    choice.devices = PackedDevices(node, task);
    if (choice.devices.empty()) return choice;
    choice.score = FgdCpuScoreOf(
        before, eval.CpuAwareAfter(
                    {.cpu = task.cpu, .devices = choice.devices, .gpu_milli = task.gpu_milli},
                    kFgdCpuStrandedWeight));
    return choice;
  }
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    if (!DeviceFits(node.gpus[i], task)) continue;
    const int32_t device[] = {i};
    const int64_t score = FgdCpuScoreOf(
        before,
        eval.CpuAwareAfter({.cpu = task.cpu, .devices = device, .gpu_milli = task.gpu_milli},
                           kFgdCpuStrandedWeight));
    if (choice.devices.empty() || score > choice.score) {
      choice.score = score;
      choice.devices = {i};
    }
  }
  return choice;
}

}  // namespace tessera::gpushare

namespace tessera {

static_assert(std::derived_from<FgdCpu, ScorePlugin>);
static_assert(std::derived_from<FgdCpu, ReservePlugin>);
static_assert(std::derived_from<FgdCpu, TargetWorkloadPlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> FgdCpu::New(const PluginArgs& args, const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  if (absl::Status s = gpushare::CheckTargetWorkload(kName, handle.target_workload); !s.ok()) {
    return s;
  }
  return std::make_unique<FgdCpu>(*handle.target_workload);
}

SchedStatus FgdCpu::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                          int64_t* score) const {
  *score = gpushare::EvaluateFgdCpu(task, node, workload_).score;
  return {};
}

SchedStatus FgdCpu::Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                            Placement* placement) {
  if (!gpushare::NeedsDeviceChoice(task, *placement)) return {};
  return gpushare::FillDevices(task, gpushare::EvaluateFgdCpu(task, node, workload_).devices,
                               placement);
}

absl::Status FgdCpu::SetTargetWorkload(const TargetWorkload& workload) {
  if (absl::Status s = gpushare::CheckTargetWorkload(kName, &workload); !s.ok()) return s;
  workload_ = gpushare::PreparedWorkload(workload);
  return absl::OkStatus();
}

}  // namespace tessera

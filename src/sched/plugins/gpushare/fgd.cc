#include "sched/plugins/gpushare/fgd.h"

#include <cmath>
#include <concepts>

#include "fmt/format.h"
#include "sched/plugins/gpushare/policy_support.h"

namespace tessera::gpushare {

absl::Status CheckTargetWorkload(std::string_view plugin, const TargetWorkload* workload) {
  if (workload == nullptr) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: needs a target workload (handle.target_workload is null); the wiring must derive "
        "one from the expected task mix",
        plugin));
  }
  for (size_t i = 0; i < workload->classes.size(); ++i) {
    const double p = workload->classes[i].probability;
    if (!(p >= 0 && p <= 1)) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: target_workload.classes[{}].probability: must be in [0, 1], got {}", plugin, i, p));
    }
  }
  return absl::OkStatus();
}

int64_t FgdScoreOf(double before, double after) {
  // The artifact's float operations, in its order, so that truncation ties where it ties.
  const double x = (before - after) / 1000;
  const double sigmoid = 1.0 / (1.0 + std::exp(-x));
  return static_cast<int64_t>(sigmoid * static_cast<double>(kMaxNodeScore));
}

FgdChoice EvaluateFgd(const TaskRequest& task, const Node& node, const PreparedWorkload& workload) {
  const NodeFragmentationDelta eval(node, workload);
  FgdChoice choice;
  if (!UsesGpu(task)) {
    choice.score =
        FgdScoreOf(eval.Before(), eval.After({.cpu = task.cpu, .devices = {}, .gpu_milli = 0}));
    return choice;
  }
  if (!task.IsSharing()) {
    choice.devices = PackedDevices(node, task);
    if (choice.devices.empty()) return choice;
    choice.score = FgdScoreOf(
        eval.Before(),
        eval.After({.cpu = task.cpu, .devices = choice.devices, .gpu_milli = task.gpu_milli}));
    return choice;
  }
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    if (!DeviceFits(node.gpus[i], task)) continue;
    const int32_t device[] = {i};
    const int64_t score =
        FgdScoreOf(eval.Before(),
                   eval.After({.cpu = task.cpu, .devices = device, .gpu_milli = task.gpu_milli}));
    if (choice.devices.empty() || score > choice.score) {
      choice.score = score;
      choice.devices = {i};
    }
  }
  return choice;
}

}  // namespace tessera::gpushare

namespace tessera {

static_assert(std::derived_from<Fgd, ScorePlugin>);
static_assert(std::derived_from<Fgd, ReservePlugin>);
static_assert(std::derived_from<Fgd, TargetWorkloadPlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> Fgd::New(const PluginArgs& args, const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  if (absl::Status s = gpushare::CheckTargetWorkload(kName, handle.target_workload); !s.ok()) {
    return s;
  }
  return std::make_unique<Fgd>(*handle.target_workload);
}

SchedStatus Fgd::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                       int64_t* score) const {
  *score = gpushare::EvaluateFgd(task, node, workload_).score;
  return {};
}

SchedStatus Fgd::Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                         Placement* placement) {
  if (!gpushare::NeedsDeviceChoice(task, *placement)) return {};
  return gpushare::FillDevices(task, gpushare::EvaluateFgd(task, node, workload_).devices,
                               placement);
}

absl::Status Fgd::SetTargetWorkload(const TargetWorkload& workload) {
  if (absl::Status s = gpushare::CheckTargetWorkload(kName, &workload); !s.ok()) return s;
  workload_ = gpushare::PreparedWorkload(workload);
  return absl::OkStatus();
}

}  // namespace tessera

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

int64_t FgdScoreOf(double before, double after, double scale) {
  // The artifact's float operations, in its order, so that truncation ties where it ties.
  const double x = (before - after) / scale;
  const double sigmoid = 1.0 / (1.0 + std::exp(-x));
  return static_cast<int64_t>(sigmoid * static_cast<double>(kMaxNodeScore));
}

FgdChoice EvaluateFgd(const TaskRequest& task, const Node& node, const PreparedWorkload& workload,
                      const FgdMeasure& measure) {
  const NodeFragmentationDelta eval(node, workload);
  // The paper's measure takes its own path, so that FGD's values are the artifact's exactly.
  const bool papers = measure.stranded_weight == 0;
  const double before = papers ? eval.Before() : eval.CpuAwareBefore(measure.stranded_weight);
  const auto score = [&](std::span<const int32_t> devices, int64_t gpu_milli) {
    const HypotheticalPlacement placement{
        .cpu = task.cpu, .devices = devices, .gpu_milli = gpu_milli};
    return FgdScoreOf(before,
                      papers ? eval.After(placement)
                             : eval.CpuAwareAfter(placement, measure.stranded_weight),
                      measure.scale);
  };
  FgdChoice choice;
  if (!UsesGpu(task)) {
    choice.score = score({}, 0);
    return choice;
  }
  if (!task.IsSharing()) {
    choice.devices = PackedDevices(node, task);
    if (choice.devices.empty()) return choice;
    choice.score = score(choice.devices, task.gpu_milli);
    return choice;
  }
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) {
    if (!DeviceFits(node.gpus[i], task)) continue;
    const int32_t device[] = {i};
    const int64_t device_score = score(device, task.gpu_milli);
    if (choice.devices.empty() || device_score > choice.score) {
      choice.score = device_score;
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
  return NewVariant(kName, gpushare::FgdMeasure{}, args, handle);
}

absl::StatusOr<std::unique_ptr<Plugin>> Fgd::NewVariant(std::string_view name,
                                                        const gpushare::FgdMeasure& measure,
                                                        const PluginArgs& args,
                                                        const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(name, args); !s.ok()) return s;
  if (absl::Status s = gpushare::CheckTargetWorkload(name, handle.target_workload); !s.ok()) {
    return s;
  }
  return std::make_unique<Fgd>(name, measure, *handle.target_workload);
}

SchedStatus Fgd::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                       int64_t* score) const {
  *score = gpushare::EvaluateFgd(task, node, workload_, measure_).score;
  return {};
}

SchedStatus Fgd::Reserve(CycleState& state, const TaskRequest& task, const Node& node,
                         Placement* placement) {
  if (!gpushare::NeedsDeviceChoice(task, *placement)) return {};
  return gpushare::FillDevices(
      task, gpushare::EvaluateFgd(task, node, workload_, measure_).devices, placement);
}

absl::Status Fgd::SetTargetWorkload(const TargetWorkload& workload) {
  if (absl::Status s = gpushare::CheckTargetWorkload(name_, &workload); !s.ok()) return s;
  workload_ = gpushare::PreparedWorkload(workload);
  return absl::OkStatus();
}

}  // namespace tessera

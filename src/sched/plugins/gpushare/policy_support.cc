#include "sched/plugins/gpushare/policy_support.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera::gpushare {

absl::Status CheckNoArgs(std::string_view plugin, const PluginArgs& args) {
  if (args.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("{}: unknown argument \"{}\" (accepted: none)", plugin, args.begin()->first));
}

DeviceList PackedDevices(const Node& node, const TaskRequest& task) {
  DeviceList order;
  for (int32_t i = 0; i < static_cast<int32_t>(node.gpus.size()); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&node](int32_t a, int32_t b) {
    return node.gpus[a].FreeMilli() < node.gpus[b].FreeMilli();
  });
  DeviceList chosen;
  for (int32_t i : order) {
    if (static_cast<int32_t>(chosen.size()) == task.gpu_count) break;
    if (DeviceFits(node.gpus[i], task)) chosen.push_back(i);
  }
  if (static_cast<int32_t>(chosen.size()) < task.gpu_count) return {};
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

SchedStatus FillDevices(const TaskRequest& task, const DeviceList& devices, Placement* placement) {
  if (static_cast<int32_t>(devices.size()) < task.gpu_count || devices.empty()) {
    return SchedStatus::Unschedulable(kNoFittingDevices);
  }
  placement->gpus.assign(devices.begin(), devices.end());
  placement->gpu_milli = task.gpu_milli;
  placement->gpu_memory = task.gpu_memory;
  return {};
}

SchedStatus TightestDeviceReserve::Reserve(CycleState& state, const TaskRequest& task,
                                           const Node& node, Placement* placement) {
  if (!NeedsDeviceChoice(task, *placement)) return {};
  return FillDevices(task, SelectTightestDevices(node, task), placement);
}

}  // namespace tessera::gpushare

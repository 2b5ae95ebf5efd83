#include "core/device_selection.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tessera {

bool DeviceFits(const GpuDevice& d, const TaskRequest& task) {
  // Cheap integer checks first; the model comparison last.
  if (!d.healthy) return false;
  if (task.gpu_milli >= kMilliGpuPerDevice ? !d.IsFullyFree() : d.FreeMilli() < task.gpu_milli) {
    return false;
  }
  return d.FreeMemory() >= task.gpu_memory && task.AllowsModel(d.model);
}

DeviceList FeasibleDevices(const Node& node, const TaskRequest& task) {
  DeviceList feasible;
  for (const GpuDevice& device : node.gpus) {
    if (DeviceFits(device, task)) feasible.push_back(device.index);
  }
  std::sort(feasible.begin(), feasible.end());
  return feasible;
}

DeviceList SelectTightestDevices(const Node& node, const TaskRequest& task) {
  if (task.gpu_count <= 0) return {};
  absl::InlinedVector<const GpuDevice*, 8> fitting;
  for (const GpuDevice& device : node.gpus) {
    if (DeviceFits(device, task)) fitting.push_back(&device);
  }
  const size_t wanted = static_cast<size_t>(task.gpu_count);
  if (fitting.size() < wanted) return {};
  // Least free milli-GPU first, lowest index on ties. Whole-GPU tasks only fit fully free
  // devices, so for them this is plain index order.
  std::partial_sort(fitting.begin(), fitting.begin() + wanted, fitting.end(),
                    [](const GpuDevice* a, const GpuDevice* b) {
                      if (a->FreeMilli() != b->FreeMilli()) return a->FreeMilli() < b->FreeMilli();
                      return a->index < b->index;
                    });
  DeviceList chosen(wanted);
  for (size_t i = 0; i < wanted; ++i) chosen[i] = fitting[i]->index;
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace tessera

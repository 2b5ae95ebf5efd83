#include "sched/preemption/node_room.h"

#include <algorithm>
#include <limits>

namespace tessera {
namespace {

int64_t Lookup(const std::map<std::string, int64_t, std::less<>>& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

int64_t At(const absl::InlinedVector<int64_t, 8>& v, size_t i) { return i < v.size() ? v[i] : 0; }

// As NodeResourcesFit: a request of zero always fits.
bool Short(int64_t want, int64_t available) { return want > 0 && want > available; }

}  // namespace

void NodeRoom::Apply(const TaskRequest& task, const Placement& placement, int64_t sign) {
  cpu += sign * task.cpu;
  memory += sign * task.memory;
  for (const auto& [name, value] : task.extended) extended[name] += sign * value;
  for (int32_t index : placement.gpus) {
    const auto i = static_cast<size_t>(index);
    if (gpu_milli.size() <= i) {
      gpu_milli.resize(i + 1, 0);
      gpu_memory.resize(i + 1, 0);
    }
    gpu_milli[i] += sign * placement.gpu_milli;
    gpu_memory[i] += sign * placement.gpu_memory;
  }
}

bool FitsWithRoom(const TaskRequest& task, const Node& node, const NodeRoom& room) {
  if (Short(task.cpu, node.FreeCpu() + room.cpu)) return false;
  if (Short(task.memory, node.FreeMemory() + room.memory)) return false;
  for (const auto& [name, want] : task.extended) {
    const int64_t free = Lookup(node.allocatable.extended, name) -
                         Lookup(node.allocated.extended, name) + Lookup(room.extended, name);
    if (Short(want, free)) return false;
  }
  if (!task.NeedsGpu()) return true;
  int32_t fitting = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    const GpuDevice& d = node.gpus[i];
    if (!d.healthy) continue;
    const int64_t used_milli = d.used_milli - At(room.gpu_milli, i);
    const int64_t free_memory = d.memory - d.used_memory + At(room.gpu_memory, i);
    const bool milli_fits = task.gpu_milli >= kMilliGpuPerDevice
                                ? used_milli == 0
                                : kMilliGpuPerDevice - used_milli >= task.gpu_milli;
    if (milli_fits && free_memory >= task.gpu_memory && task.AllowsModel(d.model) &&
        ++fitting == task.gpu_count) {
      return true;
    }
  }
  return false;
}

bool MayFitWithRoom(const TaskRequest& task, const Node& node, const RoomTotals& totals) {
  if (Short(task.cpu, node.FreeCpu() + totals.cpu)) return false;
  if (Short(task.memory, node.FreeMemory() + totals.memory)) return false;
  return MayFitGpusWithRoom(task, node, totals.gpu_milli);
}

bool MayFitGpusWithRoom(const TaskRequest& task, const Node& node, int64_t gpu_milli) {
  if (!task.NeedsGpu()) return true;
  // Every device's free milli-GPU, summed, bounds what the fitting devices offer.
  const int64_t devices = static_cast<int64_t>(node.gpus.size());
  return devices * kMilliGpuPerDevice - node.allocated.gpu + gpu_milli >= task.TotalGpuMilli();
}

std::optional<int64_t> MaxCopies(const TaskRequest& task, const Node& node) {
  if (task.NeedsGpu() && task.gpu_milli < kMilliGpuPerDevice) return std::nullopt;
  int64_t copies = std::numeric_limits<int64_t>::max();
  auto bound = [&](int64_t want, int64_t free) {
    if (want > 0) copies = std::min(copies, std::max<int64_t>(free, 0) / want);
  };
  bound(task.cpu, node.FreeCpu());
  bound(task.memory, node.FreeMemory());
  for (const auto& [name, want] : task.extended) {
    bound(want, Lookup(node.allocatable.extended, name) - Lookup(node.allocated.extended, name));
  }
  if (task.NeedsGpu()) {
    const auto devices = std::count_if(node.gpus.begin(), node.gpus.end(), [&](const GpuDevice& d) {
      return d.IsFullyFree() && d.FreeMemory() >= task.gpu_memory && task.AllowsModel(d.model);
    });
    bound(task.gpu_count, devices);
  }
  return copies;
}

}  // namespace tessera

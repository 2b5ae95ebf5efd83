#include "sched/plugins/gpushare/gpu_packing.h"

#include <algorithm>
#include <concepts>

namespace tessera {

static_assert(std::derived_from<GpuPacking, ScorePlugin>);
static_assert(std::derived_from<GpuPacking, ReservePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> GpuPacking::New(const PluginArgs& args,
                                                        const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  return std::make_unique<GpuPacking>();
}

SchedStatus GpuPacking::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                              int64_t* score) const {
  *score = gpushare::GpuPackingScore(task, node);
  return {};
}

}  // namespace tessera

namespace tessera::gpushare {

int64_t GpuPackingScore(const TaskRequest& task, const Node& node) {
  if (!UsesGpu(task)) return kMinNodeScore;
  const auto devices = static_cast<int64_t>(node.gpus.size());
  const auto fully_free = static_cast<int64_t>(
      std::count_if(node.gpus.begin(), node.gpus.end(),
                    [](const GpuDevice& d) { return d.FreeMilli() == kMilliGpuPerDevice; }));
  if (fully_free == devices) return std::max(kMaxNodeScore / 3 - fully_free, fully_free);

  // The devices the task would take: fitting ones, least free first (ties by index).
  DeviceList order;
  for (int32_t i = 0; i < static_cast<int32_t>(devices); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&node](int32_t a, int32_t b) {
    return node.gpus[a].FreeMilli() < node.gpus[b].FreeMilli();
  });
  int32_t wanted = task.gpu_count;
  int64_t fully_free_taken = 0;
  int64_t free_percent_taken = 0;
  for (int32_t i : order) {
    if (wanted == 0) break;
    const int64_t free = node.gpus[i].FreeMilli();
    if (free < task.gpu_milli) continue;
    --wanted;
    if (free == kMilliGpuPerDevice) ++fully_free_taken;
    free_percent_taken += free * 100 / kMilliGpuPerDevice;
  }
  if (wanted != 0) return kMinNodeScore;
  if (fully_free_taken > 0) {
    return std::max(kMaxNodeScore / 2 - fully_free_taken, kMaxNodeScore / 3);
  }
  return std::max(kMaxNodeScore - free_percent_taken / 10, kMaxNodeScore / 2);
}

}  // namespace tessera::gpushare

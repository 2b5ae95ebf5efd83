#include "sched/plugins/gpushare/dot_product.h"

#include <algorithm>
#include <concepts>

namespace tessera {

static_assert(std::derived_from<DotProduct, ScorePlugin>);
static_assert(std::derived_from<DotProduct, ReservePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> DotProduct::New(const PluginArgs& args,
                                                        const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  return std::make_unique<DotProduct>();
}

SchedStatus DotProduct::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                              int64_t* score) const {
  *score = gpushare::DotProductScore(task, node);
  return {};
}

}  // namespace tessera

namespace tessera::gpushare {

int64_t DotProductScore(const TaskRequest& task, const Node& node) {
  if (node.FreeCpu() < task.cpu) return kMinNodeScore;
  // The artifact's float operations, in its order, so that truncation ties where it ties.
  const double cpu_spec = static_cast<double>(kMaxSpecCpu);
  const double gpu_spec = static_cast<double>(kMaxSpecGpu);
  const double node_cpu = static_cast<double>(node.FreeCpu()) / cpu_spec;
  const double node_gpu = static_cast<double>(node.FreeGpuMilli()) / gpu_spec;
  const double task_cpu = static_cast<double>(task.cpu) / cpu_spec;
  const double task_gpu = static_cast<double>(UsesGpu(task) ? task.TotalGpuMilli() : 0) / gpu_spec;
  double dot = 0;
  dot += node_cpu * task_cpu;
  dot += node_gpu * task_gpu;
  const double alignment = 1 - dot / 2;
  const auto score = static_cast<int64_t>(static_cast<double>(kMaxNodeScore) * alignment);
  return std::clamp(score, kMinNodeScore, kMaxNodeScore);
}

}  // namespace tessera::gpushare

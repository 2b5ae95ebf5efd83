#include "sched/plugins/gpushare/best_fit.h"

#include <algorithm>
#include <concepts>

namespace tessera {

static_assert(std::derived_from<BestFit, ScorePlugin>);
static_assert(std::derived_from<BestFit, ReservePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> BestFit::New(const PluginArgs& args, const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  return std::make_unique<BestFit>();
}

SchedStatus BestFit::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                           int64_t* score) const {
  *score = gpushare::BestFitScore(task, node);
  return {};
}

SchedStatus BestFit::NormalizeScore(const CycleState& state, const TaskRequest& task,
                                    std::span<int64_t> scores) const {
  gpushare::MinMaxNormalize(scores);
  return {};
}

}  // namespace tessera

namespace tessera::gpushare {

int64_t BestFitScore(const TaskRequest& task, const Node& node) {
  const int64_t free_cpu = node.FreeCpu();
  const int64_t free_gpu = node.FreeGpuMilli();
  const int64_t want_gpu = UsesGpu(task) ? task.TotalGpuMilli() : 0;
  if (free_cpu < task.cpu || free_gpu < want_gpu) return kMinNodeScore;
  // The artifact's float operations, in its order, so that truncation ties where it ties.
  constexpr double kWeight = 0.5;
  double s = 0;
  s += static_cast<double>(free_cpu - task.cpu) / static_cast<double>(kMaxSpecCpu) * kWeight;
  s += static_cast<double>(free_gpu - want_gpu) / static_cast<double>(kMaxSpecGpu) * kWeight;
  const auto score = static_cast<int64_t>((1.0 - s) * static_cast<double>(kMaxNodeScore));
  return std::clamp(score, kMinNodeScore, kMaxNodeScore);
}

void MinMaxNormalize(std::span<int64_t> scores) {
  if (scores.empty()) return;
  const auto [lowest, highest] = std::minmax_element(scores.begin(), scores.end());
  const int64_t low = *lowest;
  const int64_t range = *highest - low;
  for (int64_t& s : scores) {
    s = range == 0 ? kMinNodeScore
                   : (s - low) * (kMaxNodeScore - kMinNodeScore) / range + kMinNodeScore;
  }
}

}  // namespace tessera::gpushare

#include "server/recent_workload.h"

#include <algorithm>
#include <utility>

namespace tessera::server {

RecentWorkload::RecentWorkload(RecentWorkloadOptions options) : options_(options) {
  options_.capacity = std::max(options_.capacity, 1);
}

void RecentWorkload::Add(const TaskRequest& task) {
  std::vector<std::string> models = task.gpu_models;
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  Shape shape{task.cpu, task.NeedsGpu() ? task.gpu_milli : 0, task.gpu_count, std::move(models)};
  if (static_cast<int32_t>(window_.size()) == options_.capacity) {
    if (window_.front() == shape) {
      // The same shape leaves and enters: the counts stay as they are.
      window_.pop_front();
      window_.push_back(std::move(shape));
      return;
    }
    auto oldest = counts_.find(window_.front());
    if (--oldest->second == 0) counts_.erase(oldest);
    window_.pop_front();
  }
  ++counts_[shape];
  window_.push_back(std::move(shape));
  ++revision_;
}

TargetWorkload RecentWorkload::Workload() const {
  std::vector<std::pair<const Shape*, int32_t>> sorted;
  sorted.reserve(counts_.size());
  for (const auto& [shape, count] : counts_) sorted.emplace_back(&shape, count);
  // Stable: equal counts keep the map's ascending shape order.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const double needed =
      options_.popularity_threshold_pct * static_cast<double>(window_.size()) / 100.0;
  int64_t covered = 0;
  size_t kept = 0;
  while (kept < sorted.size() && static_cast<double>(covered) < needed) {
    covered += sorted[kept].second;
    ++kept;
  }
  TargetWorkload workload;
  workload.classes.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    const auto& [cpu, gpu_milli, gpu_count, models] = *sorted[i].first;
    TaskClassShare share;
    share.request.cpu = cpu;
    share.request.gpu_milli = gpu_milli;
    share.request.gpu_count = gpu_count;
    share.request.gpu_models = models;
    share.probability = static_cast<double>(sorted[i].second) / static_cast<double>(covered);
    workload.classes.push_back(std::move(share));
  }
  return workload;
}

}  // namespace tessera::server

#include "sim/alibaba/target_workload_builder.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "fmt/format.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {
namespace {

using ClassKey = std::tuple<int64_t, int64_t, int32_t, std::string>;  // cpu, milli, count, spec

ClassKey KeyOf(const TraceTask& t) {
  return {t.request.cpu, t.request.gpu_milli, t.request.gpu_count, t.gpu_spec};
}

}  // namespace

TargetWorkload BuildTargetWorkload(const std::vector<TraceTask>& tasks,
                                   const TargetWorkloadOptions& options,
                                   TargetWorkloadStats* stats) {
  std::map<ClassKey, std::pair<int64_t, const TraceTask*>> groups;
  int64_t considered = 0;
  for (const TraceTask& t : tasks) {
    if (!options.include_cpu_only && !t.request.NeedsGpu()) continue;
    auto& [count, example] = groups[KeyOf(t)];
    if (count++ == 0) example = &t;
    ++considered;
  }
  std::vector<std::pair<ClassKey, std::pair<int64_t, const TraceTask*>>> sorted(groups.begin(),
                                                                                groups.end());
  // Stable: equal counts keep the map's ascending key order.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });

  const double needed = options.popularity_threshold_pct * static_cast<double>(considered) / 100.0;
  int64_t covered = 0;
  size_t kept = 0;
  while (kept < sorted.size() && static_cast<double>(covered) < needed) {
    covered += sorted[kept].second.first;
    ++kept;
  }

  TargetWorkload workload;
  workload.classes.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    const TraceTask& example = *sorted[i].second.second;
    TaskClassShare share;
    share.request.cpu = example.request.cpu;
    share.request.gpu_count = example.request.gpu_count;
    share.request.gpu_milli = example.request.gpu_milli;
    share.request.gpu_models = example.request.gpu_models;
    share.probability = static_cast<double>(sorted[i].second.first) / static_cast<double>(covered);
    workload.classes.push_back(std::move(share));
  }
  if (stats != nullptr) {
    stats->distinct_classes = static_cast<int32_t>(sorted.size());
    stats->kept_classes = static_cast<int32_t>(kept);
    stats->covered_pct =
        considered == 0 ? 0
                        : 100.0 * static_cast<double>(covered) / static_cast<double>(considered);
  }
  return workload;
}

absl::StatusOr<TargetWorkload> LoadTargetWorkload(const std::string& pods_path,
                                                  const TargetWorkloadOptions& options,
                                                  TargetWorkloadStats* stats) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(pods_path));
  TESSERA_ASSIGN_OR_RETURN(PodList pods, ParsePodList(text, pods_path, GpuSpecModels(text)));
  const bool any = std::any_of(pods.tasks.begin(), pods.tasks.end(), [&](const TraceTask& t) {
    return options.include_cpu_only || t.request.NeedsGpu();
  });
  if (!any) return absl::InvalidArgumentError(fmt::format("{}: no GPU task", pods_path));
  return BuildTargetWorkload(pods.tasks, options, stats);
}

}  // namespace tessera::sim::alibaba

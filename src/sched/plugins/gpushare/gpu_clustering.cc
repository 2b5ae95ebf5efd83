#include "sched/plugins/gpushare/gpu_clustering.h"

#include <algorithm>
#include <concepts>
#include <map>

#include "fmt/format.h"
#include "core/hosted_gpu_classes.h"

namespace tessera {

static_assert(std::derived_from<GpuClustering, ScorePlugin>);
static_assert(std::derived_from<GpuClustering, ReservePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> GpuClustering::New(const PluginArgs& args,
                                                           const Handle& handle) {
  if (absl::Status s = gpushare::CheckNoArgs(kName, args); !s.ok()) return s;
  return std::make_unique<GpuClustering>();
}

SchedStatus GpuClustering::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                                 int64_t* score) const {
  const std::optional<int64_t> s = gpushare::GpuClusteringScore(task, node);
  if (!s.has_value()) {
    *score = kMinNodeScore;
    return SchedStatus::Error(fmt::format(
        "{}: node {} has GPUs in use but no hosted GPU task class recorded (the cluster state "
        "must call RecordHostedClass on Assume and Forget)",
        kName, node.name));
  }
  *score = *s;
  return {};
}

}  // namespace tessera

namespace tessera::gpushare {
namespace {

bool HasGpuInUse(const Node& node) {
  return std::any_of(node.gpus.begin(), node.gpus.end(),
                     [](const GpuDevice& d) { return d.used_milli > 0; });
}

}  // namespace

std::optional<int64_t> GpuClusteringScore(const TaskRequest& task, const Node& node) {
  const int32_t own = GpuRequestClass(task);
  if (own == kNoGpuClass) return kMinNodeScore;
  const std::map<int32_t, int32_t>& hosted = node.hosted_gpu_classes;
  if (hosted.empty() && HasGpuInUse(node)) return std::nullopt;

  const int64_t quarter = kMaxNodeScore / 4;
  const int64_t bonus = quarter * (kMaxSpecGpu - node.FreeGpuMilli()) / kMaxSpecGpu;
  int64_t band;
  if (hosted.contains(own)) {
    band = hosted.size() == 1 ? 3 * quarter : 2 * quarter;
  } else {
    band = hosted.empty() ? quarter : 0;
  }
  return std::clamp(band + bonus, kMinNodeScore, kMaxNodeScore);
}

}  // namespace tessera::gpushare

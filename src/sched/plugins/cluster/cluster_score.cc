#include "sched/plugins/cluster/cluster_score.h"

#include <algorithm>
#include <charconv>
#include <concepts>

#include "fmt/format.h"
#include "sched/plugins/basic/plugin_args.h"
#include "tessera/sched/cluster_count.h"

namespace tessera {

static_assert(std::derived_from<ClusterScore, ScorePlugin>);
static_assert(std::derived_from<ClusterScore, PreScorePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> ClusterScore::New(const PluginArgs& args,
                                                          const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {kLabelArg, kMaxTierArg}); !s.ok()) return s;
  std::string label(kCostTierLabel);
  int64_t max_tier = kDefaultMaxTier;
  if (auto it = args.find(kLabelArg); it != args.end()) {
    if (it->second.empty()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}: must not be empty", kName, kLabelArg));
    }
    label = it->second;
  }
  if (auto it = args.find(kMaxTierArg); it != args.end()) {
    const std::string& text = it->second;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), max_tier);
    if (ec != std::errc() || ptr != text.data() + text.size() || max_tier < 1 ||
        max_tier > kMaxMaxTier) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}: must be an integer in 1..{}, not \"{}\"", kName, kMaxTierArg,
                      kMaxMaxTier, text));
    }
  }
  return std::make_unique<ClusterScore>(std::move(label), max_tier);
}

int64_t ClusterScore::TierOf(const Node& node) const {
  auto it = node.labels.find(label_);
  if (it == node.labels.end()) return max_tier_;
  const std::string& text = it->second;
  int64_t tier = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), tier);
  if (ec != std::errc() || ptr != text.data() + text.size() || tier < 0) return max_tier_;
  return std::min(tier, max_tier_);
}

SchedStatus ClusterScore::PreScore(CycleState& state, const TaskRequest& task) {
  const ClusterCount* count = state.Read(kClusterCountKey);
  return count == nullptr || count->clusters <= 1 ? SchedStatus::Skip() : SchedStatus();
}

SchedStatus ClusterScore::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                                int64_t* score) const {
  *score = (max_tier_ - TierOf(node)) * kMaxNodeScore / max_tier_;
  return {};
}

}  // namespace tessera

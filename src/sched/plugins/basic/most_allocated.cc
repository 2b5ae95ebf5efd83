#include "sched/plugins/basic/most_allocated.h"

#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<MostAllocated, ScorePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> MostAllocated::New(const PluginArgs& args,
                                                           const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {kResourcesArg}); !s.ok()) return s;
  auto it = args.find(kResourcesArg);
  if (it == args.end()) return std::make_unique<MostAllocated>();
  absl::StatusOr<ResourceWeights> weights = ParseResourceWeights(kName, it->second);
  if (!weights.ok()) return weights.status();
  return std::make_unique<MostAllocated>(*std::move(weights));
}

SchedStatus MostAllocated::Score(const CycleState& state, const TaskRequest& task, const Node& node,
                                 int64_t* score) const {
  *score = AllocationScore(weights_, &MostRequestedScore, task, node);
  return {};
}

}  // namespace tessera

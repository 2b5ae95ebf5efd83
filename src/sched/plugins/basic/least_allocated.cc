#include "sched/plugins/basic/least_allocated.h"

#include <concepts>

#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<LeastAllocated, ScorePlugin>);

absl::StatusOr<std::unique_ptr<Plugin>> LeastAllocated::New(const PluginArgs& args,
                                                            const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {kResourcesArg}); !s.ok()) return s;
  auto it = args.find(kResourcesArg);
  if (it == args.end()) return std::make_unique<LeastAllocated>();
  absl::StatusOr<ResourceWeights> weights = ParseResourceWeights(kName, it->second);
  if (!weights.ok()) return weights.status();
  return std::make_unique<LeastAllocated>(*std::move(weights));
}

SchedStatus LeastAllocated::Score(const CycleState& state, const TaskRequest& task,
                                  const Node& node, int64_t* score) const {
  *score = AllocationScore(weights_, &LeastRequestedScore, task, node);
  return {};
}

}  // namespace tessera

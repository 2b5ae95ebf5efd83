#include "sched/preemption/victim_search.h"

#include <algorithm>
#include <numeric>

namespace tessera {
namespace {

void ForgetCandidate(ClusterState& state, const VictimCandidate& c) {
  for (size_t t = 0; t < c.tasks.size(); ++t) state.Forget(c.tasks[t], c.placements[t]);
}

void AssumeCandidate(ClusterState& state, const VictimCandidate& c) {
  for (size_t t = 0; t < c.tasks.size(); ++t) (void)state.Assume(c.tasks[t], c.placements[t]);
}

}  // namespace

std::optional<VictimChoice> FindVictims(ClusterState& state, Framework& framework,
                                        std::span<const TaskRequest> tasks, int32_t min_available,
                                        std::span<const VictimCandidate> candidates) {
  std::vector<int32_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (candidates[a].priority != candidates[b].priority) {
      return candidates[a].priority < candidates[b].priority;
    }
    return candidates[a].start_time > candidates[b].start_time;
  });
  std::vector<int32_t> victims;
  GangAttempt gang = framework.ScheduleGang(state, "preemptor", tasks, min_available,
                                            MatchMode::kWithoutAllocating);
  for (size_t k = 0; k < order.size() && !gang.status.ok(); ++k) {
    ForgetCandidate(state, candidates[order[k]]);
    victims.push_back(order[k]);
    gang = framework.ScheduleGang(state, "preemptor", tasks, min_available,
                                  MatchMode::kWithoutAllocating);
  }
  std::optional<VictimChoice> choice;
  if (gang.status.ok()) {
    for (size_t k = victims.size(); k-- > 0;) {
      AssumeCandidate(state, candidates[victims[k]]);
      GangAttempt without = framework.ScheduleGang(state, "preemptor", tasks, min_available,
                                                   MatchMode::kWithoutAllocating);
      if (without.status.ok()) {
        gang = std::move(without);
        victims.erase(victims.begin() + static_cast<ptrdiff_t>(k));
      } else {
        ForgetCandidate(state, candidates[victims[k]]);
      }
    }
    choice = VictimChoice{victims, gang.placements, gang.task_indices};
    std::sort(choice->victims.begin(), choice->victims.end());
  }
  for (int32_t v : victims) AssumeCandidate(state, candidates[v]);
  return choice;
}

}  // namespace tessera

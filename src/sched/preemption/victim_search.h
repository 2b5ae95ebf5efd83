// Victim search: which running gangs to evict so that a preemptor's gang fits.
//
// Given the live cluster state, the placement Framework, the preemptor's tasks (its gang being
// the first `min_available` of them, placed all-or-nothing) and the running gangs the caller
// allows to be evicted (the candidates), FindVictims picks the victims:
//   - whole gangs only: a candidate is evicted with every task it runs, on every node
//     (Volcano's preempt and reclaim actions evict whole jobs, never part of a gang);
//   - the lowest priorities first: the set with the lowest highest-priority victim wins, even
//     when a set of higher priority would need fewer victims (kube-scheduler's
//     DefaultPreemption, pickOneNodeForPreemption: "lowest highest-priority victim");
//   - then the fewest victims, then the lowest sum of victim priorities (kube-scheduler's next
//     criteria);
//   - then the most recently started (Slurm's preemption evicts the youngest jobs first, which
//     loses the least work): the set whose victims' start times sum highest;
//   - irreducible: no victim of the result can be spared — with it kept, the Framework does not
//     place the gang (checked victim by victim, the most important first: highest priority,
//     then the oldest).
// The search is greedy, not an exhaustive optimisation: for each gang task that does not fit,
// every node holding candidates is ranked by the victim set it would need on its own (computed
// by resource arithmetic, kube-scheduler's selectVictimsOnNode: evict every eligible candidate
// of the lowest priority levels, then reprieve them back, the most important first, while the
// task still fits); the best node's set is evicted, and the Framework — with its filters and
// scorers — decides whether the task now fits. The final answer is verified by
// Framework::ScheduleGang(kWithoutAllocating) with the victims' tasks forgotten, and its
// placements are returned.
//
// Eligibility (priority comparisons, the preemptible flag, minimum runtimes, reclaim from
// borrowing queues, rate limits) is the caller's: every candidate given may be evicted. A
// candidate's `tasks` and `placements` must be what the state has assumed for it.
//
// Cost: one pass over the candidates' placements, resource arithmetic on the nodes holding
// candidates of the lowest priority levels needed, and a few Framework attempts (each costs
// work only on the nodes whose version changed). No allocation of the state is left changed:
// victims are forgotten and assumed back before returning (node versions move, which makes the
// Framework re-evaluate those nodes on its next attempt).
//
// Thread-safety: as the Framework and the ClusterState it is given — the scheduling thread's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/job.h"
#include "core/placement.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "tessera/common/clock.h"

namespace tessera {

// One running gang that may be evicted whole.
struct VictimCandidate {
  int64_t job = 0;                    // the caller's handle
  int32_t priority = 0;               // base priority (no aging)
  TimePoint start_time{};             // its latest gang start
  std::vector<TaskRequest> tasks;     // its placed tasks
  std::vector<Placement> placements;  // same length as tasks, as assumed in the state
};

struct VictimChoice {
  std::vector<int32_t> victims;       // indices into the candidates, ascending
  std::vector<Placement> placements;  // where the preemptor's gang tasks would go once they are gone
  std::vector<int32_t> task_indices;  // the preemptor task index of each placement
};

// Finds the victims whose eviction lets `tasks` (gang: first `min_available` all-or-nothing)
// fit, as described above. An empty victim list when the gang fits already. nullopt when
// evicting every candidate would still not make the gang fit (then nothing must be preempted),
// or when the Framework reports an error. `state` is left exactly as given (same allocations;
// node versions may change).
// REQUIRES: 1 <= min_available <= tasks.size(); every candidate assumed in `state` as given.
std::optional<VictimChoice> FindVictims(ClusterState& state, Framework& framework,
                                        std::span<const TaskRequest> tasks, int32_t min_available,
                                        std::span<const VictimCandidate> candidates);

}  // namespace tessera

// Victim search: which running gangs to evict so that a preemptor's gang fits.
//
// Given the live cluster state, the placement Framework, the preemptor's tasks (its gang being
// `min_available` of them, placed all-or-nothing) and the running gangs the caller allows to be
// evicted (the candidates), FindVictims picks the victims. Preference, in this order:
//   1. whole gangs only: a candidate is evicted with every task it runs, on every node
//      (Volcano's preempt and reclaim actions evict whole jobs, never part of a gang);
//   2. the lowest priorities: the set whose highest victim priority is lowest wins, even when
//      a set of higher priority would need fewer victims — evicting three priority-0 jobs is
//      preferred to evicting one priority-1 job (kube-scheduler's DefaultPreemption,
//      pickOneNodeForPreemption: "lowest highest-priority victim");
//   3. then the fewest victims, then the lowest sum of victim priorities (kube-scheduler's
//      following criteria, in our order);
//   4. then the most recently started (Slurm's preemption takes the youngest jobs first, which
//      loses the least work): the set whose victims' start times sum highest;
//   5. irreducible: no victim can be spared — with it kept the Framework does not place the
//      gang (checked victim by victim, the most important first: highest priority, then oldest).
// (1), (2) and (5) always hold; (3) and (4) are the aim of a greedy search, not an exhaustive
// optimisation: in rare multi-resource cases it keeps one victim more than the fewest possible.
//
// How: the candidates are taken a priority level at a time, the lowest first. For each gang
// task that does not fit as things are (in the Framework's order), the search looks for
//   - a single victim, the youngest first, among the level's candidates that hold at least the
//     task's GPUs on one node (its cpu and memory for a CPU-only task): the common case, found
//     without looking at every node;
//   - else, every node holding candidates of the levels so far is ranked by the victims it
//     would need on its own (kube-scheduler's selectVictimsOnNode: release every candidate, then
//     reprieve them, the most important first, while the task still fits; also its best single
//     victim, and its biggest holders first), by resource arithmetic that mirrors the
//     NodeResourcesFit filter (node_room.h), and the best node's victims are evicted.
// The Framework then places the task — its filters (taints, affinity, cordons) and scorers
// decide; a node another filter refuses is passed over. Once the gang's tasks are placed this
// way, Framework::ScheduleGang(kWithoutAllocating) with the victims forgotten verifies the gang,
// and victims are reprieved while it still fits. When the greedy passes do not succeed, every
// candidate on a node where a gang task could fit with all candidates gone is evicted, and the
// gang is tried once: if it fits, pruning makes the set irreducible; if not, nothing can help.
//
// Eligibility (priority comparisons, the preemptible flag, minimum runtimes, reclaim from
// borrowing queues, rate limits) is the caller's: every candidate given may be evicted. A
// candidate's `tasks` and `placements` must be what the state has assumed for it.
//
// The returned placements are where the Framework put the gang's tasks in its last successful
// attempt; with a profile that breaks ties at random, a later attempt may choose other nodes
// among equals (and, for a gang of unlike tasks, occasionally fail where this one succeeded).
//
// Cost: one pass over the candidates (their priorities); the youngest candidates of the lowest
// levels for single victims; when whole nodes must be ranked, one pass over the placements of
// the levels needed (the dominant cost: about 50 ns per candidate task) and arithmetic on the
// nodes whose candidates could make room (over a VictimIndex: no pass over candidates or
// placements; the levels needed are summed node by node and only the youngest are read for
// single victims); a few Framework attempts, each costing work only on
// the nodes whose version changed (a failed one also diagnoses every node). No allocation of
// the state is left changed: victims are forgotten and assumed back before returning (node
// versions move, which makes the Framework re-evaluate those nodes on its next attempt).
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
#include "sched/preemption/victim_candidate.h"
#include "sched/preemption/victim_index.h"
#include "tessera/common/clock.h"

namespace tessera {

struct VictimChoice {
  std::vector<int32_t> victims;  // indices into the candidates, ascending (empty from an index)
  std::vector<int64_t> jobs;     // the victims' handles: in the order of `victims`, or ascending
  std::vector<Placement>
      placements;  // where the preemptor's gang tasks would go once they are gone
  std::vector<int32_t> task_indices;  // the preemptor task index of each placement
};

// Finds the victims whose eviction lets `tasks` (gang: `min_available` of them all-or-nothing)
// fit, as described above. An empty victim list when the gang fits already. nullopt when
// evicting every candidate would still not make the gang fit (then nothing must be preempted),
// or when the Framework reports an error. `state` is left exactly as given (same allocations;
// node versions may change).
// REQUIRES: 1 <= min_available <= tasks.size(); every candidate assumed in `state` as given.
std::optional<VictimChoice> FindVictims(ClusterState& state, Framework& framework,
                                        std::span<const TaskRequest> tasks, int32_t min_available,
                                        std::span<const VictimCandidate> candidates);

// The same over the candidates of `index` whose priority is below `below_priority`: the same
// decisions as over the list of them in ascending handle order, without the pass over every
// candidate's placements the list costs (victim_index.h). The victims are given in `jobs`.
std::optional<VictimChoice> FindVictims(ClusterState& state, Framework& framework,
                                        std::span<const TaskRequest> tasks, int32_t min_available,
                                        const VictimIndex& index, int32_t below_priority);

}  // namespace tessera

// VictimIndex: the running gangs that may be evicted, indexed for victim search and kept across
// searches.
//
// FindVictims over a list of candidates (victim_search.h) first groups them by priority and by
// node and sums what each node's candidates hold — a pass over every candidate's placements on
// every call, which dominates when whole nodes must be ranked. A VictimIndex keeps that grouping
// and is updated as gangs start, grow, end or are evicted (Add, Remove), so a search over it
// reads only the levels and nodes it needs. It holds, per priority level: the candidates in
// youngest-first order (start time descending, then handle ascending), each with the milli-GPU
// it holds in all; per level and node: how many candidates run there and the totals they hold
// (cpu, memory, milli-GPU); per node: the candidates that run there. It also keeps what each
// node of the state searched has free (cpu, memory, milli-GPU over its devices), brought up to
// date from the state's change log (ClusterState::ChangesSince) at each search, so that nodes
// are ranked without reading every node of the state.
//
// A search over an index takes the same decisions as one over the list of its candidates in
// ascending handle order (ties the list breaks by position the index breaks by handle).
//
// Costs: Add and Remove are O(tasks + nodes of the gang + log candidates); a level costs
// 32 bytes per node of the largest node index it has seen. Memory: a copy of every candidate.
//
// Thread-safety: a value type; not thread-safe for concurrent mutation. A search refreshes the
// copy of the nodes' free resources: searches over one index must not run concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "sched/cluster_state.h"
#include "sched/preemption/node_room.h"
#include "sched/preemption/victim_candidate.h"

namespace tessera {

class VictimIndex {
 public:
  // A candidate of one level, in youngest-first order.
  struct Young {
    int64_t start = 0;      // milliseconds since the epoch
    int64_t job = 0;        // the handle
    int32_t slot = 0;       // where the candidate is stored (candidate(slot))
    int64_t gpu_milli = 0;  // milli-GPU it holds over all its nodes
    friend bool operator<(const Young& a, const Young& b) {
      return a.start != b.start ? a.start > b.start : a.job < b.job;
    }
  };
  // What the candidates of one level hold on one node.
  struct NodeHolding {
    RoomTotals totals;
    int32_t holders = 0;  // candidates of the level running there
  };
  // The candidates of one priority.
  struct Level {
    int32_t priority = 0;
    absl::btree_set<Young> youngest;
    std::vector<NodeHolding> nodes;               // by node index; shorter = nothing beyond
    std::map<int64_t, int32_t> gpu_milli_counts;  // candidates by Young::gpu_milli
    // The most milli-GPU one candidate of the level holds over all its nodes.
    int64_t MaxGpuMilli() const { return gpu_milli_counts.rbegin()->first; }
  };

  VictimIndex();
  ~VictimIndex();
  VictimIndex(VictimIndex&&) noexcept;
  VictimIndex& operator=(VictimIndex&&) noexcept;

  // Adds a candidate (its `tasks` and `placements` as assumed in the state), replacing the one
  // with the same handle. Placements with a negative node index are ignored; a candidate
  // without any other is not added.
  void Add(const VictimCandidate& candidate);
  // Removes the candidate with this handle; a no-op when there is none.
  void Remove(int64_t job);
  void Clear();
  bool Contains(int64_t job) const { return slot_of_.contains(job); }
  int64_t size() const { return static_cast<int64_t>(slot_of_.size()); }
  // Whether some candidate has a priority below `priority`.
  bool AnyBelow(int32_t priority) const {
    return !levels_.empty() && levels_.begin()->first < priority;
  }

  // For the search: the levels, lowest priority first; the candidate stored at a slot; slots
  // are below slot_count(); the slots of the candidates running on a node (each once, in no
  // particular order).
  const std::map<int32_t, Level>& levels() const { return levels_; }
  const VictimCandidate& candidate(int32_t slot) const { return slots_[slot]; }
  int32_t slot_count() const { return static_cast<int32_t>(slots_.size()); }
  std::span<const int32_t> holders(int32_t node) const;
  // What each node of `state` has free now, by node index (see above); valid until the next
  // call.
  struct NodeFree {
    int64_t cpu = 0;        // Node::FreeCpu()
    int64_t memory = 0;     // Node::FreeMemory()
    int64_t gpu_milli = 0;  // devices x 1000 - allocated milli-GPU
  };
  std::span<const NodeFree> FreeOf(const ClusterState& state) const;

 private:
  std::vector<VictimCandidate> slots_;
  std::vector<int32_t> free_slots_;
  absl::flat_hash_map<int64_t, int32_t> slot_of_;
  std::map<int32_t, Level> levels_;
  std::vector<std::vector<int32_t>> holders_;  // by node index
  // FreeOf's copy: of the state `free_uid_` after its first `free_seen_` changes.
  mutable std::vector<NodeFree> free_;
  mutable uint64_t free_uid_ = 0;
  mutable uint64_t free_seen_ = 0;
};

}  // namespace tessera

// FreeCapacity: what every node has free — cpu, memory, each device's milli-GPU, extended
// resources — in flat arrays, at one instant of a ReleaseSchedule: the backfill planner's
// time-indexed view of free capacity (as Slurm's backfill map and Fluxion's planners keep one),
// cheap to move along the schedule without touching the ClusterState.
//
// A FreeCapacity is brought up to date with a ClusterState (Sync: what is free now; only the
// nodes the state's change log names are read again), then moved along the schedule for a plan
// (MoveTo: at instant t, every running task released at or before t, a release already past
// counting as now, is free too) and rewound to now after it (Rewind). A task placed on a node or
// device outside the arrays is held for ever, as the planner's Timeline holds it.
//
// Units: millicores, bytes, milli-GPU. Device health, models and GPU memory are not kept: the
// counts built on it (FitCount) are upper bounds of what the Framework can place.
//
// Thread-safety: not thread-safe; a value type used by the scheduling thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "sched/backfill/release_schedule.h"
#include "sched/cluster_state.h"
#include "tessera/common/clock.h"

namespace tessera {

class FreeCapacity {
 public:
  // Brings the arrays up to date with `state` as it is now; `reread(node)` hears of each node
  // read again. Returns false when every node was read afresh instead (another state, a log
  // that no longer reaches back or is longer than the node array, a node added or given other
  // devices or extended resources). REQUIRES: rewound (not moved since the last Rewind).
  bool Sync(const ClusterState& state, absl::FunctionRef<void(int32_t)> reread);

  // Moves to instant t of `releases` (which must not change until Rewind), from `now`: adds
  // back what every task released at or before t holds, takes back what a task released after t
  // holds; `changed(node)` hears of each node whose free capacity changed.
  template <typename OnNode>
  void MoveTo(const ReleaseSchedule& releases, TimePoint now, TimePoint t, OnNode changed);

  // Back to what is free now, as last synced; forgets the schedule it moved along.
  // `changed(node)` hears of each node whose free capacity changed.
  template <typename OnNode>
  void Rewind(OnNode changed) {
    if (releases_ == nullptr) return;
    MoveTo(*releases_, now_, TimePoint::min(), changed);
    releases_ = nullptr;
  }

  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  int64_t cpu(int32_t node) const { return nodes_[node].cpu; }
  int64_t memory(int32_t node) const { return nodes_[node].memory; }
  int32_t devices(int32_t node) const { return nodes_[node].devices; }
  // The milli-GPU held on device d of the node.
  int64_t used_milli(int32_t node, int32_t d) const {
    return used_milli_[static_cast<size_t>(nodes_[node].first_device + d)];
  }
  // The id of an extended resource name, -1 when no node has it.
  int32_t ExtendedId(std::string_view name) const;
  // What the node has free of extended resource `id` (0 when it has none).
  int64_t extended(int32_t node, int32_t id) const;

 private:
  struct NodeFree {
    int64_t cpu = 0;
    int64_t memory = 0;
    int32_t first_device = 0;
    int32_t devices = 0;
    int32_t first_extended = 0;
    int32_t extended = 0;
  };
  struct ExtendedFree {
    int32_t id;
    int64_t free;
  };

  void ReadAll(const ClusterState& state);
  // Reads the node again; false when its layout (devices, extended resources) changed.
  bool Reread(const Node& node, int32_t index);
  template <typename OnNode>
  void ApplyJob(const PlannedRelease& job, int64_t sign, OnNode& changed);

  std::vector<NodeFree> nodes_;
  std::vector<int64_t> used_milli_;       // per device, node by node
  std::vector<ExtendedFree> extended_;    // node by node
  std::vector<std::string> names_;        // extended resource names, by id
  uint64_t uid_ = 0;
  uint64_t synced_at_ = 0;                // the state's change_count() when last read
  // The cursor: the jobs of `releases` before `next_` are added back.
  const ReleaseSchedule* releases_ = nullptr;
  ReleaseSchedule::EndOrder::const_iterator next_;
  TimePoint now_{};
};

template <typename OnNode>
void FreeCapacity::MoveTo(const ReleaseSchedule& releases, TimePoint now, TimePoint t,
                          OnNode changed) {
  if (releases_ == nullptr) {
    releases_ = &releases;
    next_ = releases.by_end().begin();
    now_ = now;
  }
  const ReleaseSchedule::EndOrder& order = releases_->by_end();
  while (next_ != order.end() && std::max(next_->first.first, now_) <= t) {
    ApplyJob(*next_->second, +1, changed);
    ++next_;
  }
  while (next_ != order.begin() && std::max(std::prev(next_)->first.first, now_) > t) {
    --next_;
    ApplyJob(*next_->second, -1, changed);
  }
}

template <typename OnNode>
void FreeCapacity::ApplyJob(const PlannedRelease& job, int64_t sign, OnNode& changed) {
  for (size_t k = 0; k < job.tasks.size(); ++k) {
    const Placement& p = job.placements[k];
    if (p.node_index < 0 || p.node_index >= size()) continue;
    const NodeFree& node = nodes_[p.node_index];
    bool devices_ok = true;
    for (int32_t d : p.gpus) devices_ok = devices_ok && d >= 0 && d < node.devices;
    if (!devices_ok) continue;
    const TaskRequest& task = job.tasks[k];
    NodeFree& free = nodes_[p.node_index];
    free.cpu += sign * task.cpu;
    free.memory += sign * task.memory;
    for (int32_t d : p.gpus) {
      used_milli_[static_cast<size_t>(free.first_device + d)] -= sign * p.gpu_milli;
    }
    for (const auto& [name, value] : task.extended) {
      const int32_t id = ExtendedId(name);
      for (int32_t e = free.first_extended; id >= 0 && e < free.first_extended + free.extended;
           ++e) {
        if (extended_[static_cast<size_t>(e)].id == id) {
          extended_[static_cast<size_t>(e)].free += sign * value;
        }
      }
    }
    changed(p.node_index);
  }
}

}  // namespace tessera

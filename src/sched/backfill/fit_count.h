// FitCount: how many tasks of a gang the nodes' free capacity could hold — the backfill
// planner's cheap test before it asks the Framework.
//
// Counted per node from free capacity alone: cpu (millicores), memory (bytes), devices (whole
// free devices for whole-GPU tasks, milli-GPU shares of each device for sharing ones) and the
// extended resources every task of the gang asks for — no filter, no device health or model, no
// GPU memory. So it is an upper bound of what the Framework (and ClusterState::Assume) can place:
// a gang for which it is under min_available cannot fit. It only grows as running tasks are
// released, which lets the planner start its search where it first suffices. Kept across plans:
// Sync recounts only the nodes the ClusterState's change log names.
//
// Thread-safety: not thread-safe; used by the scheduling thread with the state it counts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/node.h"
#include "sched/backfill/node_load.h"
#include "sched/cluster_state.h"

namespace tessera {

// The least a task of a gang asks for, per quantity: no task of the gang fits where this does
// not.
struct SmallestTask {
  int64_t cpu = 0;
  int64_t memory = 0;
  int32_t gpu_count = 0;  // 0 when some task needs no device
  int64_t gpu_milli = 0;
  std::map<std::string, int64_t, std::less<>> extended;  // those every task asks for

  // REQUIRES: !tasks.empty().
  explicit SmallestTask(std::span<const TaskRequest> tasks);

  friend bool operator==(const SmallestTask&, const SmallestTask&) = default;
};

class FitCount {
 public:
  FitCount(const ClusterState& state, SmallestTask task);

  // Brings the count up to date with `state`: the nodes changed since the last count, or every
  // node when the change log no longer reaches back (or it is another state).
  void Sync(const ClusterState& state);

  const SmallestTask& task() const { return task_; }
  // The sum over nodes (each capped at 2^20 tasks).
  int64_t total() const { return total_; }

  // The total with each node of `peaks` also holding its peak load.
  int64_t TotalWith(const ClusterState& state, std::span<const NodePeak> peaks) const;

  // Counts the node again (what it holds changed). The next Sync counts it once more: cheap.
  void Update(const ClusterState& state, int32_t node);

 private:
  int64_t CountWith(const Node& node, const NodeLoad* extra) const;
  void CountAll(const ClusterState& state);

  SmallestTask task_;
  uint64_t uid_ = 0;
  uint64_t synced_at_ = 0;  // the state's change_count() when last brought up to date
  std::vector<int64_t> per_node_;
  int64_t total_ = 0;
};

}  // namespace tessera

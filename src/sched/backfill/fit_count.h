// FitCount: how many tasks of a gang the nodes' free capacity could hold — the backfill
// planner's cheap test before it asks the Framework.
//
// Counted per node from free capacity alone: cpu (millicores), memory (bytes), devices (whole
// free devices for whole-GPU tasks, milli-GPU shares of each device for sharing ones) and the
// extended resources every task of the gang asks for — no filter, no device health or model, no
// GPU memory — as a FreeCapacity holds them at some instant. So it is an upper bound of what the
// Framework (and ClusterState::Assume) can place: a gang for which it is under min_available
// cannot fit. It only grows as running tasks are released, which lets the planner start its
// search where it first suffices; Update follows the FreeCapacity as it moves.
//
// Thread-safety: not thread-safe; used by the scheduling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/job.h"
#include "sched/backfill/free_capacity.h"
#include "sched/backfill/node_load.h"

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
  // Counts every node of `free` (as it stands) for `task`.
  FitCount(const FreeCapacity& free, SmallestTask task);

  const SmallestTask& task() const { return task_; }
  // The sum over nodes (each capped at 2^20 tasks).
  int64_t total() const { return total_; }

  // The total with each node of `peaks` also holding its peak load.
  int64_t TotalWith(const FreeCapacity& free, std::span<const NodePeak> peaks) const;

  // Counts the node again (what `free` has there changed).
  void Update(const FreeCapacity& free, int32_t node);

 private:
  int64_t CountWith(const FreeCapacity& free, int32_t node, const NodeLoad* extra) const;

  struct Extended {
    int32_t id;  // FreeCapacity's; -1 when no node has it
    int64_t ask;
    std::string name;
  };

  SmallestTask task_;
  std::vector<Extended> extended_;  // what task_ asks for
  std::vector<int64_t> per_node_;
  int64_t total_ = 0;
};

}  // namespace tessera

// ReleaseSchedule: what the running jobs hold, and when each releases it — the backfill
// planner's view of the future, kept across scheduling cycles.
//
// Slurm's sched/backfill rebuilds its map of future node availability from every running job on
// each pass, and Fluxion's planners keep per-resource time lines updated as jobs come and go;
// this is the second kind: the Scheduler sets a job here when it starts, places more tasks, is
// held (its end becomes its grace's end) and removes it when it leaves, so a plan reads a sorted
// schedule instead of sorting every running task first.
//
// Shapes. A job releases all its tasks at one end (TimePoint::max(): never known — a job
// without a time limit). The schedule keeps the jobs with a finite end in (end, job) order and,
// per node, the tasks released there in (end, job, task) order.
//
// Validity. A release whose tasks and placements differ in length, or with a negative node or
// device index, is kept but never ends. Whether a node or device exists is the planner's
// question (it knows the ClusterState): it holds a task on a node outside the state for ever.
//
// Thread-safety: not thread-safe; owned by the scheduling thread. References returned stay valid
// until the job is set again or removed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/node_hash_map.h"
#include "core/job.h"
#include "core/placement.h"
#include "tessera/common/clock.h"

namespace tessera {

// A running job as the planner sees it: it releases its tasks at `end` (TimePoint::max(): never
// known — a job without time limit).
struct PlannedRelease {
  int64_t job = 0;
  TimePoint end{};
  std::vector<TaskRequest> tasks;
  std::vector<Placement> placements;  // as assumed in the state; same length as tasks
};

// One task released on a node.
struct NodeRelease {
  TimePoint end;
  int64_t job;
  const TaskRequest* task;
  const Placement* placement;
};

class ReleaseSchedule {
 public:
  // The jobs that end, by (end, job), each with its release.
  using EndOrder = absl::btree_map<std::pair<TimePoint, int64_t>, const PlannedRelease*>;

  // Adds the release, or replaces the one of the same job.
  void Set(PlannedRelease release);
  // Forgets the job's release; a job not set is ignored.
  void Remove(int64_t job);
  void Clear();

  // The number of jobs set.
  size_t size() const { return jobs_.size(); }
  // The job's release; nullptr when not set.
  const PlannedRelease* Find(int64_t job) const;
  // The jobs with a finite end (and well-formed placements), by (end, job).
  const EndOrder& by_end() const { return by_end_; }
  // The tasks released on `node` (finite ends only), by (end, job, task); empty for a node no
  // task of the schedule is on.
  const std::vector<NodeRelease>& on_node(int32_t node) const;

 private:
  // Whether the release ends at all: a finite end and well-formed placements.
  static bool Ends(const PlannedRelease& release);
  void Unlink(const PlannedRelease& release);

  absl::node_hash_map<int64_t, PlannedRelease> jobs_;  // node-based: stable addresses
  EndOrder by_end_;
  std::vector<std::vector<NodeRelease>> by_node_;
};

}  // namespace tessera

// ScorePlugin: ranks a feasible node for a task; higher is better.
//
// Score is called for each node that passed every Filter, possibly from several worker threads
// at once (so it is const). It returns a score in [kMinNodeScore, kMaxNodeScore]. The framework
// multiplies each plugin's score by the profile's weight for it, sums them, and picks the node
// with the highest total; ties are broken uniformly at random with the injected Rng.
//
// Contract: like Filter, the score must be a pure function of (the task's equivalence class,
// the node's state, the plugin's configuration and Handle inputs fixed at start-up — or the
// target workload, whose replacement drops the cache: target_workload_plugin.h); the
// framework caches scores per class and node version.
//
// NormalizeScore (optional; HasNormalizeScore() returns true) runs once per attempt on the
// scheduling thread over all feasible nodes' scores of this plugin, before weighting, and must
// leave every score in [kMinNodeScore, kMaxNodeScore].
#pragma once

#include <cstdint>
#include <span>

#include "core/job.h"
#include "core/node.h"
#include "tessera/sched/cycle_state.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class ScorePlugin : public virtual Plugin {
 public:
  // Writes the node's score to *score. kError aborts the attempt.
  virtual SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                            int64_t* score) const = 0;

  virtual bool HasNormalizeScore() const { return false; }
  // `scores[i]` is the score of the i-th feasible node; rewritten in place.
  virtual SchedStatus NormalizeScore(const CycleState& state, const TaskRequest& task,
                                     std::span<int64_t> scores) const {
    return {};
  }
};

}  // namespace tessera

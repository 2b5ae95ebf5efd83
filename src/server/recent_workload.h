// RecentWorkload: FGD's target workload taken from the tasks submitted last — a sliding window
// over the shapes of the most recent `capacity` tasks, as the FGD paper's production deployment
// derives its target workload from recent task history.
//
// A task's shape is what fragmentation reads: cpu (millicores), milli-GPU per device, GPU count
// and allowed GPU models (memory is ignored, as in the paper). Every task counts — a job of 8
// replicas adds 8 shapes — and once the window is full each new shape pushes the oldest out.
// Workload() turns the window into a TargetWorkload the way the simulator builds one from a
// trace (sim/alibaba/target_workload_builder.h): shapes by count, most common first (ties:
// ascending shape), kept until they cover at least `popularity_threshold_pct` percent of the
// window's tasks, probabilities renormalized to sum to 1. An empty window gives an empty
// workload: nothing is known yet, and FGD then scores every node alike.
//
// Thread-safety: not thread-safe; the server's scheduling loop owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/job.h"
#include "core/target_workload.h"

namespace tessera::server {

struct RecentWorkloadOptions {
  int32_t capacity = 1000;               // tasks in the window; >= 1
  double popularity_threshold_pct = 95;  // in (0, 100]
};

class RecentWorkload {
 public:
  explicit RecentWorkload(RecentWorkloadOptions options = {});

  // Adds the shape of one submitted task, dropping the oldest when the window is full.
  void Add(const TaskRequest& task);

  // Tasks in the window: min(tasks added, capacity).
  int32_t size() const { return static_cast<int32_t>(window_.size()); }
  // Changes whenever the counts of the window's shapes change (an added shape that replaces an
  // equal one changes nothing), so a caller can tell when Workload() has something new.
  uint64_t revision() const { return revision_; }

  // The target workload of the window (see above).
  TargetWorkload Workload() const;

 private:
  // cpu, milli-GPU per device, GPU count, allowed models (sorted).
  using Shape = std::tuple<int64_t, int64_t, int32_t, std::vector<std::string>>;

  RecentWorkloadOptions options_;
  std::deque<Shape> window_;  // oldest first
  std::map<Shape, int32_t> counts_;
  uint64_t revision_ = 0;
};

}  // namespace tessera::server

// Plugin: the common base of every scheduling extension point.
//
// The framework (sched/framework.h) runs one attempt per task through these points, in order:
//
//   QueueSort    orders the pending jobs                         (queue_sort_plugin.h)
//   PreFilter    once per task: precompute, or reject outright   (pre_filter_plugin.h)
//   Filter       per node: can the task run there?               (filter_plugin.h)
//   PostFilter   when no node passed: preemption lives here      (post_filter_plugin.h)
//   PreScore     once per task, over the feasible nodes          (pre_score_plugin.h)
//   Score        per feasible node, 0..100 (+ NormalizeScore)    (score_plugin.h)
//   Reserve      the chosen node: pick devices, hold resources   (reserve_plugin.h)
//   Permit       per gang: admit, wait for the gang, or reject   (permit_plugin.h)
//   Bind         make the placement real                        (bind_plugin.h)
//
// A plugin derives from the interfaces of the points it implements and from nothing else. One
// instance per profile serves every point it is enabled at. Plugins never read process-wide
// globals: time, randomness and shared inputs come from the Handle they are built with.
// Source: the Kubernetes scheduling framework (KEP-624), with Nomad's stage chain inside Filter.
#pragma once

#include <string_view>

namespace tessera {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class Plugin {
 public:
  virtual ~Plugin() = default;
  // The registry name ("NodeResourcesFit"). The returned view must be a static string.
  virtual std::string_view name() const = 0;
};

}  // namespace tessera

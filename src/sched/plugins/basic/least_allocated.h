// LeastAllocated: spreads work: prefers the node with the most room left after placing the task.
//
// A Score. Per resource, (allocatable - requested) * 100 / allocatable, where requested is what
// the node would hold after placing the task (0 when that exceeds allocatable); the weighted mean
// over the configured resources (resource_allocation.h: resources with zero allocatable are
// skipped). An empty node scores 100, a full one 0.
//
// Arguments: `resources` — the weighted resources, "cpu=1,memory=1,gpu=1" by default (see
// resource_allocation.h for the names and the weight range). Unknown keys are rejected.
// Thread-safe: Score is const and reads only its inputs and the weights fixed at construction.
// Source: kube-scheduler's NodeResourcesFit scoring strategy LeastAllocated.
#pragma once

#include <memory>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "sched/plugins/basic/resource_allocation.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"
#include "tessera/sched/score_plugin.h"

namespace tessera {

class LeastAllocated final : public ScorePlugin {
 public:
  static constexpr std::string_view kName = "LeastAllocated";

  // InvalidArgument on an unknown key or a malformed `resources` value.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  explicit LeastAllocated(ResourceWeights weights = DefaultResourceWeights())
      : weights_(std::move(weights)) {}

  std::string_view name() const override { return kName; }
  SchedStatus Score(const CycleState& state, const TaskRequest& task, const Node& node,
                    int64_t* score) const override;

 private:
  ResourceWeights weights_;
};

}  // namespace tessera

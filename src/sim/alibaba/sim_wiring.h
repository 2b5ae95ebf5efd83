// SimWiring: what the simulator hands the scheduler core for one run — the cluster state built
// from a trace's nodes, the run's Rng and clock, a sink that records bindings, and a Framework
// for a built-in profile. Owns all of them, so the Handle's pointers outlive the framework.
// Not thread-safe: one per run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/node.h"
#include "core/target_workload.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "tessera/common/clock.h"
#include "tessera/common/rng.h"
#include "tessera/sched/decision_sink.h"

namespace tessera::sim::alibaba {

// Counts bindings; the simulator applies placements itself (ClusterState::Assume).
class RecordingSink final : public DecisionSink {
 public:
  absl::Status Bind(std::string_view job, int32_t task_index, const Placement& placement) override {
    ++bindings_;
    return absl::OkStatus();
  }
  int64_t bindings() const { return bindings_; }

 private:
  int64_t bindings_ = 0;
};

struct SimWiring {
  std::unique_ptr<Rng> rng;
  std::unique_ptr<ManualClock> clock;
  std::unique_ptr<RecordingSink> sink;
  std::unique_ptr<ClusterState> state;
  std::unique_ptr<Framework> framework;

  // Adds `nodes` to a new ClusterState in the order of `order` (indices into nodes), and builds
  // the framework of built-in profile `policy` with a Handle of `rng` (taken over), a clock at
  // the epoch, `target` (must outlive the wiring) and the sink.
  static absl::StatusOr<SimWiring> Create(const std::vector<Node>& nodes,
                                          const std::vector<int32_t>& order,
                                          std::string_view policy, const TargetWorkload& target,
                                          std::unique_ptr<Rng> rng);
};

}  // namespace tessera::sim::alibaba

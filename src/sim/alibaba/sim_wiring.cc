#include "sim/alibaba/sim_wiring.h"

#include <utility>

#include "fmt/format.h"
#include "sched/plugins/builtin.h"
#include "sched/profile.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {

absl::StatusOr<SimWiring> SimWiring::Create(const std::vector<Node>& nodes,
                                            const std::vector<int32_t>& order,
                                            std::string_view policy, const TargetWorkload& target,
                                            std::unique_ptr<Rng> rng) {
  SimWiring w;
  w.rng = std::move(rng);
  w.clock = std::make_unique<ManualClock>();
  w.sink = std::make_unique<RecordingSink>();
  w.state = std::make_unique<ClusterState>();
  for (int32_t i : order) {
    TESSERA_RETURN_IF_ERROR(w.state->AddNode(nodes[i]).status());
  }
  absl::StatusOr<Profile> profile = BuiltinProfile(policy);
  if (!profile.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--policy: {}", std::string(profile.status().message())));
  }
  Handle handle;
  handle.rng = w.rng.get();
  handle.clock = w.clock.get();
  handle.target_workload = &target;
  handle.sink = w.sink.get();
  TESSERA_ASSIGN_OR_RETURN(w.framework, Framework::Create(*profile, BuiltinPlugins(), handle));
  return w;
}

}  // namespace tessera::sim::alibaba

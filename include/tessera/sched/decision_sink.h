// DecisionSink: where the scheduler core sends its decisions.
//
// The core never calls the store, an agent or the network: it emits decisions here. The server
// wires a sink that commits them to the store and then sends bindings; the simulator wires one
// that applies them to the simulated cluster and records them. Called only from the scheduling
// thread, in decision order. A sink must not call back into the scheduler.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "core/placement.h"

namespace tessera {

class DecisionSink {
 public:
  virtual ~DecisionSink() = default;
  // Task `task_index` of job `job` is bound to `placement`. A non-OK status means the binding
  // could not be made; the framework then unreserves the task.
  virtual absl::Status Bind(std::string_view job, int32_t task_index,
                            const Placement& placement) = 0;
};

}  // namespace tessera

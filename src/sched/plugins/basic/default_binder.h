// DefaultBinder: makes a permitted placement real through the wiring's DecisionSink.
//
// A Bind. Forwards every task to Handle::sink (the server's sink commits the decision to the
// store and then sends the binding to the cluster's agent; the simulator's applies it to the
// simulated cluster). Returns Success when the sink accepted it, and kError carrying the sink's
// status when it failed (the framework then unreserves the whole gang). It never returns Skip,
// so it belongs last in a profile's bind list.
//
// Arguments: none. The factory fails with FailedPrecondition when the Handle has no sink.
// Thread-safety: Bind runs on the scheduling thread only, as the sink requires.
// Source: kube-scheduler's DefaultBinder plugin.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/sched/bind_plugin.h"
#include "tessera/sched/decision_sink.h"
#include "tessera/sched/handle.h"
#include "tessera/sched/registry.h"

namespace tessera {

class DefaultBinder final : public BindPlugin {
 public:
  static constexpr std::string_view kName = "DefaultBinder";

  // InvalidArgument on any argument; FailedPrecondition when handle.sink is null.
  static absl::StatusOr<std::unique_ptr<Plugin>> New(const PluginArgs& args, const Handle& handle);

  // REQUIRES: sink != nullptr; it outlives the plugin.
  explicit DefaultBinder(DecisionSink* sink) : sink_(sink) {}

  std::string_view name() const override { return kName; }
  SchedStatus Bind(std::string_view job, int32_t task_index, const Placement& placement) override;

 private:
  DecisionSink* sink_;
};

}  // namespace tessera

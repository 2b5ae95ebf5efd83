// TargetWorkloadPlugin: a plugin whose scores read the target workload (FGD) and follow it when
// the wiring replaces it.
//
// A plugin gets the first target workload from its Handle at construction. A wiring whose
// workload changes while it runs (the server's window of recently submitted tasks) hands each
// new one through Scheduler::SetTargetWorkload → Framework::SetTargetWorkload, which calls
// SetTargetWorkload on every plugin of the profile that implements this interface and then
// drops its cached scores, so that no score of the previous workload is reused.
//
// Contract: called on the scheduling thread, between attempts (never while Score runs on worker
// threads). The plugin copies what it needs; `workload` may not outlive the call. On an error
// (InvalidArgument naming the field, as the factory would) the plugin keeps its previous
// workload. An empty workload (no classes) is valid: it means "nothing known yet".
#pragma once

#include "absl/status/status.h"
#include "core/target_workload.h"
#include "tessera/sched/plugin.h"

namespace tessera {

class TargetWorkloadPlugin : public virtual Plugin {
 public:
  virtual absl::Status SetTargetWorkload(const TargetWorkload& workload) = 0;
};

}  // namespace tessera

// PermitPlugin: the gang barrier. Decides whether a job's reserved tasks may be bound.
//
// Called on the scheduling thread after each task of a job is reserved. Returns Success when the
// job may bind what it reserved, Wait while its gang is still incomplete (the framework goes on
// reserving the job's remaining tasks), or Unschedulable to abandon the attempt (every reserved
// task is then unreserved: a waiting gang never holds partial capacity).
// Source: Volcano's gang plugin and the coscheduling plugin of kube-scheduler.
#pragma once

#include <cstdint>

#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

struct GangProgress {
  int32_t min_available = 1;  // the gang size
  int32_t reserved = 0;       // tasks reserved so far in this attempt (plus any already running)
  int32_t remaining = 0;      // tasks not yet tried in this attempt
};

class PermitPlugin : public virtual Plugin {
 public:
  virtual SchedStatus Permit(const GangProgress& gang) = 0;
};

}  // namespace tessera

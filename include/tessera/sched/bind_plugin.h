// BindPlugin: makes a permitted placement real.
//
// Called on the scheduling thread for each task of a permitted gang, in profile order, until
// one returns something other than Skip. Returns Success, Skip (not mine: try the next binder),
// or kError (the binding failed; the framework unreserves the whole gang).
#pragma once

#include <string_view>

#include "core/placement.h"
#include "tessera/sched/plugin.h"
#include "tessera/sched/sched_status.h"

namespace tessera {

class BindPlugin : public virtual Plugin {
 public:
  virtual SchedStatus Bind(std::string_view job, int32_t task_index,
                           const Placement& placement) = 0;
};

}  // namespace tessera

// QueueSortPlugin: orders pending jobs; exactly one is enabled per profile.
//
// Less(a, b) is true when `a` should be tried before `b`. It must be a strict weak ordering and
// deterministic (ties end on the submission sequence). Called on the scheduling thread.
#pragma once

#include <cstdint>

#include "core/job.h"
#include "tessera/common/clock.h"
#include "tessera/sched/plugin.h"

namespace tessera {

struct QueuedJobInfo {
  const JobSpec* spec = nullptr;
  int64_t sequence = 0;        // submission order, unique
  TimePoint submit_time{};
};

class QueueSortPlugin : public virtual Plugin {
 public:
  virtual bool Less(const QueuedJobInfo& a, const QueuedJobInfo& b) const = 0;
};

}  // namespace tessera

// VictimCandidate: one running gang that victim search may evict whole (victim_search.h,
// victim_index.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/job.h"
#include "core/placement.h"
#include "tessera/common/clock.h"

namespace tessera {

struct VictimCandidate {
  int64_t job = 0;                    // the caller's handle
  int32_t priority = 0;               // base priority (no aging)
  TimePoint start_time{};             // its latest gang start
  std::vector<TaskRequest> tasks;     // its placed tasks
  std::vector<Placement> placements;  // same length as tasks, as assumed in the state
};

}  // namespace tessera

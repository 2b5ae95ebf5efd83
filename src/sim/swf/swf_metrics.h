// SWF metrics: the classic batch-scheduling measures of a simulated run of a workload log.
//
// Over the jobs of one run (submission, first start, end, processors held):
//   wait                 first_start - submit                        (jobs that started)
//   bounded slowdown     max(1, (wait + run) / max(run, bound))      (jobs that completed),
//                        run = end - first_start, bound 10 s by default (Feitelson et al.,
//                        "Theory and Practice in Parallel Job Scheduling", 1997)
//   utilisation          sum(run x processors) / (total_processors x (last end - first submit))
//                        over completed jobs
//   makespan             last end - first submit
// Means are arithmetic over the jobs they are defined for; 0 when there are none. Times are in
// seconds (double); the run's millisecond times are kept exact until the division.
// Thread-safety: pure functions over value types.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario_runner.h"
#include "sim/swf/swf_workload.h"
#include "tessera/common/clock.h"

namespace tessera::sim::swf {

inline constexpr Duration kDefaultSlowdownBound = std::chrono::seconds(10);

// One job of a run.
struct JobTimes {
  TimePoint submit{};
  std::optional<TimePoint> start;  // nullopt: never started
  std::optional<TimePoint> end;    // nullopt: not completed when the run ended
  int64_t processors = 0;
};

struct SwfMetrics {
  int64_t jobs = 0;
  int64_t completed = 0;      // started and ended
  int64_t never_started = 0;  // still pending (or refused) when the run ended
  int64_t unfinished = 0;     // started, not ended
  double mean_wait_s = 0;
  double max_wait_s = 0;
  double mean_bounded_slowdown = 0;
  double utilisation = 0;  // 0..1
  double makespan_s = 0;
};

SwfMetrics ComputeSwfMetrics(std::span<const JobTimes> jobs, int64_t total_processors,
                             Duration slowdown_bound = kDefaultSlowdownBound);

// The jobs of `report`, a run of `workload.scenario`, with their processors. InvalidArgument
// when the report's jobs do not match the workload's (another scenario's report).
absl::StatusOr<std::vector<JobTimes>> JobTimesOf(const RunReport& report,
                                                 const SwfWorkload& workload);

}  // namespace tessera::sim::swf

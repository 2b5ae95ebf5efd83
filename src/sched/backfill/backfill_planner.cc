#include "sched/backfill/backfill_planner.h"

namespace tessera {

TimePoint Reservation::End() const {
  if (start == TimePoint::max() || !time_limit.has_value()) return TimePoint::max();
  if (*time_limit >= TimePoint::max() - start) return TimePoint::max();
  return start + *time_limit;
}

BackfillPlanner::BackfillPlanner(Framework* framework) : framework_(framework) {}

std::vector<Reservation> BackfillPlanner::Plan(ClusterState& state, TimePoint now,
                                               std::span<const PlannedRelease> running,
                                               std::span<const BlockedJob> blocked) {
  std::vector<Reservation> out;
  for (const BlockedJob& job : blocked) {
    out.push_back(Reservation{.job = job.job, .start = TimePoint::max(),
                              .time_limit = job.time_limit});
  }
  return out;
}

bool BackfillPlanner::Delays(ClusterState& state, TimePoint now,
                             std::span<const PlannedRelease> running,
                             std::span<const Reservation> reservations,
                             std::span<const TaskRequest> tasks,
                             std::span<const Placement> placements, TimePoint end) {
  return !reservations.empty();
}

}  // namespace tessera

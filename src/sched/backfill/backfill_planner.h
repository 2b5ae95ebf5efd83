// BackfillPlanner: reservations for blocked jobs, and whether a job may start now without
// delaying them (backfill).
//
// A blocked job is one whose gang does not fit the cluster now. The planner looks into the
// future: every running job releases its tasks at its end (its start plus its time limit; never,
// for a job without one), and the planner finds the earliest time, at or after now, when the
// blocked job's gang fits — a RESERVATION: a start time and the placements it would get then.
// Blocked jobs are planned in priority order, each around the reservations planned before it:
//   - EASY backfill (Lifka 1995, "The ANL/IBM SP scheduling system"; Mu'alem & Feitelson 2001,
//     "Utilization, predictability, workloads, and user runtime estimates in scheduling the
//     IBM SP2 with backfilling"): Plan with the first blocked job only;
//   - conservative backfill (Mu'alem & Feitelson 2001): Plan with the first N blocked jobs;
//   - a pending job's predicted start: Plan over the jobs ahead of it, then itself; its
//     Reservation.start (a dry run: the state is left as given).
// Another job may start now when Delays() says it moves no reservation later — it ends before
// the reservations it could touch start, or their planned placements still fit at every
// instant of their windows with its tasks added (Slurm's sched/backfill: backfilled jobs must
// not delay the start of higher-priority jobs' reservations).
//
// Time model. Times are TimePoints (milliseconds). A running job holds its tasks over
// [now, end); a reservation holds its placements over [start, start + time_limit), for ever
// when the blocked job has no time limit (a limit under 1 ms counts as 1 ms). At an instant,
// releases happen before acquisitions:
// a reservation may start exactly when a running job ends. A running job whose end is already
// past (it overran its time limit) is taken to end now. Tasks the state holds that no
// ReleaseSchedule lists (system reservations, jobs the caller did not pass) are held for ever.
//
// Exactness. A reservation is planned at the earliest time T (now, or an instant when a running
// job or an earlier reservation releases something) at which the Framework places the gang onto
// the cluster as it will be, per resource, at its fullest over [T, T + time_limit): running jobs
// still running at T, and every earlier reservation active at some instant of that window. So a
// later reservation may start before an earlier one (filling the hole before it) but never
// overlaps it in time and resources. Whether a gang fits is the Framework's greedy answer (its
// filters, scorers and tie-breaks); for a gang of identical tasks (whole GPUs or none) that
// answer is exact. The first reservation's start is thus exactly the earliest feasible time;
// later ones depend on the nodes and devices earlier ones were given.
// Delays() is exact for the plan it is given: false only when, at every instant of every
// reservation's window, its planned tasks still fit their nodes with the candidate added —
// whole-GPU tasks by count of free devices (the Framework may take any free devices when the
// reservation starts), shared devices and cpu, memory and extended resources as planned. The
// plan then stays feasible: re-planned with the candidate running, the first reservation keeps
// its start, and with a first-fit placement policy (tieBreak: first, no load-dependent scorer)
// every reservation keeps its start and nodes (backfill_planner_test checks both on random
// clusters).
//
// Cost. The running jobs come as a ReleaseSchedule the caller keeps across plans (sorted by end,
// and per node), and the planner keeps a FreeCapacity (what every node has free now, synced from
// the state's change log) and the FitCounts of the last few distinct smallest tasks. For each
// blocked job the search first moves the FreeCapacity along the release instants, galloping
// from where the previous search left it, to the first instant where the FitCount (with the
// earlier reservations' peaks over the window) reaches min_available — no earlier instant can
// fit — and only from there asks the Framework, with the state moved to that instant by Forget
// (and taken back in reverse by ClusterState::Reassume at the end): one Framework attempt when
// the count is exact (gangs of whole devices with nothing else to match), else O(log K) per
// stretch between earlier reservations' windows (K distinct ends past that instant). Each step
// costs the releases crossed and the peaks of the reservations in the window. Delays costs
// O(planned tasks) when the candidate ends before every reservation starts or shares no node
// with one active in its window, else also the running tasks of the few shared nodes.
//
// Errors: invalid input never crashes. A blocked job without tasks or with min_available outside
// [1, tasks.size()] gets start TimePoint::max() and no placements; a running job whose tasks and
// placements differ in length is held for ever, and so is a running task placed on a node or
// device outside the state.
//
// Plan draws on the Framework's tie-break Rng like any placement attempt does (only for the
// instants the count lets through).
//
// Thread-safety: not thread-safe; used by the scheduling thread with the Framework and the
// ClusterState it owns.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "core/job.h"
#include "core/placement.h"
#include "sched/backfill/fit_count.h"
#include "sched/backfill/free_capacity.h"
#include "sched/backfill/release_schedule.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "tessera/common/clock.h"

namespace tessera {

// A job that waits for capacity, in priority order.
struct BlockedJob {
  int64_t job = 0;
  std::vector<TaskRequest> tasks;
  int32_t min_available = 1;
  std::optional<Duration> time_limit;  // nullopt: runs until it ends (holds its reservation
                                       // for ever in the plan)
};

// Where and when a blocked job is planned to start. start == TimePoint::max(): no start can be
// predicted (it waits on jobs that have no time limit, or its gang never fits); then
// task_indices, placements and tasks are empty.
struct Reservation {
  int64_t job = 0;
  TimePoint start{};
  std::vector<int32_t> task_indices;  // the tasks planned (the gang, and any beyond it that fit)
  std::vector<Placement> placements;  // one per entry of task_indices
  std::optional<Duration> time_limit;
  std::vector<TaskRequest> tasks;  // the request of each planned task, parallel to placements

  // The end of the reservation's window: start + time_limit, TimePoint::max() without a limit
  // (or when start is max()).
  TimePoint End() const;
};

class BackfillPlanner {
 public:
  // `framework` places the gangs (MatchMode::kWithoutAllocating); it outlives the planner.
  explicit BackfillPlanner(Framework* framework);

  // For each of `blocked` in order: the earliest time at or after `now` when its gang fits, given
  // the running jobs of `releases` releasing at their ends and the reservations planned before
  // it (held from their start for their time_limit, for ever without one). `state` is the
  // cluster now (with running tasks assumed); it is left exactly as given (same allocations;
  // node versions move). Returns one Reservation per blocked job, in the same order.
  std::vector<Reservation> Plan(ClusterState& state, TimePoint now,
                                const ReleaseSchedule& releases,
                                std::span<const BlockedJob> blocked);

  // The reservation of one more blocked job, planned around `planned` (the reservations of the
  // jobs ahead of it, from earlier calls, as they stand) just as Plan plans a job around those
  // before it. Conservative backfill adds its blocked jobs one by one this way, keeping the
  // reservations already made: a job started meanwhile passed Delays, so they still hold.
  Reservation PlanNext(ClusterState& state, TimePoint now, const ReleaseSchedule& releases,
                       std::span<const Reservation> planned, const BlockedJob& job);

  // Whether starting a job now at `placements` (its `tasks`, not assumed in `state`), ending at
  // `end` (TimePoint::max() without a time limit), would move any of `reservations` later.
  // Exact in the safe direction: false only when every reservation's planned placement still
  // fits at every instant of its window with the job added (see Exactness above). `state` and
  // `releases` are the cluster now: the running tasks the reservations were planned with, and
  // any job started since — released at its end when `releases` has it, else held for ever.
  // REQUIRES: tasks.size() == placements.size().
  bool Delays(const ClusterState& state, TimePoint now, const ReleaseSchedule& releases,
              std::span<const Reservation> reservations, std::span<const TaskRequest> tasks,
              std::span<const Placement> placements, TimePoint end) const;

 private:
  // Brings free_now_ and fit_counts_ up to date with the state.
  void SyncFree(const ClusterState& state);

  Framework* framework_;
  // What every node has free now, kept across plans (synced from the state's change log);
  // each plan moves it along the schedule and rewinds it.
  FreeCapacity free_now_;
  // For the last few distinct smallest tasks planned for: how many of each free_now_ could hold.
  std::deque<FitCount> fit_counts_;
};

}  // namespace tessera

// SchedulingPolicy: the policy switches of the job-level Scheduler, as configured.
//
// One value configures admission order, fair share, backfill and preemption for a whole
// control plane (server config `scheduling:`) or a scenario (`config:`). Defaults follow the
// systems users know: EASY backfill on (Slurm's sched/backfill), hierarchical DRF fair share on
// (Volcano/KAI), preemption off until enabled (Slurm PreemptType=none, Kueue's preemption
// policies default to Never), priority aging on (Slurm's age factor), no gang timeout.
// Semantics of each switch: docs/policies/. A value type.
#pragma once

#include <chrono>
#include <cstdint>

#include "tessera/common/clock.h"

namespace tessera {

enum class BackfillMode {
  kNone,          // no reservations: jobs start in order whenever they fit
  kEasy,          // the first blocked job gets a reservation; others may not delay it
  kConservative,  // the first `backfill_depth` blocked jobs get reservations
};

enum class FairShareMode {
  kNone,  // sibling queues in name order (after queue priority)
  kDrf,   // hierarchical dominant-resource fairness with weights
};

// What happens to a job evicted by preemption or reclaim.
enum class PreemptedAction { kRequeue, kCancel };

struct SchedulingPolicy {
  BackfillMode backfill = BackfillMode::kEasy;
  int32_t backfill_depth = 16;  // conservative: reservations for the first N blocked jobs
  FairShareMode fair_share = FairShareMode::kDrf;
  // Half-life of the usage-history term of fair share; zero: current use only.
  Duration fair_share_half_life{0};
  // A pending job gains one priority point per this much waiting; zero: no aging.
  Duration priority_aging = std::chrono::minutes(1);
  // A job admitted for its preemption victims keeps its admission while it waits for capacity
  // for at most this long, counted from when none of the jobs it waits for is still being torn
  // down; then it loses its admission and is requeued with a doubling back-off. Zero: it gives
  // its admission back as soon as its victims are gone and its gang still does not fit.
  Duration gang_timeout{0};
  bool preemption = false;
  // At most `preemption_rate_max` evictions per `preemption_rate_period` for the jobs of one
  // preemptor queue.
  int32_t preemption_rate_max = 10;
  Duration preemption_rate_period = std::chrono::minutes(1);
  PreemptedAction on_preemption = PreemptedAction::kRequeue;
  // Whether a job with a task that fits no node, or a gang that fits no cluster as a whole, even
  // on an empty inventory is refused at its first cycle (reason "Refused"), as Slurm refuses a
  // request no partition can satisfy;
  // the simulator does so over its fixed fleet. False: it waits with its placement reason, as
  // Kubernetes, Volcano and Kueue keep it pending; the control plane does so, because its
  // clusters join, leave and change while it runs.
  bool refuse_unfit = true;
};

}  // namespace tessera

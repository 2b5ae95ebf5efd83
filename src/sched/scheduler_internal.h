// The Scheduler's per-job and per-cycle records, shared by the files that implement it
// (scheduler.cc: admission, placement, backfill; scheduler_preemption.cc: preemption and
// reclaim; scheduler_estimate.cc: satisfiability and start estimates). Not a public interface.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sched/queue/queue_tree.h"
#include "sched/scheduler.h"

namespace tessera {

inline constexpr std::string_view kReasonQuotaExceeded = "QuotaExceeded";
inline constexpr std::string_view kReasonPriority = "Priority";
inline constexpr std::string_view kReasonReservation = "Reservation";

struct Scheduler::Entry {
  enum class State { kPending, kAdmitted, kRunning, kHeld };

  int64_t id = 0;  // the submission sequence; the handle of the queue and planner components
  std::string name;
  JobSpec spec;
  int32_t leaf = -1;
  ResourceList charge;
  bool charged = false;                 // its charge is admitted in its queue
  std::vector<TaskRequest> tasks;       // task-group order
  std::vector<std::string> task_names;  // "worker-0"
  std::vector<bool> placed;
  std::vector<std::optional<Placement>> placements;  // where placed tasks hold resources
  TimePoint submit_time{};
  TimePoint admit_time{};
  TimePoint start_time{};
  TimePoint held_at{};  // when its teardown began
  State state = State::kPending;
  TimePoint not_before{};
  int32_t gang_timeouts = 0;  // in a row, since it last started
  uint64_t tried_in_cycle = 0;  // the number of the last cycle that tried it
  bool announced = false;   // the sink heard OnAdmitted (and no revocation since)
  bool waits_for_teardown = false;  // its last attempt waited for jobs being torn down
  TimePoint announced_at{};
  bool satisfiability_checked = false;
  bool has_reason = false;
  PendingReason reason;
  std::vector<int64_t> awaited_victims;  // evicted for this job and not yet released
  // With preemption on, where victim search finds it: nowhere, waiting for its min_runtime
  // (Scheduler::maturing_, under `evictable_from`), or in its queue's VictimIndex.
  enum class VictimSlot { kNone, kMaturing, kIndexed };
  VictimSlot victim_slot = VictimSlot::kNone;
  TimePoint evictable_from{};
};

// What one cycle works with.
struct Scheduler::CycleContext {
  ClusterState& state;
  SchedulerSink& sink;
  TimePoint now;
  uint64_t number = 0;  // counts cycles from 1
  std::optional<AdmissionQueue::Cycle> order;
  std::vector<Reservation> reservations;  // of the blocked jobs, in order (at most the depth)
  std::set<int32_t> blocked_leaves;     // strict-FIFO leaves blocked this cycle
  std::set<std::string> satisfiable;    // task classes that fit some empty node
};

// Whether the leaf queue's own use, with `charge` added, stays within its guarantee for every
// resource the tree limits: such jobs are admitted before those that borrow. (Reclaim is judged
// per resource: QueueTree::WithinOwnGuarantee.)
inline bool LeafWithinGuarantee(const QueueTree& tree, int32_t leaf, const ResourceList& charge) {
  const ResourceList guaranteed = tree.Guaranteed(leaf);
  const ResourceList& used = tree.Usage(leaf);
  for (const auto& [resource, limit] : guaranteed) {
    auto u = used.find(resource);
    auto c = charge.find(resource);
    const int64_t total =
        (u == used.end() ? 0 : u->second) + (c == charge.end() ? 0 : c->second);
    if (total > limit) return false;
  }
  return true;
}

}  // namespace tessera

// Scheduler: the job-level scheduling cycle over the Framework — admission, placement,
// preemption and backfill.
//
// Every job is in one of four states: pending (waiting), admitted (its whole quota charge
// reserved in its leaf queue while the jobs preempted for it terminate), running (its gang
// placed), held (its tasks are being torn down). One cycle (RunCycle):
//   1. admitted jobs whose gang timeout passed lose their admission and wait out a back-off;
//   2. admitted jobs, in the profile's QueueSort order, try to place their gang;
//   3. pending jobs, in admission order (queue/admission_queue.h: queue priority, hierarchical
//      fair share, job priority with aging, submission), are admitted when their charge fits
//      their queue (queue/queue_tree.h: guarantees, borrowing and lending limits) — or, when
//      preemption is on, after reclaiming quota: from lower-priority jobs of their own queue,
//      and, for each resource they are short of while their queue stays within its guarantee
//      for it, from queues that borrow that resource (borrowing another one does not stop it)
//      — and then try to place their gang; a job whose gang does not fit gives its charge back,
//      unless it preempted for it;
//   4. running jobs place their tasks beyond the gang as capacity allows.
// A gang — the first `min_available` tasks in task-group order — is placed all-or-nothing with
// Framework::ScheduleGang, inside one cluster, and holds nothing while it waits; the tasks beyond
// it join the gang's cluster. Each task carries its job's cluster constraints (clusterSelector,
// clusterAffinity, clusterAntiAffinity) for the cluster plugins. A gang that does not fit may
// preempt (when the policy allows): lower-priority jobs of its own queue and jobs of queues that
// borrow a resource its queue is within its guarantee for, chosen by preemption/victim_search.h,
// whole gangs only, never before their min_runtime, within the preemptor queue's rate limit, and
// only when the victims make it fit (once the jobs being torn down are gone).
// A preemptor waits for its victims to be released before it preempts again. Otherwise, with
// backfill on (backfill/backfill_planner.h), the first blocked job (EASY) or the first
// `backfill_depth` (conservative) get reservations of capacity (not of quota) from running
// jobs' time limits, planned afresh every cycle, each blocked job around the reservations made
// before it in the cycle (BackfillPlanner::PlanNext); a later job, or a task beyond a running gang,
// starts now only if it delays none of them (reason "Reservation" otherwise). In a strict-FIFO
// queue a job that cannot be admitted or placed blocks the queue's later jobs (reason
// "Priority").
//
// Every job that waits has a reason: QuotaExceeded, a placement code (Diagnosis::TopCode(), e.g.
// "InsufficientResources", with "task worker-1: 0/4 nodes: 3 insufficient gpu, ..."),
// GangIncomplete, Priority, Reservation or Backoff. A job that fits no node even on an empty
// cluster (MatchMode::kSatisfiability), or whose gang fits no cluster as a whole with every node
// empty although each task fits some node (both unless SchedulingPolicy::refuse_unfit is false),
// or whose charge exceeds its queue's limits with nothing else admitted, is refused at its first cycle
// (OnRefused, reason "Refused"); while the state has no node at all the placement check waits for
// the first cycle with one. The check is not repeated when the job is requeued. A job naming an unknown or non-leaf queue is refused at
// Submit.
//
// The Scheduler emits decisions to a SchedulerSink and never does I/O; time comes from the
// injected Clock, randomness (the framework's tie-breaks) from the injected Rng. It does not
// track what placed tasks do: the wiring (the server, the simulator) reports a job's end with
// Remove, a teardown with Hold then Requeue, and releases placements from the ClusterState.
//
// Thread-safety: not thread-safe; owned and driven by the scheduling thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/job.h"
#include "core/placement.h"
#include "core/target_workload.h"
#include "sched/cluster_state.h"
#include "sched/backfill/backfill_planner.h"
#include "sched/framework.h"
#include "sched/preemption/victim_search.h"
#include "sched/profile.h"
#include "sched/queue/admission_queue.h"
#include "sched/queue/queue_spec.h"
#include "sched/queue/queue_tree.h"
#include "sched/scheduling_policy.h"
#include "tessera/common/clock.h"
#include "tessera/common/rng.h"
#include "tessera/sched/registry.h"

namespace tessera {

// Why a job is pending: a code of the job status contract and the detail in words.
struct PendingReason {
  std::string code;
  std::string message;
  // For a task that found no node: how many nodes were looked at and how many each reason
  // rejected, most first ({"insufficient gpu", 3}); empty otherwise.
  int64_t total_nodes = 0;
  std::vector<std::pair<std::string, int64_t>> rejections;
  friend bool operator==(const PendingReason&, const PendingReason&) = default;
};

inline constexpr std::string_view kReasonBackoff = "Backoff";
inline constexpr std::string_view kReasonRefused = "Refused";
inline constexpr std::string_view kReasonGangIncomplete = "GangIncomplete";
inline constexpr std::string_view kReasonSchedulingError = "SchedulingError";

// A queue as the Scheduler sees it now: its spec, the admitted use of its subtree and its jobs.
struct QueueStatus {
  QueueSpec spec;
  ResourceList usage;  // admitted charge of the subtree ("cpu" millicores, "gpu" milli-GPU, ...)
  bool borrowing = false;  // usage above guaranteed for some resource
  double share = 0;        // fair share: weighted dominant share (with history when configured)
  int64_t pending = 0;     // jobs of the subtree waiting for admission
  int64_t admitted = 0;    // admitted, not yet placed
  int64_t running = 0;
};

// When a pending job is predicted to start and what holds it back, from a dry run of the
// same core (the backfill planner over the jobs ahead of it).
struct StartEstimate {
  // nullopt: not predictable (it waits on jobs without a time limit, for their capacity or the
  // quota they hold), or never (blocker "NoFit").
  std::optional<TimePoint> start;
  // What blocks it: "Quota", "Capacity", "Gang", "Reservation", "Position", "Backoff", "NoFit"
  // (no node of the inventory could hold one of its tasks, or no cluster its gang, even empty:
  // no start until a cluster that can joins), or empty.
  std::string blocker;
  std::string message;   // the detail in words
  int64_t position = 0;  // jobs ahead of it in its queue
};

// One task of a job bound to a node. `task` indexes the job's tasks in task-group order
// (group 0's replicas first).
struct TaskBinding {
  int32_t task = 0;
  Placement placement;
};

// Receives the Scheduler's decisions, on the scheduling thread, in decision order. The
// placements are already assumed into the ClusterState. A sink must not call the Scheduler.
class SchedulerSink {
 public:
  virtual ~SchedulerSink() = default;
  // Tasks of `job` were bound: its whole gang (and any tasks beyond it that fit) when `gang` is
  // true, or further tasks of a running job when false.
  virtual void OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) = 0;
  // The job can never run here; it has left the queue. `reason.code` is "Refused".
  virtual void OnRefused(std::string_view job, const PendingReason& reason) = 0;
  // The job is still pending and its reason changed (or it is pending for the first time).
  // An admitted job waiting for its preemption victims hears this too (it stays admitted).
  virtual void OnPending(std::string_view job, const PendingReason& reason) {}
  // The job's whole quota charge stays reserved in its queue while it waits for the jobs
  // preempted for it to release their resources. (A job placed in the cycle of its admission
  // hears only OnPlaced; its charge is reserved from then on.)
  virtual void OnAdmitted(std::string_view job) {}
  // A job that heard OnAdmitted gave its charge back and waits again: the capacity its victims
  // freed went to another job, its gang timeout passed (it waits out a back-off), or its quota
  // was reclaimed by a queue below its guarantee (`preempted` true: counts as a preemption).
  virtual void OnAdmissionRevoked(std::string_view job, const PendingReason& reason,
                                  bool preempted) {}
  // A running job is evicted by preemption or reclaim (reason.code "Preempted"): the Scheduler
  // holds it; the wiring signals its tasks, releases them from the ClusterState when its
  // termination grace ends, then calls Requeue (`requeue` true) or Remove (the policy cancels
  // preempted jobs).
  virtual void OnPreempted(std::string_view job, const PendingReason& reason, bool requeue) {}
};

// What the Scheduler is given at start-up; every pointer outlives it.
struct SchedulerEnv {
  Rng* rng = nullptr;
  const Clock* clock = nullptr;
  // The first target workload, for profiles whose plugins need one (FGD); SetTargetWorkload
  // replaces it later.
  const TargetWorkload* target_workload = nullptr;
};

class Scheduler {
 public:
  // Builds the profile's framework. InvalidArgument when the profile names an unknown plugin or
  // misconfigures one (the framework's message).
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(const Profile& profile,
                                                           const Registry& registry,
                                                           const SchedulerEnv& env,
                                                           const SchedulingPolicy& policy = {});

  // Replaces the queue tree (without a call: one root queue "default" without limits).
  // InvalidArgument naming the queue and field ("queues[2].weight: must be >= 1") for a bad
  // tree; FailedPrecondition when a queue that has jobs would disappear or stop being a leaf.
  absl::Status SetQueues(std::span<const QueueSpec> queues);
  // Every queue, in tree order (parents before children).
  std::vector<QueueStatus> QueueStatuses() const;
  // A waiting job's predicted start: the backfill planner, in dry run on `state` (left as
  // given), plans the admitted jobs, then at most 64 jobs ahead of it in its own queue, then it.
  // A pending job whose charge does not fit its queue now starts no earlier than the quota
  // frees: the first end, among the jobs holding quota (running ones at their time limits, jobs
  // being torn down at the end of their grace, admitted ones at the end of their planned run),
  // after which its charge fits — the plan is then made from that time; no start when the quota
  // it needs is held by jobs without a time limit. Not foreseen: jobs of other queues admitted
  // first, quota taken by the jobs ahead of it in its own queue, quota it could reclaim by
  // preemption (so a start is a lower bound). Blocker "NoFit" and no start when one of its tasks
  // fits no node, or its gang no cluster, even with every node empty (MatchMode::
  // kSatisfiability). NotFound when the job is unknown, running or held.
  absl::StatusOr<StartEstimate> Estimate(std::string_view job, ClusterState& state);

  // Replaces the target workload the profile's plugins measure against (FGD's M) from the next
  // attempt on; the framework's cached scores are dropped. A no-op for profiles without such a
  // plugin. InvalidArgument (the plugin's message) for a workload a plugin refuses: it keeps
  // the previous one.
  absl::Status SetTargetWorkload(const TargetWorkload& workload);

  ~Scheduler();

  // Queues a job with every task unplaced; its submission time is the clock's now. The
  // scheduler keeps `spec` (pass a temporary or std::move to spare a copy).
  // InvalidArgument when the spec does not validate; AlreadyExists when `job` is known.
  absl::Status Submit(std::string_view job, JobSpec spec);
  // Registers a job that already runs, when state is rebuilt after a restart: the tasks listed
  // in `placed` are bound (since `started`) and their placements already assumed into the
  // ClusterState by the caller; the others are placed as capacity allows; the job's charge is
  // admitted in its queue even above the queue's limits (it runs). With `placed` empty it is
  // Submit.
  // Errors as Submit; InvalidArgument for an index outside the job's tasks.
  absl::Status Restore(std::string_view job, JobSpec spec, std::span<const TaskBinding> placed,
                       TimePoint started);
  // The job's tasks are being torn down: it is not tried, nor are its remaining tasks placed,
  // until Requeue or Remove. NotFound when unknown.
  absl::Status Hold(std::string_view job);
  // Puts a job whose tasks were all released back in the queue, in its original order; it is
  // not tried before `not_before` (its reason meanwhile is "Backoff"). NotFound when unknown.
  absl::Status Requeue(std::string_view job, TimePoint not_before);
  // Forgets a job: it ended, was cancelled or failed. No-op when unknown.
  void Remove(std::string_view job);

  // One scheduling cycle: tries every pending job in queue order and places the remaining tasks
  // of running jobs. Placements are assumed into `state` and reported to `sink`.
  void RunCycle(ClusterState& state, SchedulerSink& sink);

  // The next time a waiting job may move with nothing else happening: a back-off or a gang
  // timeout ends; with preemption on, a running job passes its min_runtime or a preemption
  // rate-limit window ends. nullopt when nothing waits on time. The wiring runs a cycle then.
  std::optional<TimePoint> NextWakeup() const;

  // The reason a job is pending; nullptr when it is not pending (unknown, running or held).
  const PendingReason* Reason(std::string_view job) const;
  // The job's tasks in task-group order, as the Scheduler indexes them; nullptr when unknown.
  const std::vector<TaskRequest>* Tasks(std::string_view job) const;

 private:
  struct Entry;
  struct CycleContext;
  class BindRecorder;

  Scheduler() = default;
  Entry* Find(std::string_view job);
  const Entry* Find(std::string_view job) const;
  // Charges the entry to its queue / releases its charge (idempotent).
  void Charge(Entry& entry);
  void Uncharge(Entry& entry);
  void Enqueue(Entry& entry);
  void Forget(Entry& entry);

  void ExpireGangTimeouts(CycleContext& cycle);
  void TryAdmitted(CycleContext& cycle);
  void TryPending(CycleContext& cycle);
  // One walk over the pending jobs; without `borrowing`, jobs whose admission would take their
  // queue above its guarantee are left for the second walk (true when there were some).
  bool WalkPending(CycleContext& cycle, bool borrowing);
  void SettleAdmissions(CycleContext& cycle);
  void MarkBehindStrictHeads(CycleContext& cycle);
  void MarkUntried(CycleContext& cycle);
  bool RefuseIfUnsatisfiable(CycleContext& cycle, Entry& entry);
  // The first of the entry's tasks that fits no node even on an empty `state`, in words;
  // nullopt when every one fits some node. `fitting` caches the task classes that do.
  std::optional<std::string> NeverFits(ClusterState& state, const Entry& entry,
                                       std::set<std::string>* fitting);
  // Whether the entry's gang fits no cluster even with every node of `state` empty, in words;
  // nullopt when it fits, and for a gang of one task (NeverFits judges that one). Costs a copy of
  // the nodes and one gang attempt on it, unless a gang of the same tasks was found to fit the
  // same inventory before (fitting_gangs_).
  std::optional<std::string> GangNeverFits(const ClusterState& state, const Entry& entry);
  // The earliest time at or after `now` at which `target`'s charge fits its queue as the jobs
  // holding quota release it (Estimate); admitted jobs release at the end of their reservation in
  // `plan`. TimePoint::max() when the quota it needs is held by jobs without a time limit.
  TimePoint QuotaFreesAt(const Entry& target, std::span<const Reservation> plan,
                         TimePoint now) const;
  // Admission of one pending job, reclaiming quota when allowed; false when it stays pending.
  // Reclaim, Preempt and Reserve add what they did to the job's pending `reason`.
  bool Admit(CycleContext& cycle, Entry& entry);
  bool Reclaim(CycleContext& cycle, Entry& entry, PendingReason& reason);
  // Places an admitted job's gang now (subject to reservations), or preempts for it, or
  // reserves for it.
  enum class PlaceOutcome {
    kPlaced,     // its gang was bound
    kWaiting,    // it keeps its admission: it waits for its victims, or within its gang timeout
    kNotPlaced,  // it gives its admission back and waits as a pending job
  };
  PlaceOutcome TryPlace(CycleContext& cycle, Entry& entry);
  // Gives an admitted job's charge back; it is pending again (the caller re-queues it).
  void Unadmit(Entry& entry);
  bool Preempt(CycleContext& cycle, Entry& entry, PendingReason& reason);
  static std::span<const TaskRequest> GangOf(const Entry& entry);
  // Running jobs that may be evicted for `entry`'s gang (lower priority in its queue; jobs of
  // other queues holding a resource their queue borrows that the gang is short of while
  // `entry`'s queue is within its guarantee for it), but not those in `exclude`;
  // `eligible` receives the entry of each candidate.
  // `reclaim`: the resources the gang may reclaim from borrowing queues (CapacityToReclaim).
  std::vector<VictimCandidate> CapacityCandidates(CycleContext& cycle, const Entry& entry,
                                                  const std::vector<std::string>& reclaim,
                                                  const std::set<int64_t>& exclude,
                                                  std::vector<Entry*>& eligible);
  // The resources `entry`'s gang may take back from queues that borrow them.
  std::vector<std::string> CapacityReclaim(const CycleContext& cycle, const Entry& entry) const;
  // With preemption on, the running jobs victim search may evict are kept in one VictimIndex
  // per leaf queue (victim_index.h), so that a preemptor of the queue searches them without
  // gathering them: a job is indexed once it runs, preemptible, past its min_runtime (as of the
  // last preemptor's cycle), re-indexed when it places further tasks, and removed when it is
  // held, evicted or forgotten. IndexVictim puts the entry where its state says.
  void IndexVictim(Entry& entry);
  void UnindexVictim(Entry& entry);
  // Moves the jobs that passed their min_runtime by `now` into their queue's index (every job
  // is placed again when `now` is earlier than the last call's).
  void MatureVictims(TimePoint now);
  void ReindexVictims();
  bool GangFitsWithout(CycleContext& cycle, const Entry& entry,
                       const std::vector<Entry*>& victims);
  // Forgets the entry's placed tasks from `state`, appending them to `gone` (for Reassume).
  static void ForgetPlacements(ClusterState& state, const Entry& entry,
                               std::vector<std::pair<const TaskRequest*, Placement>>& gone);
  // The same for every job being torn down (preempted earlier, before a restart too): they
  // release their resources when their termination grace ends.
  void ForgetLeaving(ClusterState& state,
                     std::vector<std::pair<const TaskRequest*, Placement>>& gone);
  // Whether a job may be evicted now: preemptible, and admitted or past its min_runtime.
  bool Evictable(const Entry& victim, TimePoint now) const;
  // How many more evictions the rate limit allows for preemptors of `leaf` now.
  int32_t EvictionsLeft(int32_t leaf, TimePoint now);
  bool Reserve(CycleContext& cycle, Entry& entry, PendingReason& reason);
  void PlaceRemaining(CycleContext& cycle, Entry& entry);
  // Whether starting `bound` (assumed in the state) until `end` would delay a reservation of
  // this cycle; when it would, the placements are taken back out of the state.
  // "it fits now but would delay a reserved job (reserved: a in 5m, b in 1h)".
  std::string ReservationsText(const CycleContext& cycle) const;
  bool DelaysReservations(CycleContext& cycle, Entry& entry,
                          const std::vector<TaskBinding>& bound, TimePoint end);
  // Places tasks[indices] with the first `min_available` all-or-nothing, in one cluster (in
  // `cluster` when given); maps the result back to job task indices. Empty on failure, with
  // `failure` set.
  std::vector<TaskBinding> Attempt(ClusterState& state, Entry& entry,
                                   const std::vector<int32_t>& indices, int32_t min_available,
                                   PendingReason* failure, std::string_view cluster = {});
  void Started(Entry& entry, std::vector<TaskBinding> bound, SchedulerSink& sink);
  void Evict(CycleContext& cycle, Entry& victim, const Entry& preemptor, std::string_view why);
  void SetPending(Entry& entry, PendingReason reason, SchedulerSink& sink);

  // When a running job releases its tasks (TimePoint::max(): no time limit); a held one, at the
  // end of its termination grace.
  TimePoint EndOf(const Entry& entry) const;
  // Sets the job's release in releases_ when it holds placed tasks (running or held), else
  // removes it: called whenever a job starts, places more tasks, is held or leaves.
  void ScheduleRelease(const Entry& entry);
  BlockedJob AsBlocked(const Entry& entry) const;
  std::vector<Entry*> AdmittedInOrder();

  SchedulerEnv env_;
  SchedulingPolicy policy_;
  std::unique_ptr<BindRecorder> recorder_;
  std::unique_ptr<Framework> framework_;
  std::unique_ptr<Framework> satisfiability_;  // the same profile, for GangNeverFits only
  // The gangs (by their tasks' equivalence classes) that GangNeverFits found to fit the
  // inventory of the state `uid` at `inventory_version`; emptied when either changes.
  struct FittingGangs {
    uint64_t uid = 0;
    uint64_t inventory_version = 0;
    std::set<std::string> gangs;
  } fitting_gangs_;
  std::unique_ptr<QueueTree> tree_;
  std::unique_ptr<AdmissionQueue> admission_;
  std::unique_ptr<BackfillPlanner> planner_;
  ReleaseSchedule releases_;  // what the running and held jobs release, and when
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> jobs_;
  std::map<int64_t, Entry*> by_id_;
  std::vector<int64_t> untried_;  // jobs submitted or requeued since the last cycle
  // Per preemptor leaf queue: the times of its recent evictions, for the rate limit.
  std::map<int32_t, std::vector<TimePoint>> evictions_;
  std::map<int32_t, VictimIndex> victim_indexes_;     // by leaf queue
  std::set<std::pair<TimePoint, int64_t>> maturing_;  // (evictable from, job id)
  TimePoint matured_at_ = TimePoint::min();           // the indexes hold what is evictable then
  std::set<int64_t> held_;                            // the jobs being torn down, by id
  int64_t next_sequence_ = 0;
  uint64_t cycles_ = 0;
};

}  // namespace tessera

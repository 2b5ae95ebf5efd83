// JobManager: the control plane's job lifecycle — the JobService the API layers call, and the
// scheduling loop that admits, places, binds, runs and ends jobs on the clusters.
//
// State machine (every transition is a stored JobEvent with time and reason):
//   Pending ──(quota reserved and gang placed: Admitted, Placed)──> Admitted ──(Bound, first
//   TaskStarted)──> Running ──> Succeeded (every task exited 0) | Failed | Cancelled
// A job whose gang waits for the jobs preempted for it is Admitted before it is placed; it may
// lose its admission and wait again (Pending): its gang timeout passed ("GangTimeout"), a
// queue below its guarantee reclaimed the quota ("Reclaimed", a preemption), or the capacity
// went to another job ("AdmissionRevoked"). A running job evicted by preemption or reclaim
// ("Preempted") is torn down like a cancel, then requeued as Pending (not counted against
// maxRestarts; counted in status.preemptions) or, by policy, Cancelled with reason "Preempted". A
// job with a task on a node an admin drains (ChangeNode; job_manager_nodes.cc) is torn down the
// same way ("Evicted", reason "NodeDrained"; its tasks get the drain's grace, else the job's) and
// always requeued ("Requeued", reason "NodeDrained"), counted neither as a restart nor as a
// preemption; so is a job with a task on a node that gains a NoExecute taint the task does not
// tolerate (as Kubernetes' taint eviction; reason "NoExecuteTaint"). A
// task that fails tears the whole job down (its other tasks are cancelled); the restart policy then
// requeues it as Pending (a new attempt, after a back-off that doubles per restart) or fails it, by
// the rules of control/restart_rules.h. A time limit exceeded, or a program that cannot start,
// fails the job without a requeue, also when the limit passes while a preemption or a drain
// tears the job down. A job that fits no node even on an empty cluster stays Pending
// with the blocker NoFit and an estimate of "never" (a cluster that joins later may fit it; the
// simulator, whose clusters are fixed, refuses it instead). A job that can never fit its queue's
// limits is refused. Cancel: a Pending job is Cancelled at once; otherwise its tasks get SIGTERM,
// then SIGKILL after spec.terminationGracePeriod, and the job is Cancelled once they are gone.
//
// Threads. API calls run on the callers' threads. One loop thread is the only writer of job
// lifecycle state after submission: it takes events from a queue (job submitted or cancelled,
// bindings committed, task started or ended, a timer) and runs a scheduling cycle over the
// Scheduler and the ClusterState once as soon as it starts, then whenever something changed,
// and at least every `cycle_interval`. The loop never waits on real time: its wake-ups — the
// next periodic cycle, the end of a requeued job's back-off, the Scheduler's next wake-up (a
// victim's min_runtime, a preemption rate-limit window, a gang timeout) — are timers armed on
// JobManagerOptions::timers (the clock's time), whose callbacks only post a timer event. Stop
// cancels the timers still armed.
// Back-pressure: the submissions and start-time estimates waiting for the loop are bounded by
// JobManagerOptions::max_queued_requests. Past it a submission (or a whole batch) is refused
// with ResourceExhausted before anything is stored (REST 429 with Retry-After, gRPC
// RESOURCE_EXHAUSTED), and an explain answers without an estimate. Cancels, queue changes and
// what clusters report are never refused. Callers that pass the check at the same instant may
// take the queue above the bound by their own jobs, at most one batch each.
//
// Durability (DESIGN.md §4): a submission is acknowledged only once committed. A placement is
// committed before its bindings are sent, and a binding is recorded ("Bound") before the
// cluster is told to launch it, so after a crash a task is either known to its cluster or
// certainly never started. Every job write one loop turn decides (its events, then its cycle) goes
// into one store transaction, handed to the store at the end of the turn (CycleWrites: a job's
// steps of one turn are coalesced into one write of each key; a turn whose writes pass the
// store's TxnLimits takes several transactions). What waits for durability — bindings sent
// after a placement, a launch after "Bound", a cancel's answer, events published — waits for
// that transaction. Store writes of one job are enqueued in the order they were decided (the
// store commits its queue in order). A job's spec is stored once, with its submission; each
// later step rewrites only its status record and the tasks that changed (job_record.h). On start,
// the manager rebuilds its state from the store: pending jobs are queued again, running tasks'
// placements are assumed, and each cluster reconciles the tasks it runs (Cluster::Recover): a task
// still running is kept; one that vanished ends "Lost" and its job follows its restart policy.
// Reads (Get, List, and finding the job of Events, Watch) are answered from an immutable
// JobSnapshot (server/job_snapshot.h) that the loop publishes at the end of each turn, before
// the turn's writes go to the store, and that each submission publishes as it is acknowledged:
// a read takes no lock the loop holds, and shows a lifecycle step at most one loop turn ahead of
// durability; events (Events, Watch) appear once stored. A crash in between is recovered by
// re-deriving the step.
//
// Nodes: an admin's cordon, drain or uncordon runs on the loop thread (the node leaves or rejoins
// the scheduler's candidates at once, a drain's evictions start) and is acknowledged once its
// record is stored with the turn's transaction; a Draining node with nothing of ours left on it
// becomes Drained at the end of a loop turn. Start reads the stored records before the
// inventory and goes on with the drains a restart interrupted. A node's own cordon (what its
// backend reports) is kept apart: the scheduler sees a node unschedulable when either says so.
//
// Queues: the tree in effect is the stored one (/tessera/queues, written by every change
// through the API) when there is one, else JobManagerOptions::queues (the configuration
// file's), else one queue "default" without limits; Start logs which. Changes run on the loop
// thread (the Scheduler checks them) and are acknowledged once stored. Queue views (usage,
// share, job counts) are a snapshot the loop publishes after each cycle; start-time
// estimates are dry runs on the loop thread, made when a client asks (Explain).
//
// Target workload (what FGD measures fragmentation against; profile fgd): the fixed one of
// JobManagerOptions::target_workload when set, else the shapes of the tasks submitted last
// (RecentWorkload: seeded at Start from the stored jobs in submission order, then grown by every
// submission on the loop thread), handed to the Scheduler before each cycle in which it changed.
//
// Errors: as JobService; Create returns the store's errors, and DataLoss for a record that
// cannot be decoded; Start fails when the tree in effect lacks a leaf queue that unfinished
// jobs use.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "control/restart_rules.h"
#include "control/wake_ups.h"
#include "core/timer_thread.h"
#include "prometheus/registry.h"
#include "sched/cluster_state.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "server/cycle_writes.h"
#include "server/event_hub.h"
#include "server/job_record.h"
#include "server/job_service.h"
#include "server/job_snapshot.h"
#include "server/recent_workload.h"
#include "server/server_metrics.h"
#include "spec/queue_document.h"
#include "tessera/cluster/cluster.h"
#include "tessera/common/clock.h"
#include "tessera/common/rng.h"
#include "tessera/sched/registry.h"
#include "tessera/store/store.h"

namespace tessera::server {

struct JobManagerOptions {
  store::Store* store = nullptr;  // required; outlives the manager
  const Clock* clock = nullptr;   // required
  // Wake-ups on `clock`'s time (a SimulatedClock, tessera/common/simulated_clock.h, in tests);
  // outlives the manager. nullptr: a TimerThread the manager owns, sleeping in real time (for a
  // clock that follows real time, such as the system clock).
  Timers* timers = nullptr;
  Profile profile;          // the scheduling profile (sched/profile.h)
  SchedulingPolicy policy;  // backfill, fair share, preemption (sched/scheduling_policy.h)
  // The configured queue tree (tree order); nullopt: none configured. Used until the tree is
  // changed through the API, which stores its own.
  std::optional<std::vector<QueueSpec>> queues;
  const Registry* registry = nullptr;  // plugins; nullptr = BuiltinPlugins()
  uint64_t seed = 1;                   // the scheduler's tie-breaks
  Duration cycle_interval{1000};       // longest wait between cycles while jobs are pending
  // The first restart's back-off; each further one doubles, up to 1h (control/restart_rules.h).
  Duration requeue_backoff{5000};
  // Submitted jobs and estimate requests that may wait for the loop at once (>= 1).
  size_t max_queued_requests = 100'000;
  prometheus::Registry* metrics = nullptr;  // nullable
  // Deletes a cluster behind an agent (AgentClusters::Delete): NotFound for a cluster that is
  // not behind an agent. nullptr: no cluster can be deleted.
  std::function<absl::Status(std::string_view)> delete_cluster;
  // FGD's target workload: fixed when set (the configuration's pod list); nullopt: the window
  // of recently submitted tasks below, empty until the first submission.
  std::optional<TargetWorkload> target_workload;
  RecentWorkloadOptions recent_workload;
  // Called (on the store's thread) when a transaction of decided job writes fails: the
  // manager's state is then ahead of the store, and only a restart (which rebuilds it from the
  // store) brings them together again. A replica of an HA control plane exits; nullptr: the
  // failure is logged and the manager goes on.
  std::function<void(const absl::Status&)> on_write_failure;
  // The stored job records (by id, with their stored tasks applied), when the caller holds them
  // already: a standby's JobMirror (server/job_mirror.h), handed over at its election. Start
  // takes them instead of reading and decoding the job and task keys. nullopt: Start reads them.
  std::optional<std::map<int64_t, JobRecord>> stored_jobs;
};

class JobManager final : public JobService, public TaskObserver, public InventoryObserver {
 public:
  // Validates the options and builds the scheduler; nothing runs yet and Ready() is false.
  static absl::StatusOr<std::unique_ptr<JobManager>> Create(JobManagerOptions options);
  ~JobManager() override;

  // Rebuilds state from the store (the job records from JobManagerOptions::stored_jobs when
  // given), reconciles `clusters` (which report to this manager as their TaskObserver and
  // outlive it), then starts the loop; Ready() is true from then on.
  absl::Status Start(std::vector<Cluster*> clusters);
  // A cluster that joins while the manager runs (an agent registered for the first time): its
  // nodes join the scheduler's snapshot at the next cycle. Any thread; `cluster` outlives the
  // manager and reports to it as its TaskObserver and InventoryObserver.
  void AttachCluster(Cluster* cluster);
  // Stops the loop and ends watch streams. Running tasks keep running (a restarted manager
  // adopts them). Idempotent.
  void Stop();

  // JobService.
  absl::StatusOr<SubmitResult> Submit(const Caller& caller, spec::JobDocument job) override;
  absl::StatusOr<SubmitBatchResult> SubmitBatch(const Caller& caller,
                                                std::vector<spec::JobDocument> jobs) override;
  absl::StatusOr<JobView> Get(const Caller& caller, std::string_view id) override;
  absl::StatusOr<ListJobsResult> List(const Caller& caller,
                                      const ListJobsRequest& request) override;
  absl::StatusOr<JobView> Cancel(const Caller& caller, std::string_view id) override;
  absl::StatusOr<std::vector<JobEvent>> Events(const Caller& caller, std::string_view id) override;
  absl::StatusOr<JobExplanation> Explain(const Caller& caller, std::string_view id) override;
  absl::StatusOr<LogChunk> Logs(const Caller& caller, std::string_view id,
                                const LogRequest& request) override;
  absl::StatusOr<std::unique_ptr<EventStream>> Watch(const Caller& caller,
                                                     const WatchRequest& request) override;
  std::vector<QueueView> Queues() override;
  absl::StatusOr<std::vector<QueueView>> ApplyQueues(const Caller& caller,
                                                     std::vector<QueueSpec> queues) override;
  absl::StatusOr<QueueView> ApplyQueue(const Caller& caller, QueueSpec queue) override;
  absl::Status DeleteQueue(const Caller& caller, std::string_view name) override;
  std::vector<NodeView> Nodes() override;
  // job_manager_nodes.cc.
  absl::StatusOr<NodeView> ChangeNode(const Caller& caller, const NodeChange& change) override;
  std::vector<ClusterView> Clusters() override;
  absl::Status DeleteCluster(const Caller& caller, std::string_view name) override;
  bool Ready() const override { return ready_.load(); }

  // Driving the manager on simulated time (a SimulatedClock as clock and timers; the parity
  // test, tests/parity/): within one instant, the test holds the cycles, lets the loop handle
  // what is due (task ends, submissions, cancels) and waits for it, then releases the hold so
  // that one cycle sees all of it, as the scenario runner's single cycle per instant does.
  //
  // HoldCycles(true): the loop keeps handling what is posted but runs no scheduling cycle;
  // HoldCycles(false) runs one cycle for everything handled meanwhile (none when nothing was).
  // Any thread.
  void HoldCycles(bool hold);
  // Blocks until the loop is idle: nothing queued, no batch being handled, no cycle owed
  // (except one held back by HoldCycles), and no store write in flight (their callbacks, and
  // what those post, are handled too). What a cluster reports from its own threads is not
  // waited for (SimCluster on the clock's timers reports inside SimulatedClock::Set). It does
  // not move the clock. Any thread but the loop's; returns at once after Stop.
  void WaitIdle();

  // TaskObserver (any thread): queued for the loop.
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override;
  void OnTaskEnded(const TaskEnd& end) override;
  // InventoryObserver (any thread): queued for the loop.
  void OnNodesChanged(const Cluster& cluster, std::vector<Node> nodes) override;

 private:
  class Sink;
  struct JobSubmitted {
    int64_t id;
  };
  struct CancelRequested {
    int64_t id;
    std::function<void()> done;
  };
  struct BindingsCommitted {
    int64_t id;
    int32_t attempt;
  };
  struct LaunchRecorded {
    int64_t id;
    int32_t attempt;
    std::vector<int32_t> tasks;
  };
  struct TaskStarted {
    std::string launch_id;
    TimePoint time;
  };
  struct TaskEnded {
    TaskEnd end;
  };
  // A change of the queue tree: `edit` maps the tree in effect to the new one.
  using QueueEdit =
      std::function<absl::StatusOr<std::vector<QueueSpec>>(const std::vector<QueueSpec>&)>;
  struct QueuesChanged {
    QueueEdit edit;
    std::function<void(absl::Status)> done;
  };
  struct EstimateRequested {
    int64_t id;
    std::function<void(absl::StatusOr<StartEstimate>)> done;
  };
  struct PreemptionStarted {
    int64_t id;
  };
  struct ClusterAttached {
    Cluster* cluster;
  };
  struct ClusterDetached {
    Cluster* cluster;
    std::function<void()> done;
  };
  struct NodesChanged {
    const Cluster* cluster;
    std::vector<Node> nodes;
  };
  struct WakeUp {
    uint64_t wake;
  };  // a timer of wake_ups_ fired
  struct NodeChangeRequested {
    NodeChange change;
    std::string by;                          // the caller's tenant
    std::function<void(absl::Status)> done;  // after the new state is stored
  };
  using LoopEvent =
      std::variant<JobSubmitted, CancelRequested, BindingsCommitted, LaunchRecorded, TaskStarted,
                   TaskEnded, QueuesChanged, EstimateRequested, PreemptionStarted, ClusterAttached,
                   ClusterDetached, NodesChanged, WakeUp, NodeChangeRequested>;
  // A node's administrative record and what its backend last said of its own cordon.
  struct NodeAdminEntry {
    NodeAdmin record;
    bool backend_unschedulable = false;
  };

  explicit JobManager(JobManagerOptions options);

  // --- API side -------------------------------------------------------------------------
  // The record `id` names, if `caller` may see it. REQUIRES: mu_ held.
  JobRecord* FindVisibleLocked(const Caller& caller, std::string_view id);
  // The published version of the job `id` names, if `caller` may see it; nullptr otherwise.
  std::shared_ptr<const PublishedJob> FindPublished(const Caller& caller,
                                                    std::string_view id) const;
  absl::StatusOr<JobView> GetView(const Caller& caller, std::string_view id);
  // The snapshot reads are answered from. Any thread.
  std::shared_ptr<const JobSnapshot> Published() const;
  // Publishes the jobs changed since the last call (MarkChangedLocked), leaving out submissions
  // not yet committed; a job's versions share the spec it was first published with (a spec
  // does not change after submission). REQUIRES: mu_ held (which orders the publishers).
  void PublishLocked();
  // The view of job `id` changed: the next PublishLocked publishes it. REQUIRES: mu_ held.
  void MarkChangedLocked(int64_t id) { unpublished_.push_back(id); }
  // Submit and SubmitBatch (job_manager_submit.cc): checks `jobs` in order, commits the
  // accepted ones together and posts them to the loop together; one result per job.
  SubmitBatchResult SubmitAll(const Caller& caller, std::vector<spec::JobDocument> jobs);
  // InvalidArgument naming spec.queue unless `queue` is a leaf of the tree. REQUIRES: mu_ held.
  absl::Status CheckQueueLocked(std::string_view queue) const;
  // Runs `edit` on the loop thread and waits for it to be stored.
  absl::Status EditQueues(const Caller& caller, QueueEdit edit);
  // The dry-run start estimate of pending job `id`, from the loop thread; nullopt when none.
  std::optional<StartEstimate> EstimateStart(int64_t id);

  // ResourceExhausted when `requests` more would take the requests waiting for the loop past
  // max_queued_requests. Any thread.
  absl::Status CheckLoopBacklog(size_t requests);

  // --- loop side --------------------------------------------------------------------------
  // Whether the event is a request the backlog counts (a submission, an estimate).
  static bool IsQueuedRequest(const LoopEvent& event);
  void Post(LoopEvent event);
  // Queues every event at once (one wake-up of the loop). job_manager_submit.cc.
  void PostAll(std::vector<LoopEvent> events);
  void LoopMain();
  void Handle(JobSubmitted& event);
  void Handle(CancelRequested& event);
  void Handle(BindingsCommitted& event);
  void Handle(LaunchRecorded& event);
  void Handle(TaskStarted& event);
  void Handle(TaskEnded& event);
  void Handle(QueuesChanged& event);
  void Handle(EstimateRequested& event);
  void Handle(PreemptionStarted& event);
  void Handle(ClusterAttached& event);
  void Handle(ClusterDetached& event);
  void Handle(NodesChanged& event);
  void Handle(WakeUp& event);
  void Handle(NodeChangeRequested& event);
  // Adds `node` to the snapshot, or replaces the node of that name, keeping what placed tasks
  // hold. A name that another cluster owns is left alone (logged). Returns whether the node
  // gained a NoExecute taint (or came with one). REQUIRES: state_mu_ held.
  bool UpsertNodeLocked(Cluster* cluster, Node node);
  // UpsertNodeLocked for each of `nodes`, then the evictions of the NoExecute taints they
  // gained. Loop thread, neither mu_ nor state_mu_ held.
  void UpsertNodes(Cluster* cluster, std::vector<Node> nodes);
  void RunCycle();

  // --- node lifecycle (job_manager_nodes.cc) ----------------------------------------------
  // Reads the stored node records into node_admin_. Start, before the inventory is added.
  absl::Status LoadNodeAdmins();
  // Notes `node`'s own cordon (as its backend reports it) and adds the cordon of its
  // administrative state. REQUIRES: state_mu_ held (or Start, before the loop runs).
  void ApplyNodeAdminLocked(Node& node);
  // Evicts every job with an active task on the Draining node of `admin` that is not torn down
  // already (a job already evicted by a drain takes `admin`'s grace: Start). REQUIRES: mu_ held,
  // state_mu_ not.
  void EvictFromNodeLocked(const NodeAdmin& admin);
  // Start: the drains a restart interrupted go on. REQUIRES: mu_ held, state_mu_ not.
  void ResumeDrainsLocked();
  // Evicts every job with an active task on one of `nodes` (of `cluster`) that does not
  // tolerate a NoExecute taint of that node and is not torn down already. Kubernetes' own
  // not-ready and unreachable taints are left to the backend (tolerated there for 300 s by
  // default). After an inventory report, for the nodes that gained such a taint. REQUIRES: mu_
  // held, state_mu_ not.
  void EvictUntoleratedLocked(const Cluster& cluster, const std::vector<std::string>& nodes);
  // Starts tearing `record` down for an eviction (`action` kDrain or kTaint): its tasks get
  // `grace`, else the job's own. REQUIRES: mu_ held, state_mu_ not.
  void EvictLocked(JobRecord& record, control::Eviction action, std::optional<Duration> grace,
                   std::string reason, std::string message);
  // Draining nodes with nothing of ours left on them become Drained. Loop thread, each turn.
  void CompleteDrains();
  // Adds the record's write to the loop turn's transaction; `done` runs after its commit.
  // REQUIRES: mu_ held.
  void PersistNodeAdminLocked(const NodeAdmin& record, std::function<void()> done = nullptr);
  // Adds a submitted job's tasks to the window of recent tasks. Loop thread (or Start).
  void NoteSubmitted(const JobSpec& spec);
  // Gives the Scheduler the window's workload when it changed since it was last given.
  // Loop thread, state_mu_ held.
  void HandRecentWorkload();
  // Copies the Scheduler's queue statuses for the API threads. Loop thread (or Start).
  void PublishQueueStatuses();
  // Stores the tree; `done` runs after the commit (on a store thread).
  void PersistQueues(const std::vector<QueueSpec>& tree, std::function<void(absl::Status)> done);
  // FailedPrecondition when an unfinished job's queue is not a leaf of `tree`.
  // REQUIRES: mu_ held.
  absl::Status CheckJobsFitTreeLocked(const std::vector<QueueSpec>& tree) const;
  // Scheduler decisions (the Sink forwards them; loop thread, state_mu_ held).
  void OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks);
  void OnRefused(std::string_view job, const PendingReason& reason);
  void OnPending(std::string_view job, const PendingReason& reason);
  void OnAdmitted(std::string_view job);
  void OnAdmissionRevoked(std::string_view job, const PendingReason& reason, bool preempted);
  void OnPreempted(std::string_view job, const PendingReason& reason, bool requeue);
  void UpdateMetrics();
  // Drives a job whose tasks changed towards its next phase: tears it down after a failure or
  // a cancel, requeues or ends it. Idempotent.
  // REQUIRES: mu_ held; `events` collects what happened, for one PersistLocked.
  void Resolve(JobRecord& record, std::vector<JobEvent>& events);
  void EndTask(JobRecord& record, int32_t task, TaskPhase phase, std::optional<int32_t> exit_code,
               std::string reason, std::string message);
  // Applies control::AfterAttempt's outcome to a job whose attempt is over: ends it, or requeues
  // it with the event its cause names (`eviction`: what tore it down; `failed`: its first
  // failed task, set whenever the outcome is kFailed or a requeue after a failure; `failure`:
  // that task's reason, "Error" when it gave none).
  void EndAttempt(JobRecord& record, std::vector<JobEvent>& events,
                  const control::AttemptOutcome& outcome, control::Eviction eviction,
                  const TaskRuntime* failed, std::string_view failure);
  // Makes the job Pending again for a new attempt and gives it back to the scheduler.
  void Restart(JobRecord& record, std::vector<JobEvent>& events, std::string reason,
               std::string message, TimePoint not_before);
  // Records the wait of the job's current attempt for the placement of its gang, now, in
  // tessera_job_placement_latency_seconds: from status.submit_time for the first attempt, from
  // requeued_at for later ones (none for a requeued attempt read back from the store).
  // REQUIRES: mu_ held; called once per attempt, when its gang is placed.
  void ObservePlacementLatency(const JobRecord& record);
  // Pending → Admitted with its event. REQUIRES: mu_ held.
  void MarkAdmitted(JobRecord& record, std::vector<JobEvent>& events, std::string message);
  void Finish(JobRecord& record, std::vector<JobEvent>& events, JobPhase phase, std::string reason,
              std::string message);
  TaskLaunchSpec LaunchSpec(const JobRecord& record, int32_t task, const PeerNodes& peers) const;
  Cluster* ClusterOf(std::string_view node) const;

  // Appends an event to the record and returns it. REQUIRES: mu_ held.
  JobEvent& AddEvent(JobRecord& record, std::vector<JobEvent>& events, std::string type,
                     std::string reason = "", std::string message = "");
  // Adds the record, its tasks that changed and `events` to the loop turn's transaction
  // (cycle_writes_); `done` runs after its durable commit (on a store thread). Never refused
  // for size: CheckStorable admitted the job. REQUIRES: mu_ held, so that writes are enqueued
  // in decision order.
  void PersistLocked(JobRecord& record, std::vector<JobEvent> events,
                     std::function<void()> done = nullptr);
  // Publishes the changed views (PublishLocked), then hands the writes gathered since the last
  // call to the store as one transaction (nothing when there are none), so that what a write's
  // `done` answers is already readable. The loop calls it once per turn, after the cycle;
  // PersistLocked also calls it when the next write would take the transaction past the store's
  // limits. REQUIRES: mu_.
  void CommitWritesLocked();

  // --- start-up ---------------------------------------------------------------------------
  absl::Status LoadJobs();
  // Takes options_.stored_jobs as the records instead of LoadJobs.
  void AdoptStoredJobs();
  // Adds a stored record's request id and active name to the indices. REQUIRES: mu_ held.
  void IndexStoredLocked(const JobRecord& record);
  // Chooses the queue tree (stored, configured or the default) and gives it to the scheduler.
  absl::Status LoadQueues();
  void RestoreJob(JobRecord& record, std::map<Cluster*, std::vector<KnownLaunch>>& known,
                  std::vector<int64_t>& to_launch);

  JobManagerOptions options_;
  std::unique_ptr<Rng> rng_;
  std::unique_ptr<ServerMetrics> metrics_;
  EventHub hub_;
  std::atomic<bool> ready_{false};
  std::atomic<int64_t> in_flight_{0};  // store writes whose callback has not run yet

  // Job records and their indices; read by API threads, written by Submit (new records) and the
  // loop thread.
  mutable std::mutex mu_;
  std::map<int64_t, JobRecord> jobs_;
  std::map<int64_t, JobExplanation> explanations_;          // pending jobs' scheduler diagnosis
  absl::flat_hash_map<std::string, int64_t> requests_;      // tenant + '\0' + request id → id
  // A launched task's job and index in it, so that its start and end find it at once.
  struct LaunchedTask {
    int64_t job = 0;
    int32_t task = 0;
  };
  absl::flat_hash_map<std::string, LaunchedTask> launches_;  // launch id → its task
  absl::flat_hash_map<std::string, int64_t> active_names_;  // tenant + '\0' + name → id
  std::set<int64_t> uncommitted_;  // submissions not yet durable: invisible to readers
  CycleWrites cycle_writes_;       // the loop turn's job writes, not yet handed to the store
  std::vector<int64_t> unpublished_;  // jobs whose view changed since the last PublishLocked
  int64_t next_id_ = 1;
  // The queue tree in effect (tree order; written on the loop thread) and the loop's last
  // snapshot of the Scheduler's queue statuses.
  std::vector<QueueSpec> queues_;
  spec::QueueLeafIndex queue_leaves_;  // of queues_
  std::vector<QueueStatus> queue_statuses_;

  // What reads see: replaced by PublishLocked (under mu_ and snapshot_mu_), read under
  // snapshot_mu_ alone. snapshot_mu_ is taken last and held only to copy the pointer.
  mutable std::mutex snapshot_mu_;
  std::shared_ptr<const JobSnapshot> snapshot_ = std::make_shared<JobSnapshot>();

  // Loop state: owned by the loop thread; state_ also read by Nodes()/Clusters() under state_mu_.
  // Lock order: only the loop thread (and Start, before the loop runs) ever holds mu_ and
  // state_mu_ together (in either order);
  // an API thread holds at most one of them at a time, so no two threads can wait on each other.
  mutable std::mutex state_mu_;
  ClusterState state_;
  std::unique_ptr<Scheduler> scheduler_;
  RecentWorkload recent_workload_;         // unused with a fixed target workload
  uint64_t handed_workload_revision_ = 0;  // of recent_workload_, as last given to the Scheduler
  // Nodes with an administrative record, by NodeAdminKey(cluster, node); written on the loop
  // thread (and by Start) under state_mu_, read by Nodes().
  std::map<std::string, NodeAdminEntry, std::less<>> node_admin_;

  // The clusters and which one owns each node: written by Start and the loop, read by any
  // thread. clusters_mu_ is taken last: no other lock is taken while it is held.
  mutable std::mutex clusters_mu_;
  std::vector<Cluster*> clusters_;
  std::map<std::string, Cluster*, std::less<>> node_cluster_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<LoopEvent> queue_;
  size_t queued_requests_ = 0;  // the events of queue_ for which IsQueuedRequest holds
  bool stopping_ = false;
  bool handling_ = false;            // the loop handles a batch or runs a cycle
  bool cycles_held_ = false;         // HoldCycles
  bool cycle_owed_ = false;          // a batch was handled while the cycles were held
  std::condition_variable idle_cv_;  // the loop went idle (WaitIdle)
  std::thread loop_;
  std::unique_ptr<Sink> sink_;
  // The loop's wake-ups (the periodic cycle, back-offs' ends) on options_.timers, else on
  // own_timers_; owned by the loop thread (by Start and Stop while it does not run).
  std::unique_ptr<TimerThread> own_timers_;
  control::WakeUps wake_ups_;
  std::optional<TimePoint> scheduler_wake_;  // the last Scheduler::NextWakeup armed (loop thread)
  TimePoint last_metrics_{};
};

}  // namespace tessera::server

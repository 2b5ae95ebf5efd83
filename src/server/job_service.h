// JobService: what the control plane offers its API layers (REST, gRPC) — submitting,
// reading, listing, cancelling and watching jobs, their events, logs, pending reasons and
// start-time estimates, the queue tree (read by anyone, changed by admins), and read-only views
// of nodes and clusters. docs/api.md maps it onto HTTP and gRPC.
//
// Every call names its Caller (from the request's bearer token, auth/authenticator.h). A
// tenant sees and cancels only its own jobs: another tenant's job is NotFound, exactly as a job
// that does not exist, so ids leak nothing. An admin sees every job.
//
// Errors (absl canonical codes; the API layers map them onto HTTP and gRPC statuses):
//   InvalidArgument     a spec that does not validate (the message names the field path:
//                       "spec.tasks[1].resources.gpu: must be >= 0"), a job for a queue that
//                       is not a leaf of the tree ("spec.queue: unknown queue \"x\""), a bad
//                       filter or page token, a queue tree that does not hold together;
//   PermissionDenied    a tenant changing the queue tree or listing another tenant's jobs;
//   NotFound            no such job for this caller, no such task, no such queue;
//   AlreadyExists       a non-terminal job of the same tenant already has this metadata.name;
//   FailedPrecondition  the job cannot do that now (logs of a task that never started); a
//                       queue change would remove (or make a parent of) a queue with
//                       unfinished jobs;
//   ResourceExhausted   the store's write queue is full, or (submissions) the requests waiting
//                       for the scheduling loop are at their bound: retry later;
//   Unavailable         the service is starting or stopping, or the store is unreachable.
// Times are TimePoints (milliseconds since the Unix epoch).
// Thread-safety: implementations are safe to call from any number of threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/job_phase.h"
#include "core/node.h"
#include "core/resources.h"
#include "sched/queue/queue_spec.h"
#include "server/node_admin.h"
#include "spec/job_document.h"
#include "spec/request_error.h"
#include "tessera/cluster/task_log.h"
#include "tessera/common/clock.h"

namespace tessera::server {

// Who is calling, as the API layer authenticated it.
struct Caller {
  std::string tenant;  // the token's tenant; every job belongs to the tenant that submitted it
  bool admin = false;  // admins see and cancel every job and may manage tokens
};

// One recorded step of a job's life: every phase transition and every decision (placement,
// binding, task start and end, cancel request) is one, with its time and reason.
struct JobEvent {
  std::string job_id;
  int64_t sequence = 0;  // 1, 2, 3, ... within the job
  TimePoint time{};
  // "Submitted", "Admitted", "Placed", "Bound", "TaskStarted", "TaskEnded", "Running",
  // "Requeued", "CancelRequested", "Succeeded", "Failed", "Cancelled", "Lost", from the
  // queue policies "GangTimeout", "Reclaimed", "AdmissionRevoked" (an admitted job loses its
  // admission) and "Preempted" (a running job is evicted), and "Evicted" (reason
  // "NodeDrained": a node it runs on is drained).
  std::string type;
  JobPhase phase = JobPhase::kPending;  // the job's phase after this event
  std::string reason;                   // a code ("TimeLimitExceeded", "LostOnRestart", ...)
  std::string message;                  // the detail in words
};

// A job as the API shows it: the JOBSPEC.md document (metadata.id and status set) and its owner.
struct JobView {
  spec::JobDocument document;
  std::string tenant;
};

struct SubmitResult {
  JobView job;
  bool created = true;  // false: metadata.requestId matched an earlier submission, returned here
};

// The most jobs one SubmitBatch takes (a request of more is refused whole, field "items").
inline constexpr size_t kMaxSubmitBatchItems = 1000;
// Per item of a SubmitBatch, in the request's order: the job, or why it was refused.
using SubmitBatchResult = std::vector<absl::StatusOr<SubmitResult>>;
// InvalidArgument naming "items" unless a batch of `items` jobs holds 1..kMaxSubmitBatchItems.
inline absl::Status CheckSubmitBatchSize(size_t items) {
  if (items >= 1 && items <= kMaxSubmitBatchItems) return absl::OkStatus();
  return spec::FieldError("items", absl::StrCat("must hold 1..", kMaxSubmitBatchItems,
                                                " jobs, not ", items));
}

// Which phases a listing shows, as a class: active jobs are Pending, Admitted or Running;
// terminal ones Succeeded, Failed or Cancelled.
enum class JobStateFilter { kAll, kActive, kTerminal };
// The order of a listing, by id (submission order).
enum class ListOrder { kOldestFirst, kNewestFirst };

struct ListJobsRequest {
  std::optional<JobPhase> phase;                // only jobs in this phase
  JobStateFilter state = JobStateFilter::kAll;  // and only jobs of this class of phases
  std::string queue;                            // only jobs of this queue ("" = any)
  std::string name;                             // only jobs with this metadata.name ("" = any)
  std::string tenant;      // admins only: only this tenant's jobs ("" = all tenants)
  ListOrder order = ListOrder::kOldestFirst;
  int32_t limit = 100;     // page size, 1..1000
  // next_page_token of the previous page of the same listing (same filters and order); "" =
  // the first page.
  std::string page_token;
};

struct ListJobsResult {
  std::vector<JobView> jobs;    // in the request's order
  std::string next_page_token;  // "" on the last page
  // Jobs that match the request after this page (0 on the last page): how many more a client
  // would see by following next_page_token to the end.
  int64_t remaining = 0;
};

// Why a pending job is pending, with the scheduler's per-reason node counts for the task that
// found no node ("0/4 nodes: 3 insufficient gpu, 1 node(s) had untolerated taint").
struct PendingRejection {
  std::string reason;  // "insufficient gpu"
  int64_t nodes = 0;
};
// When a pending job is predicted to start and what holds it back: a dry run of the scheduler
// (the backfill planner over the jobs ahead of it), made when a client asks.
struct StartEstimateView {
  std::optional<TimePoint> start;  // nullopt: unpredictable (it waits on jobs without time limit)
  // "Quota", "Capacity", "Gang", "Reservation", "Position", "Backoff", "NoFit" (no node could
  // hold it even empty), or "" when nothing does.
  std::string blocker;
  std::string message;   // the blocker in words
  int64_t position = 0;  // jobs ahead of it in its queue
};
struct JobExplanation {
  JobPhase phase = JobPhase::kPending;
  std::string reason;   // status.reason
  std::string message;  // status.message
  int64_t total_nodes = 0;
  std::vector<PendingRejection> rejections;  // most nodes first; empty when not pending
  std::optional<TimePoint> estimated_start_time;  // estimate->start
  // Pending jobs: the scheduler's prediction; nullopt when none could be made.
  std::optional<StartEstimateView> estimate;
};

struct LogRequest {
  std::string task;  // "worker-0"; "" = the job's first task
  LogStream stream = LogStream::kStdout;
  int64_t offset = 0;        // bytes from the start of the log
  int64_t limit = 1 << 20;  // at most this many bytes
};
struct WatchRequest {
  std::string job_id;  // "" = every job the caller may see
  // Replay this job's events with sequence > after_sequence first (job_id required);
  // -1 = only new events.
  int64_t after_sequence = -1;
};

// A stream of job events; owned by one reader thread.
class EventStream {
 public:
  virtual ~EventStream() = default;
  // The next event, waiting up to `timeout` (nullopt when none came). Cancelled once the
  // service stops; ResourceExhausted when the reader fell too far behind and events were
  // dropped (the stream is then closed: re-read the job and watch again).
  virtual absl::StatusOr<std::optional<JobEvent>> Next(std::chrono::milliseconds timeout) = 0;
};

struct GpuView {
  int32_t index = 0;
  std::string model;
  int64_t memory = 0;     // bytes
  int64_t milli_used = 0;  // milli-GPU allocated, 0..1000
  bool healthy = true;
};
struct NodeView {
  std::string name;
  std::string cluster;
  std::map<std::string, std::string, std::less<>> labels;
  std::vector<Taint> taints;
  bool ready = true;
  // No new tasks: cordoned by its backend (kubectl cordon, a Slurm drain) or out of service
  // here (state below).
  bool unschedulable = false;
  // The administrative state the control plane keeps (server/node_admin.h), with the reason,
  // the tenant of the admin who set it and when the node entered it (unset: never changed).
  NodeAdminState state = NodeAdminState::kReady;
  std::string state_reason;
  std::string state_by;
  std::optional<TimePoint> state_since;
  Resources capacity;   // cpu millicores, memory bytes, gpu milli-GPU in total
  Resources allocated;  // what placed tasks hold
  std::vector<GpuView> gpus;
  int32_t tasks = 0;  // tasks placed on it
};
// A change of one node's administrative state (ChangeNode): `tessera node cordon|uncordon|drain`.
struct NodeChange {
  std::string cluster;
  std::string node;
  NodeAction action = NodeAction::kCordon;
  std::string reason;  // at most kMaxNodeReasonBytes
  // Drains only: the grace the evicted tasks get instead of each job's
  // terminationGracePeriod; nullopt: each job's own.
  std::optional<Duration> grace;
};
// InvalidArgument naming "reason" (longer than kMaxNodeReasonBytes) or "gracePeriod" (negative,
// or given to a cordon or uncordon) unless `change` is well formed.
inline absl::Status CheckNodeChange(const NodeChange& change) {
  if (change.reason.size() > kMaxNodeReasonBytes) {
    return spec::FieldError("reason", absl::StrCat("must be at most ", kMaxNodeReasonBytes,
                                                   " bytes, not ", change.reason.size()));
  }
  if (change.grace.has_value() && change.action != NodeAction::kDrain) {
    return spec::FieldError("gracePeriod", absl::StrCat("only a drain takes a grace period, not a ",
                                                        std::string(NodeActionName(change.action))));
  }
  if (change.grace.has_value() && change.grace->count() < 0) {
    return spec::FieldError("gracePeriod", "must be >= 0");
  }
  return absl::OkStatus();
}

struct ClusterView {
  std::string name;
  std::string backend;  // "local", "sim", "slurm", "kubernetes"
  bool reachable = true;  // false while its agent is silent (its nodes are NotReady)
  std::map<std::string, std::string, std::less<>> labels;  // tessera.io/cluster: <name>, ...
  int32_t nodes = 0;
  int32_t ready_nodes = 0;
  Resources capacity;
  Resources allocated;
};
// A queue of the tree and what its subtree holds now. Quantities in the Scheduler's units:
// "cpu" millicores, "memory" bytes, "gpu" and "gpu:<MODEL>" milli-GPU.
struct QueueView {
  QueueSpec spec;
  ResourceList usage;      // admitted charge of the subtree
  bool borrowing = false;  // usage above guaranteed for some resource
  double share = 0;        // weighted dominant share (fair share)
  int64_t pending_jobs = 0;   // waiting for admission
  int64_t admitted_jobs = 0;  // quota reserved, not yet placed
  int64_t running_jobs = 0;
};

class JobService {
 public:
  virtual ~JobService() = default;

  // Durably stores a new job (Pending) and returns it with metadata.id and status set; the
  // job is acknowledged only once committed. A document whose metadata.requestId matches an
  // earlier submission of the same tenant returns that job with created == false (its spec is
  // not compared). metadata.name defaults to "job-<id>". A job the state store could not hold
  // in every state it may reach (placed, with its status at its longest) is refused with
  // InvalidArgument naming the field that makes it too large ("spec.tasks[0].command"); a
  // store failure is Internal, or ResourceExhausted / Unavailable when a retry may succeed.
  virtual absl::StatusOr<SubmitResult> Submit(const Caller& caller, spec::JobDocument job) = 0;
  // Submits several jobs at once (Armada's SubmitJobs): each item is checked as Submit checks
  // a job, in order, as if submitted one after the other (a metadata.requestId or
  // metadata.name repeated within the batch behaves as it would across two Submits); the
  // accepted ones are committed together (one store transaction unless the store's limits
  // force more) and each is acknowledged only once committed. The answer has one result per
  // item, in order: the SubmitResult, or the error Submit would have returned for that job
  // (its field "spec.queue"; the API layers put it under the item with spec::ItemError:
  // "items[3].spec.queue"). The call itself fails only as a whole: InvalidArgument
  // (CheckSubmitBatchSize) or Unavailable while the service starts.
  virtual absl::StatusOr<SubmitBatchResult> SubmitBatch(const Caller& caller,
                                                        std::vector<spec::JobDocument> jobs) = 0;
  virtual absl::StatusOr<JobView> Get(const Caller& caller, std::string_view id) = 0;
  // One page of the caller's jobs that pass every filter of `request`, in its order, with the
  // count of those after the page (so a listing walks every job the caller may see).
  // InvalidArgument for a limit outside 1..1000 or a page token this API did not issue.
  virtual absl::StatusOr<ListJobsResult> List(const Caller& caller,
                                              const ListJobsRequest& request) = 0;
  // Asks the job to stop: a Pending job is Cancelled at once; the tasks of an Admitted or
  // Running one get SIGTERM then SIGKILL after spec.terminationGracePeriod, and the job is
  // Cancelled once they are gone. Cancelling a terminal job returns it unchanged.
  virtual absl::StatusOr<JobView> Cancel(const Caller& caller, std::string_view id) = 0;
  virtual absl::StatusOr<std::vector<JobEvent>> Events(const Caller& caller,
                                                       std::string_view id) = 0;
  // Why the job is in its phase. For a pending job: the scheduler's reason with its per-reason
  // node counts, and its start estimate (a dry run of the scheduler, made for this call; it is
  // also kept as the job's status.estimatedStartTime).
  virtual absl::StatusOr<JobExplanation> Explain(const Caller& caller, std::string_view id) = 0;
  virtual absl::StatusOr<LogChunk> Logs(const Caller& caller, std::string_view id,
                                        const LogRequest& request) = 0;
  virtual absl::StatusOr<std::unique_ptr<EventStream>> Watch(const Caller& caller,
                                                             const WatchRequest& request) = 0;

  // Every queue in tree order (parents before children); any caller may read the tree.
  virtual std::vector<QueueView> Queues() = 0;
  // Admins only. Replaces the whole tree (`queues` in tree order) and stores it: it survives
  // restarts. Returns the tree in effect. Errors: PermissionDenied, InvalidArgument (the
  // scheduler's check of the tree, naming the field), FailedPrecondition (a queue with
  // unfinished jobs would vanish or stop being a leaf).
  virtual absl::StatusOr<std::vector<QueueView>> ApplyQueues(const Caller& caller,
                                                             std::vector<QueueSpec> queues) = 0;
  // Admins only. Creates or replaces the queue `queue.name` under `queue.parent` ("" = a root;
  // a queue's children stay its children). Errors as ApplyQueues; InvalidArgument for an
  // unknown parent or one inside the queue itself.
  virtual absl::StatusOr<QueueView> ApplyQueue(const Caller& caller, QueueSpec queue) = 0;
  // Admins only. Removes a leaf queue without unfinished jobs. NotFound for an unknown queue;
  // FailedPrecondition for a queue with children or unfinished jobs, or the last queue.
  virtual absl::Status DeleteQueue(const Caller& caller, std::string_view name) = 0;
  virtual std::vector<NodeView> Nodes() = 0;
  // Admins only. Takes a node out of service or back (server/node_admin.h) and stores its new
  // state (it survives restarts); acknowledged once stored, with the node as it is then. A
  // cordon or drain stops new placements from the next scheduling cycle on; a drain also evicts
  // every job with a task on the node, whole (its gang), through the teardown a preemption uses:
  // its tasks get the drain's grace (else the job's terminationGracePeriod), then the job is
  // requeued as Pending ("Requeued", reason "NodeDrained") without counting a restart or a
  // preemption, and the node becomes Drained once nothing of Tessera's is left on it. A job
  // already being torn down (cancel, preemption) goes on as it was. Errors: PermissionDenied;
  // NotFound naming the cluster or the node (a node of another cluster is not found either);
  // InvalidArgument naming "reason" (too long) or "gracePeriod" (negative, or given to a cordon
  // or uncordon); Unavailable while starting or when the store did not answer in time.
  virtual absl::StatusOr<NodeView> ChangeNode(const Caller& caller, const NodeChange& change) = 0;
  virtual std::vector<ClusterView> Clusters() = 0;
  // Admins only. Deletes a cluster behind an agent whose agent is not connected (a
  // decommissioned cluster): its nodes leave the inventory, the tasks still counted there end
  // Failed "Lost" (their jobs follow their restart policy), and its stored record is removed; an
  // agent that registers the name later starts a new cluster. Errors: PermissionDenied;
  // NotFound for an unknown cluster; FailedPrecondition while its agent is connected, or for a
  // cluster of the server's config file.
  virtual absl::Status DeleteCluster(const Caller& caller, std::string_view name) = 0;

  // Whether the service has rebuilt its state from the store and serves requests (/readyz).
  virtual bool Ready() const = 0;
};

}  // namespace tessera::server

// InMemoryJobService: a JobService that keeps jobs in memory and schedules nothing, for tests of
// the API layers (REST, gRPC) — what they must get right is the mapping, not the scheduling.
//
// Semantics follow server/job_service.h where an API layer can observe them:
//   - ids are "1", "2", ... in submission order; Submit checks nothing beyond what the codec
//     did, sets status.phase Pending, status.submitTime and one Pending TaskStatus per replica
//     ("<group>-<index>"), and records a "Submitted" event;
//   - tenants: another tenant's job is NotFound; admins see every job; a non-admin listing
//     another tenant's jobs is PermissionDenied;
//   - SubmitBatch refuses a batch outside 1..kMaxSubmitBatchItems (CheckSubmitBatchSize) and
//     otherwise submits each item in order as Submit does;
//   - metadata.requestId repeats (per tenant) return the earlier job with created == false;
//     a metadata.name already used by a non-terminal job of the tenant is AlreadyExists;
//   - List filters by phase, queue, name and (admins) tenant; the page token is the last id of
//     the previous page; a limit outside 1..1000 or a malformed token is InvalidArgument;
//   - Cancel moves a non-terminal job to Cancelled with a "Cancelled" event;
//   - Explain, Logs, Nodes, Clusters, Queues and Ready answer what the test set;
//   - DeleteCluster (admins only) removes a cluster the test set (NotFound for another);
//   - ChangeNode (admins only) checks the change (CheckNodeChange), finds the node the test set
//     (NotFound naming "cluster" or "node") and moves it to the state node_admin.h gives, a
//     drained node straight to Drained (nothing runs on it), with the reason, caller and time;
//   - ApplyQueues, ApplyQueue and DeleteQueue (admins only, else PermissionDenied) change the
//     specs of the queues the test set, with the tree rules of queue_document.h (UpsertQueue,
//     RemoveQueue); a change that names a queue with pending jobs (QueueView::pending_jobs > 0)
//     as gone is FailedPrecondition;
//   - Watch streams the events recorded after the call (and replays after_sequence for one
//     job); Next returns Cancelled once Shutdown() was called.
// Time comes from the Clock given to the constructor.
// Thread-safety: every method may be called concurrently; an EventStream by one reader.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/job_service.h"
#include "tessera/common/clock.h"

namespace tessera::server::testing {

class InMemoryJobService final : public JobService {
 public:
  // `clock` outlives the service.
  explicit InMemoryJobService(const Clock* clock);
  ~InMemoryJobService() override;

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
  absl::StatusOr<NodeView> ChangeNode(const Caller& caller, const NodeChange& change) override;
  std::vector<ClusterView> Clusters() override;
  absl::Status DeleteCluster(const Caller& caller, std::string_view name) override;
  bool Ready() const override;

  // Test controls. Each returns NotFound for an unknown job id.
  void SetReady(bool ready);
  void SetQueues(std::vector<QueueView> queues);
  void SetNodes(std::vector<NodeView> nodes);
  void SetClusters(std::vector<ClusterView> clusters);
  // What Explain answers for the job (by default: its phase, reason and message).
  absl::Status SetExplanation(std::string_view id, JobExplanation explanation);
  // The whole log of one task's stream; `ended`: the task has ended (LogChunk::end at its end).
  // Logs of a task without a log are FailedPrecondition (the task never started).
  absl::Status SetLog(std::string_view id, std::string_view task, LogStream stream,
                      std::string text, bool ended);
  // Records an event of type `type`, moves the job to `phase` and wakes the watchers.
  absl::Status AppendEvent(std::string_view id, std::string_view type, JobPhase phase,
                           std::string_view reason = "", std::string_view message = "");
  // Closes every stream: Next returns Cancelled; later Watch calls are Unavailable.
  void Shutdown();

 private:
  struct Job {
    JobView view;
    std::vector<JobEvent> events;
    std::optional<JobExplanation> explanation;
    std::map<std::pair<std::string, LogStream>, std::pair<std::string, bool>> logs;
  };
  class Stream;
  struct Subscription;

  // The job `id` as `caller` may see it, or NotFound. REQUIRES: mu_ held.
  absl::StatusOr<Job*> FindLocked(const Caller& caller, std::string_view id);
  // Replaces the queues' specs by `tree`, keeping the state of queues that remain.
  // REQUIRES: mu_ held.
  absl::Status SetTreeLocked(const std::vector<QueueSpec>& tree);
  // Appends an event to `job` and hands it to the matching subscriptions. REQUIRES: mu_ held.
  void RecordLocked(Job& job, std::string_view type, std::string_view reason,
                    std::string_view message);

  const Clock* const clock_;
  mutable std::mutex mu_;
  int64_t next_id_ = 1;
  std::map<int64_t, Job> jobs_;  // by numeric id
  std::vector<std::weak_ptr<Subscription>> subscriptions_;
  std::vector<QueueView> queues_;
  std::vector<NodeView> nodes_;
  std::vector<ClusterView> clusters_;
  bool ready_ = true;
  bool shut_down_ = false;
};

}  // namespace tessera::server::testing

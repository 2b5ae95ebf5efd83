// Helpers the job manager's source files share (job_manager*.cc); not a public interface.
// Thread-safe: pure functions (StoreFailure also writes to stderr).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/job.h"
#include "server/job_manager.h"
#include "server/job_record.h"

namespace tessera::server {

// Where the queue tree in effect is stored.
inline constexpr std::string_view kQueuesKey = "/tessera/queues";
// How long a queue or cluster change waits for the loop and the store.
inline constexpr std::chrono::seconds kQueueWait{10};

// The key of the per-tenant indices (request ids, names): tenant + '\0' + name.
std::string IndexKey(std::string_view tenant, std::string_view name);

// The Scheduler and the core's Validate name the field at fault first ("queues[2].weight: must
// be >= 1"): `status` with that field attached (spec::ErrorField), so the API reports it.
absl::Status WithLeadingField(absl::Status status);

// A store error as the API reports it. Back-pressure and unavailability keep their codes (the
// client may retry); anything else is Internal: the store's own message, which names fields of
// its transaction, is for the operator's log (written to stderr), not for the client.
absl::Status StoreFailure(std::string_view what, const absl::Status& status);

// Forwards the Scheduler's decisions to the manager (loop thread).
class JobManager::Sink final : public SchedulerSink {
 public:
  explicit Sink(JobManager* manager) : manager_(manager) {}
  void OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) override {
    manager_->OnPlaced(job, gang, tasks);
  }
  void OnRefused(std::string_view job, const PendingReason& reason) override {
    manager_->OnRefused(job, reason);
  }
  void OnPending(std::string_view job, const PendingReason& reason) override {
    manager_->OnPending(job, reason);
  }
  void OnAdmitted(std::string_view job) override { manager_->OnAdmitted(job); }
  void OnAdmissionRevoked(std::string_view job, const PendingReason& reason,
                          bool preempted) override {
    manager_->OnAdmissionRevoked(job, reason, preempted);
  }
  void OnPreempted(std::string_view job, const PendingReason& reason, bool requeue) override {
    manager_->OnPreempted(job, reason, requeue);
  }

 private:
  JobManager* const manager_;
};

// The spec as the scheduler sees it: clusters are matched through their labels, which every
// node of a cluster carries, so a clusterSelector is one more node selector.
JobSpec SchedulingSpec(const JobSpec& spec);
// Task requests in task order, as the scheduler indexes them.
std::vector<TaskRequest> TaskRequests(const JobSpec& spec);
// The group of the task at `index` in task order; nullptr past the last task.
const TaskGroup* GroupOf(const JobSpec& spec, int32_t index);
// TaskRequests(spec)[index] without building the others' (a job's tasks end one at a time);
// an empty request past the last task.
TaskRequest TaskRequestOf(const JobSpec& spec, int32_t index);
// Every task's node in task order when the job has more than one task (a launch's peer_nodes);
// none for a single task.
PeerNodes PeersOf(const JobRecord& record);
// The launch id of one task's attempt: "<job>-<task>-a<attempt>".
std::string LaunchId(int64_t job, std::string_view task, int32_t attempt);
// The task was launched and has not ended.
bool IsActive(const TaskRuntime& task);
// The job is being torn down: a cancel or a preemption; its tasks must not start.
bool Stopping(const JobRecord& record);
// "<task>: <message>", else "<task>: <phase>": how a task ended, for events.
std::string DescribeEnd(const TaskRuntime& task);
// "<task> → <node>" with its GPUs when it has some, for events.
std::string DescribePlacement(const TaskRuntime& task);

}  // namespace tessera::server

// JobManager: the JobService calls other than submission (job_manager.h): reads, listing,
// cancel, events, explain, logs, watch, queue edits.
#include "server/job_manager.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "fmt/format.h"
#include "server/job_manager_internal.h"
#include "server/job_listing.h"
#include "spec/queue_document.h"
#include "spec/request_error.h"

namespace tessera::server {
namespace {

constexpr std::chrono::seconds kCancelWait{10};
// How long an explain waits for its estimate.
constexpr std::chrono::seconds kEstimateWait{5};

}  // namespace

// ---------------------------------------------------------------------------------------------
// API side

JobRecord* JobManager::FindVisibleLocked(const Caller& caller, std::string_view id) {
  const std::optional<int64_t> number = ParseJobId(id);
  if (!number.has_value() || uncommitted_.contains(*number)) return nullptr;
  auto it = jobs_.find(*number);
  if (it == jobs_.end()) return nullptr;
  if (!caller.admin && it->second.tenant != caller.tenant) return nullptr;
  return &it->second;
}

std::shared_ptr<const JobSnapshot> JobManager::Published() const {
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  return snapshot_;
}

std::shared_ptr<const PublishedJob> JobManager::FindPublished(const Caller& caller,
                                                              std::string_view id) const {
  const std::optional<int64_t> number = ParseJobId(id);
  if (!number.has_value()) return nullptr;
  std::shared_ptr<const PublishedJob> job = Published()->Find(*number);
  if (job == nullptr || (!caller.admin && job->tenant != caller.tenant)) return nullptr;
  return job;
}

void JobManager::PublishLocked() {
  if (unpublished_.empty()) return;
  std::sort(unpublished_.begin(), unpublished_.end());
  unpublished_.erase(std::unique(unpublished_.begin(), unpublished_.end()), unpublished_.end());
  const std::shared_ptr<const JobSnapshot> current = Published();
  std::vector<JobSnapshot::Change> changes;
  changes.reserve(unpublished_.size());
  for (int64_t id : unpublished_) {
    if (uncommitted_.contains(id)) continue;  // published once its submission is acknowledged
    auto it = jobs_.find(id);
    if (it == jobs_.end()) {
      changes.push_back({.id = id, .job = nullptr});
      continue;
    }
    const JobRecord& record = it->second;
    // A spec does not change after submission: a job's versions share the first one's.
    const std::shared_ptr<const PublishedJob>& previous = current->Find(id);
    changes.push_back(
        {.id = id,
         .job = std::make_shared<const PublishedJob>(PublishedJob{
             .tenant = record.tenant,
             .metadata = record.document.metadata,
             .spec = previous != nullptr
                         ? previous->spec
                         : std::make_shared<const JobSpec>(record.document.spec),
             .status = record.status()})});
  }
  unpublished_.clear();
  std::shared_ptr<const JobSnapshot> next = current->With(changes);
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  snapshot_ = std::move(next);
}

absl::StatusOr<JobView> JobManager::GetView(const Caller& caller, std::string_view id) {
  std::shared_ptr<const PublishedJob> job = FindPublished(caller, id);
  if (job == nullptr) return absl::NotFoundError(fmt::format("job {} not found", id));
  return job->View();
}

absl::Status JobManager::CheckQueueLocked(std::string_view queue) const {
  auto leaf = queue_leaves_.find(queue);
  if (leaf == queue_leaves_.end()) {
    return spec::FieldError("spec.queue", fmt::format("unknown queue \"{}\"", queue));
  }
  if (!leaf->second) {
    return spec::FieldError("spec.queue", fmt::format("\"{}\" is not a leaf queue", queue));
  }
  return absl::OkStatus();
}

absl::StatusOr<JobView> JobManager::Get(const Caller& caller, std::string_view id) {
  return GetView(caller, id);
}

absl::StatusOr<ListJobsResult> JobManager::List(const Caller& caller,
                                                const ListJobsRequest& request) {
  absl::StatusOr<int64_t> after = ListStart(caller, request);
  if (!after.ok()) return after.status();
  ListPage page(request.limit);
  Published()->ForEachInListOrder(*after, request.order, [&](const PublishedJob& job) {
    if (!ListsJob(caller, request, job.tenant, *job.spec, job.status.phase)) return;
    page.Offer([&] { return job.View(); });
  });
  return std::move(page).Take();
}

absl::StatusOr<JobView> JobManager::Cancel(const Caller& caller, std::string_view id) {
  int64_t number = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const JobRecord* record = FindVisibleLocked(caller, id);
    if (record == nullptr) return absl::NotFoundError(fmt::format("job {} not found", id));
    if (IsTerminal(record->status().phase) || record->cancel_requested) return record->View();
    number = record->id;
  }
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> recorded = done->get_future();
  Post(CancelRequested{number, [done] { done->set_value(); }});
  if (recorded.wait_for(kCancelWait) != std::future_status::ready) {
    return absl::UnavailableError(fmt::format("job {}: the cancel was not recorded in time", id));
  }
  return GetView(caller, id);
}

absl::StatusOr<std::vector<JobEvent>> JobManager::Events(const Caller& caller,
                                                         std::string_view id) {
  if (FindPublished(caller, id) == nullptr) {
    return absl::NotFoundError(fmt::format("job {} not found", id));
  }
  return ReadJobEvents(*options_.store, *ParseJobId(id));
}

absl::StatusOr<JobExplanation> JobManager::Explain(const Caller& caller, std::string_view id) {
  JobExplanation explanation;
  int64_t number = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const JobRecord* record = FindVisibleLocked(caller, id);
    if (record == nullptr) return absl::NotFoundError(fmt::format("job {} not found", id));
    const JobPhase phase = record->status().phase;
    auto it = explanations_.find(record->id);
    if (it != explanations_.end() && (phase == JobPhase::kPending || phase == JobPhase::kAdmitted)) {
      explanation = it->second;
    } else {
      explanation = JobExplanation{.phase = phase,
                                   .reason = record->status().reason,
                                   .message = record->status().message};
    }
    if (phase != JobPhase::kPending) return explanation;
    number = record->id;
  }
  if (std::optional<StartEstimate> estimate = EstimateStart(number)) {
    explanation.estimated_start_time = estimate->start;
    explanation.estimate = StartEstimateView{.start = estimate->start,
                                             .blocker = estimate->blocker,
                                             .message = estimate->message,
                                             .position = estimate->position};
  }
  return explanation;
}

std::optional<StartEstimate> JobManager::EstimateStart(int64_t id) {
  if (!CheckLoopBacklog(1).ok()) return std::nullopt;  // explained without an estimate
  auto answer = std::make_shared<std::promise<absl::StatusOr<StartEstimate>>>();
  std::future<absl::StatusOr<StartEstimate>> estimate = answer->get_future();
  Post(EstimateRequested{id, [answer](absl::StatusOr<StartEstimate> result) {
                           answer->set_value(std::move(result));
                         }});
  if (estimate.wait_for(kEstimateWait) != std::future_status::ready) return std::nullopt;
  absl::StatusOr<StartEstimate> result = estimate.get();
  if (!result.ok()) return std::nullopt;
  return *std::move(result);
}

absl::StatusOr<LogChunk> JobManager::Logs(const Caller& caller, std::string_view id,
                                          const LogRequest& request) {
  if (request.offset < 0 || request.limit <= 0) {
    return spec::FieldError(request.offset < 0 ? "offset" : "limit",
                            request.offset < 0 ? "must be >= 0" : "must be > 0");
  }
  std::string launch_id;
  Cluster* cluster = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const JobRecord* record = FindVisibleLocked(caller, id);
    if (record == nullptr) return absl::NotFoundError(fmt::format("job {} not found", id));
    const TaskRuntime* task = nullptr;
    for (const TaskRuntime& t : record->tasks) {
      if (request.task.empty() || t.name == request.task) {
        task = &t;
        break;
      }
    }
    if (task == nullptr) {
      return absl::NotFoundError(fmt::format("job {} has no task {}", id, request.task));
    }
    if (task->launch_id.empty() || !task->launched) {
      return absl::FailedPreconditionError(
          fmt::format("task {} of job {} has not started", task->name, id));
    }
    launch_id = task->launch_id;
    cluster = ClusterOf(task->placement.node);
  }
  if (cluster == nullptr) return absl::NotFoundError("the task's node is gone");
  return cluster->ReadLog(launch_id, request.stream, request.offset, request.limit);
}

absl::StatusOr<std::unique_ptr<EventStream>> JobManager::Watch(const Caller& caller,
                                                               const WatchRequest& request) {
  if (request.after_sequence >= 0 && request.job_id.empty()) {
    return spec::FieldError("afterSequence", "needs a job");
  }
  if (!request.job_id.empty() && FindPublished(caller, request.job_id) == nullptr) {
    return absl::NotFoundError(fmt::format("job {} not found", request.job_id));
  }
  std::unique_ptr<EventStream> live = hub_.Subscribe(caller, request.job_id);
  if (request.after_sequence < 0) return live;
  absl::StatusOr<std::vector<JobEvent>> history = Events(caller, request.job_id);
  if (!history.ok()) return history.status();
  // History first, then live events not already in it.
  class Replay final : public EventStream {
   public:
    Replay(std::vector<JobEvent> history, std::unique_ptr<EventStream> live)
        : history_(std::move(history)), live_(std::move(live)) {}
    absl::StatusOr<std::optional<JobEvent>> Next(std::chrono::milliseconds timeout) override {
      if (next_ < history_.size()) {
        last_ = history_[next_].sequence;
        return std::optional<JobEvent>(history_[next_++]);
      }
      while (true) {
        absl::StatusOr<std::optional<JobEvent>> event = live_->Next(timeout);
        if (!event.ok() || !event->has_value() || (*event)->sequence > last_) return event;
      }
    }

   private:
    std::vector<JobEvent> history_;
    size_t next_ = 0;
    int64_t last_ = -1;
    std::unique_ptr<EventStream> live_;
  };
  std::vector<JobEvent> replay;
  for (JobEvent& event : *history) {
    if (event.sequence > request.after_sequence) replay.push_back(std::move(event));
  }
  return std::make_unique<Replay>(std::move(replay), std::move(live));
}

std::vector<QueueView> JobManager::Queues() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string_view, const QueueStatus*> statuses;
  for (const QueueStatus& status : queue_statuses_) statuses[status.spec.name] = &status;
  std::vector<QueueView> out;
  out.reserve(queues_.size());
  for (const QueueSpec& spec : queues_) {
    QueueView& view = out.emplace_back(QueueView{.spec = spec});
    auto it = statuses.find(spec.name);
    if (it == statuses.end()) continue;  // changed after the last snapshot
    view.usage = it->second->usage;
    view.borrowing = it->second->borrowing;
    view.share = it->second->share;
    view.pending_jobs = it->second->pending;
    view.admitted_jobs = it->second->admitted;
    view.running_jobs = it->second->running;
  }
  return out;
}

absl::StatusOr<std::vector<QueueView>> JobManager::ApplyQueues(const Caller& caller,
                                                               std::vector<QueueSpec> queues) {
  if (absl::Status s = EditQueues(caller, [queues = std::move(queues)](
                                              const std::vector<QueueSpec>&) { return queues; });
      !s.ok()) {
    return s;
  }
  return Queues();
}

absl::StatusOr<QueueView> JobManager::ApplyQueue(const Caller& caller, QueueSpec queue) {
  const std::string name = queue.name;
  if (absl::Status s = EditQueues(caller,
                                  [queue = std::move(queue)](const std::vector<QueueSpec>& tree) {
                                    return spec::UpsertQueue(tree, queue);
                                  });
      !s.ok()) {
    return s;
  }
  for (QueueView& view : Queues()) {
    if (view.spec.name == name) return std::move(view);
  }
  return absl::NotFoundError(fmt::format("queue \"{}\" was changed again meanwhile", name));
}

absl::Status JobManager::DeleteQueue(const Caller& caller, std::string_view name) {
  return EditQueues(caller, [name = std::string(name)](const std::vector<QueueSpec>& tree) {
    return spec::RemoveQueue(tree, name);
  });
}

absl::Status JobManager::EditQueues(const Caller& caller, QueueEdit edit) {
  if (!caller.admin) return absl::PermissionDeniedError("only admins may change queues");
  if (!Ready()) return absl::UnavailableError("the control plane is starting");
  auto answer = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> stored = answer->get_future();
  Post(QueuesChanged{std::move(edit), [answer](absl::Status s) { answer->set_value(s); }});
  if (stored.wait_for(kQueueWait) != std::future_status::ready) {
    return absl::UnavailableError("the queue change was not stored in time; read the queues");
  }
  return stored.get();
}

std::vector<NodeView> JobManager::Nodes() {
  std::vector<NodeView> out;
  std::unique_lock<std::mutex> lock(state_mu_);
  for (const Node& node : state_.nodes()) {
    if (node.removed) continue;
    NodeView view{.name = node.name,
                  .cluster = node.cluster,
                  .taints = node.taints,
                  .ready = node.condition == NodeCondition::kReady,
                  .unschedulable = node.unschedulable,
                  .capacity = node.allocatable,
                  .allocated = node.allocated};
    if (auto admin = node_admin_.find(NodeAdminKey(node.cluster, node.name));
        admin != node_admin_.end()) {
      const NodeAdmin& record = admin->second.record;
      view.state = record.state;
      view.state_reason = record.reason;
      view.state_by = record.by;
      view.state_since = record.since;
    }
    for (const auto& [key, value] : node.labels) view.labels[key] = value;
    for (const GpuDevice& gpu : node.gpus) {
      view.gpus.push_back({.index = gpu.index,
                           .model = gpu.model,
                           .memory = gpu.memory,
                           .milli_used = gpu.used_milli,
                           .healthy = gpu.healthy});
    }
    out.push_back(std::move(view));
  }
  lock.unlock();  // an API thread never holds both locks (see the header)
  std::lock_guard<std::mutex> jobs_lock(mu_);
  std::map<std::string, int32_t, std::less<>> tasks_per_node;
  for (const auto& [id, record] : jobs_) {
    for (const TaskRuntime& task : record.tasks) {
      if (IsActive(task)) ++tasks_per_node[task.placement.node];
    }
  }
  for (NodeView& view : out) {
    if (auto it = tasks_per_node.find(view.name); it != tasks_per_node.end()) view.tasks = it->second;
  }
  return out;
}

std::vector<ClusterView> JobManager::Clusters() {
  std::vector<Cluster*> clusters;
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    clusters = clusters_;
  }
  std::map<std::string, ClusterView> views;
  for (Cluster* cluster : clusters) {
    ClusterView& view = views[cluster->name()];
    view.name = cluster->name();
    view.backend = std::string(cluster->backend());
    view.reachable = cluster->reachable();
    for (const auto& [key, value] : cluster->labels()) view.labels[key] = value;
  }
  std::lock_guard<std::mutex> lock(state_mu_);
  for (const Node& node : state_.nodes()) {
    auto it = views.find(node.cluster);
    if (node.removed || it == views.end()) continue;
    ClusterView& view = it->second;
    ++view.nodes;
    if (node.condition == NodeCondition::kReady) ++view.ready_nodes;
    view.capacity += node.allocatable;
    view.allocated += node.allocated;
  }
  std::vector<ClusterView> out;
  for (auto& [name, view] : views) out.push_back(std::move(view));
  return out;
}

}  // namespace tessera::server

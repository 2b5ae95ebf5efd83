#include "server/testing/in_memory_job_service.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "server/job_listing.h"
#include "spec/queue_document.h"
#include "spec/request_error.h"

namespace tessera::server::testing {

// One Watch call's queue of events; shared between the service (which fills it) and the
// stream (which drains it), so either may go first.
struct InMemoryJobService::Subscription {
  Caller caller;
  std::string job_id;  // "" = every visible job
  std::mutex mu;
  std::condition_variable cv;
  std::deque<JobEvent> queue;
  bool closed = false;
};

class InMemoryJobService::Stream final : public EventStream {
 public:
  explicit Stream(std::shared_ptr<Subscription> sub) : sub_(std::move(sub)) {}

  absl::StatusOr<std::optional<JobEvent>> Next(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(sub_->mu);
    sub_->cv.wait_for(lock, timeout, [&] { return sub_->closed || !sub_->queue.empty(); });
    if (!sub_->queue.empty()) {
      JobEvent event = std::move(sub_->queue.front());
      sub_->queue.pop_front();
      return event;
    }
    if (sub_->closed) return absl::CancelledError("the job service stopped");
    return std::nullopt;
  }

 private:
  std::shared_ptr<Subscription> sub_;
};

namespace {

bool Visible(const Caller& caller, const JobView& job) {
  return caller.admin || caller.tenant == job.tenant;
}

absl::Status NotFound(std::string_view id) {
  return absl::NotFoundError(fmt::format("job {} not found", id));
}

// A job id or page token: a non-negative decimal number, nothing else.
bool ParseNumber(std::string_view text, int64_t* number) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *number);
  return !text.empty() && ec == std::errc() && ptr == end && *number >= 0;
}

}  // namespace

InMemoryJobService::InMemoryJobService(const Clock* clock) : clock_(clock) {}

InMemoryJobService::~InMemoryJobService() { Shutdown(); }

absl::StatusOr<InMemoryJobService::Job*> InMemoryJobService::FindLocked(const Caller& caller,
                                                                        std::string_view id) {
  int64_t number = 0;
  if (!ParseNumber(id, &number)) return NotFound(id);
  auto it = jobs_.find(number);
  if (it == jobs_.end() || !Visible(caller, it->second.view)) return NotFound(id);
  return &it->second;
}

void InMemoryJobService::RecordLocked(Job& job, std::string_view type, std::string_view reason,
                                      std::string_view message) {
  JobEvent event{.job_id = job.view.document.metadata.id,
                 .sequence = static_cast<int64_t>(job.events.size()) + 1,
                 .time = clock_->Now(),
                 .type = std::string(type),
                 .phase = job.view.document.status->phase,
                 .reason = std::string(reason),
                 .message = std::string(message)};
  job.events.push_back(event);
  std::erase_if(subscriptions_, [](const auto& weak) { return weak.expired(); });
  for (const auto& weak : subscriptions_) {
    std::shared_ptr<Subscription> sub = weak.lock();
    if (sub == nullptr || !Visible(sub->caller, job.view)) continue;
    if (!sub->job_id.empty() && sub->job_id != event.job_id) continue;
    std::lock_guard lock(sub->mu);
    sub->queue.push_back(event);
    sub->cv.notify_all();
  }
}

absl::StatusOr<SubmitResult> InMemoryJobService::Submit(const Caller& caller,
                                                        spec::JobDocument job) {
  std::lock_guard lock(mu_);
  if (shut_down_) return absl::UnavailableError("the job service is stopping");
  for (const auto& [number, existing] : jobs_) {
    const spec::JobDocument& doc = existing.view.document;
    if (existing.view.tenant != caller.tenant) continue;
    if (!job.metadata.request_id.empty() && doc.metadata.request_id == job.metadata.request_id) {
      return SubmitResult{.job = existing.view, .created = false};
    }
    if (!job.spec.name.empty() && doc.spec.name == job.spec.name &&
        !IsTerminal(doc.status->phase)) {
      return absl::AlreadyExistsError(fmt::format("job {} of tenant {} is already named {}",
                                                  doc.metadata.id, caller.tenant, job.spec.name));
    }
  }
  const int64_t number = next_id_++;
  job.metadata.id = std::to_string(number);
  if (job.spec.name.empty()) job.spec.name = fmt::format("job-{}", number);
  spec::JobStatus status{.phase = JobPhase::kPending, .submit_time = clock_->Now()};
  for (const TaskGroup& group : job.spec.tasks) {
    for (int32_t i = 0; i < group.replicas; ++i) {
      status.tasks.push_back({.name = fmt::format("{}-{}", group.name, i)});
    }
  }
  job.status = std::move(status);
  Job& stored = jobs_[number];
  stored.view = JobView{.document = std::move(job), .tenant = caller.tenant};
  RecordLocked(stored, "Submitted", "", "");
  return SubmitResult{.job = stored.view, .created = true};
}

absl::StatusOr<SubmitBatchResult> InMemoryJobService::SubmitBatch(
    const Caller& caller, std::vector<spec::JobDocument> jobs) {
  if (absl::Status s = CheckSubmitBatchSize(jobs.size()); !s.ok()) return s;
  SubmitBatchResult results;
  for (spec::JobDocument& job : jobs) results.push_back(Submit(caller, std::move(job)));
  return results;
}

absl::StatusOr<JobView> InMemoryJobService::Get(const Caller& caller, std::string_view id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> job = FindLocked(caller, id);
  if (!job.ok()) return job.status();
  return (*job)->view;
}

absl::StatusOr<ListJobsResult> InMemoryJobService::List(const Caller& caller,
                                                        const ListJobsRequest& request) {
  if (request.limit < 1 || request.limit > 1000) {
    return absl::InvalidArgumentError("limit: must be in 1..1000");
  }
  int64_t after = 0;
  if (!request.page_token.empty() && !ParseNumber(request.page_token, &after)) {
    return absl::InvalidArgumentError("pageToken: malformed page token");
  }
  if (!caller.admin && !request.tenant.empty() && request.tenant != caller.tenant) {
    return spec::WithField(
        absl::PermissionDeniedError("tenant: only admins may list other tenants' jobs"), "tenant");
  }
  std::lock_guard lock(mu_);
  ListPage page(request.limit);
  ForEachInListOrder(jobs_, after, request.order, [&](const Job& job) {
    const JobView& view = job.view;
    const spec::JobDocument& doc = view.document;
    if (!Visible(caller, view)) return;
    if (!request.tenant.empty() && view.tenant != request.tenant) return;
    if (!ListsPhase(request, doc.status->phase)) return;
    if (!request.queue.empty() && doc.spec.queue != request.queue) return;
    if (!request.name.empty() && doc.spec.name != request.name) return;
    page.Offer([&] { return view; });
  });
  return std::move(page).Take();
}

absl::StatusOr<JobView> InMemoryJobService::Cancel(const Caller& caller, std::string_view id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> found = FindLocked(caller, id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  spec::JobStatus& status = *job.view.document.status;
  if (IsTerminal(status.phase)) return job.view;
  status.phase = JobPhase::kCancelled;
  status.end_time = clock_->Now();
  for (spec::TaskStatus& task : status.tasks) {
    if (task.phase == TaskPhase::kPending || task.phase == TaskPhase::kRunning) {
      task.phase = TaskPhase::kCancelled;
    }
  }
  RecordLocked(job, "Cancelled", "CancelledByUser", "cancelled by " + caller.tenant);
  return job.view;
}

absl::StatusOr<std::vector<JobEvent>> InMemoryJobService::Events(const Caller& caller,
                                                                 std::string_view id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> job = FindLocked(caller, id);
  if (!job.ok()) return job.status();
  return (*job)->events;
}

absl::StatusOr<JobExplanation> InMemoryJobService::Explain(const Caller& caller,
                                                           std::string_view id) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> job = FindLocked(caller, id);
  if (!job.ok()) return job.status();
  if ((*job)->explanation.has_value()) return *(*job)->explanation;
  const spec::JobStatus& status = *(*job)->view.document.status;
  return JobExplanation{.phase = status.phase, .reason = status.reason, .message = status.message};
}

absl::StatusOr<LogChunk> InMemoryJobService::Logs(const Caller& caller, std::string_view id,
                                                  const LogRequest& request) {
  if (request.offset < 0) return absl::InvalidArgumentError("offset: must be >= 0");
  if (request.limit < 1) return absl::InvalidArgumentError("limit: must be >= 1");
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> found = FindLocked(caller, id);
  if (!found.ok()) return found.status();
  const Job& job = **found;
  const std::vector<spec::TaskStatus>& tasks = job.view.document.status->tasks;
  std::string task = request.task;
  if (task.empty() && !tasks.empty()) task = tasks.front().name;
  if (std::none_of(tasks.begin(), tasks.end(), [&](const auto& t) { return t.name == task; })) {
    return absl::NotFoundError(fmt::format("job {} has no task {}", id, task));
  }
  auto log = job.logs.find({task, request.stream});
  if (log == job.logs.end()) {
    return absl::FailedPreconditionError(fmt::format("task {} has not started", task));
  }
  const auto& [text, ended] = log->second;
  const int64_t size = static_cast<int64_t>(text.size());
  const int64_t begin = std::min(request.offset, size);
  const int64_t count = std::min(request.limit, size - begin);
  return LogChunk{.data = text.substr(begin, count),
                  .next_offset = begin + count,
                  .end = ended && begin + count == size};
}

absl::StatusOr<std::unique_ptr<EventStream>> InMemoryJobService::Watch(
    const Caller& caller, const WatchRequest& request) {
  if (request.after_sequence < -1) {
    return absl::InvalidArgumentError("afterSequence: must be >= -1");
  }
  if (request.after_sequence >= 0 && request.job_id.empty()) {
    return absl::InvalidArgumentError("afterSequence: needs a job");
  }
  std::lock_guard lock(mu_);
  if (shut_down_) return absl::UnavailableError("the job service is stopping");
  auto sub = std::make_shared<Subscription>();
  sub->caller = caller;
  sub->job_id = request.job_id;
  if (!request.job_id.empty()) {
    absl::StatusOr<Job*> job = FindLocked(caller, request.job_id);
    if (!job.ok()) return job.status();
    for (const JobEvent& event : (*job)->events) {
      if (request.after_sequence >= 0 && event.sequence > request.after_sequence) {
        sub->queue.push_back(event);
      }
    }
  }
  subscriptions_.push_back(sub);
  return std::make_unique<Stream>(std::move(sub));
}

std::vector<QueueView> InMemoryJobService::Queues() {
  std::lock_guard lock(mu_);
  return queues_;
}

absl::Status InMemoryJobService::SetTreeLocked(const std::vector<QueueSpec>& tree) {
  std::map<std::string, QueueView, std::less<>> old;
  for (QueueView& view : queues_) old[view.spec.name] = std::move(view);
  for (const auto& [name, view] : old) {
    if (view.pending_jobs > 0 && !spec::IsLeafQueue(tree, name).value_or(false)) {
      std::vector<QueueView> back;
      for (auto& [n, v] : old) back.push_back(std::move(v));
      queues_ = std::move(back);
      return absl::FailedPreconditionError(
          fmt::format("queue \"{}\" has {} unfinished job(s)", name, view.pending_jobs));
    }
  }
  std::vector<QueueView> views;
  for (const QueueSpec& spec : tree) {
    QueueView view;
    if (auto it = old.find(spec.name); it != old.end()) view = it->second;
    view.spec = spec;
    views.push_back(std::move(view));
  }
  queues_ = std::move(views);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<QueueView>> InMemoryJobService::ApplyQueues(
    const Caller& caller, std::vector<QueueSpec> queues) {
  if (!caller.admin) return absl::PermissionDeniedError("only admins may change queues");
  std::lock_guard lock(mu_);
  if (absl::Status s = SetTreeLocked(queues); !s.ok()) return s;
  return queues_;
}

absl::StatusOr<QueueView> InMemoryJobService::ApplyQueue(const Caller& caller, QueueSpec queue) {
  if (!caller.admin) return absl::PermissionDeniedError("only admins may change queues");
  std::lock_guard lock(mu_);
  std::vector<QueueSpec> tree;
  for (const QueueView& view : queues_) tree.push_back(view.spec);
  const std::string name = queue.name;
  absl::StatusOr<std::vector<QueueSpec>> changed =
      spec::UpsertQueue(std::move(tree), std::move(queue));
  if (!changed.ok()) return changed.status();
  if (absl::Status s = SetTreeLocked(*changed); !s.ok()) return s;
  for (const QueueView& view : queues_) {
    if (view.spec.name == name) return view;
  }
  return absl::InternalError("the queue vanished");
}

absl::Status InMemoryJobService::DeleteQueue(const Caller& caller, std::string_view name) {
  if (!caller.admin) return absl::PermissionDeniedError("only admins may change queues");
  std::lock_guard lock(mu_);
  std::vector<QueueSpec> tree;
  for (const QueueView& view : queues_) tree.push_back(view.spec);
  absl::StatusOr<std::vector<QueueSpec>> changed = spec::RemoveQueue(std::move(tree), name);
  if (!changed.ok()) return changed.status();
  return SetTreeLocked(*changed);
}

std::vector<NodeView> InMemoryJobService::Nodes() {
  std::lock_guard lock(mu_);
  return nodes_;
}

absl::StatusOr<NodeView> InMemoryJobService::ChangeNode(const Caller& caller,
                                                        const NodeChange& change) {
  if (!caller.admin) {
    return absl::PermissionDeniedError("only admins may cordon, uncordon or drain nodes");
  }
  if (absl::Status s = CheckNodeChange(change); !s.ok()) return s;
  std::lock_guard lock(mu_);
  const bool cluster_known = std::any_of(nodes_.begin(), nodes_.end(), [&](const NodeView& n) {
    return n.cluster == change.cluster;
  });
  if (!cluster_known) {
    return spec::WithField(
        absl::NotFoundError(fmt::format("cluster: no cluster named \"{}\"", change.cluster)),
        "cluster");
  }
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](const NodeView& n) {
    return n.cluster == change.cluster && n.name == change.node;
  });
  if (it == nodes_.end()) {
    return spec::WithField(absl::NotFoundError(fmt::format(
                               "node: cluster {} has no node named \"{}\"", change.cluster,
                               change.node)),
                           "node");
  }
  NodeAdminState next = NextAdminState(it->state, change.action);
  if (next == NodeAdminState::kDraining) next = NodeAdminState::kDrained;
  if (next != it->state || !change.reason.empty()) it->state_reason = change.reason;
  if (next != it->state) it->state_since = clock_->Now();
  it->state = next;
  it->state_by = caller.tenant;
  it->unschedulable = OutOfService(next);
  return *it;
}

std::vector<ClusterView> InMemoryJobService::Clusters() {
  std::lock_guard lock(mu_);
  return clusters_;
}

absl::Status InMemoryJobService::DeleteCluster(const Caller& caller, std::string_view name) {
  if (!caller.admin) return absl::PermissionDeniedError("only admins may delete clusters");
  std::lock_guard lock(mu_);
  auto it = std::find_if(clusters_.begin(), clusters_.end(),
                         [&](const ClusterView& cluster) { return cluster.name == name; });
  if (it == clusters_.end()) {
    return absl::NotFoundError(fmt::format("no cluster named {}", name));
  }
  clusters_.erase(it);
  return absl::OkStatus();
}

bool InMemoryJobService::Ready() const {
  std::lock_guard lock(mu_);
  return ready_;
}

void InMemoryJobService::SetReady(bool ready) {
  std::lock_guard lock(mu_);
  ready_ = ready;
}

void InMemoryJobService::SetQueues(std::vector<QueueView> queues) {
  std::lock_guard lock(mu_);
  queues_ = std::move(queues);
}

void InMemoryJobService::SetNodes(std::vector<NodeView> nodes) {
  std::lock_guard lock(mu_);
  nodes_ = std::move(nodes);
}

void InMemoryJobService::SetClusters(std::vector<ClusterView> clusters) {
  std::lock_guard lock(mu_);
  clusters_ = std::move(clusters);
}

absl::Status InMemoryJobService::SetExplanation(std::string_view id, JobExplanation explanation) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> job = FindLocked(Caller{.admin = true}, id);
  if (!job.ok()) return job.status();
  (*job)->explanation = std::move(explanation);
  return absl::OkStatus();
}

absl::Status InMemoryJobService::SetLog(std::string_view id, std::string_view task,
                                        LogStream stream, std::string text, bool ended) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> job = FindLocked(Caller{.admin = true}, id);
  if (!job.ok()) return job.status();
  (*job)->logs[{std::string(task), stream}] = {std::move(text), ended};
  return absl::OkStatus();
}

absl::Status InMemoryJobService::AppendEvent(std::string_view id, std::string_view type,
                                             JobPhase phase, std::string_view reason,
                                             std::string_view message) {
  std::lock_guard lock(mu_);
  absl::StatusOr<Job*> job = FindLocked(Caller{.admin = true}, id);
  if (!job.ok()) return job.status();
  (*job)->view.document.status->phase = phase;
  RecordLocked(**job, type, reason, message);
  return absl::OkStatus();
}

void InMemoryJobService::Shutdown() {
  std::lock_guard lock(mu_);
  shut_down_ = true;
  for (const auto& weak : subscriptions_) {
    if (std::shared_ptr<Subscription> sub = weak.lock()) {
      std::lock_guard sub_lock(sub->mu);
      sub->closed = true;
      sub->cv.notify_all();
    }
  }
  subscriptions_.clear();
}

}  // namespace tessera::server::testing

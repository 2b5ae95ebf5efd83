#include "server/job_manager.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "core/duration.h"
#include "fmt/format.h"
#include "sched/plugins/builtin.h"
#include "server/job_listing.h"
#include "server/job_manager_internal.h"
#include "spec/queue_document.h"
#include "spec/request_error.h"

namespace tessera::server {
namespace {

constexpr int32_t kMaxListLimit = 1000;
constexpr std::chrono::seconds kCancelWait{10};
// How long a queue change waits for the loop and the store, and an explain for its estimate.
constexpr std::chrono::seconds kQueueWait{10};
constexpr std::chrono::seconds kEstimateWait{5};
constexpr std::string_view kQueuesKey = "/tessera/queues";

}  // namespace

// Shared with job_manager_submit.cc (job_manager_internal.h).
std::string IndexKey(std::string_view tenant, std::string_view name) {
  return fmt::format("{}{}{}", tenant, '\0', name);
}

namespace {

// The spec as the scheduler sees it: clusters are matched through their labels, which every
// node of a cluster carries, so a clusterSelector is one more node selector.
JobSpec SchedulingSpec(const JobSpec& spec) {
  JobSpec out = spec;
  for (TaskGroup& group : out.tasks) {
    for (const auto& [key, value] : spec.cluster_selector) {
      group.request.node_selector[key] = value;
    }
  }
  return out;
}

// Task requests in task order, as the scheduler indexes them.
std::vector<TaskRequest> TaskRequests(const JobSpec& spec) {
  std::vector<TaskRequest> out;
  for (const TaskGroup& group : SchedulingSpec(spec).tasks) {
    for (int32_t r = 0; r < group.replicas; ++r) out.push_back(group.request);
  }
  return out;
}

std::string LaunchId(int64_t job, std::string_view task, int32_t attempt) {
  return fmt::format("{}-{}-a{}", job, task, attempt);
}

bool IsActive(const TaskRuntime& task) { return !task.launch_id.empty() && !task.ended; }

}  // namespace

// The Scheduler names the field at fault first ("queues[2].weight: must be >= 1"): the API
// reports it as the error's field.
absl::Status WithLeadingField(absl::Status status) {
  const std::string message(status.message());
  const size_t colon = message.find(": ");
  if (status.code() != absl::StatusCode::kInvalidArgument || colon == std::string::npos ||
      message.substr(0, colon).find(' ') != std::string::npos) {
    return status;
  }
  return spec::WithField(status, message.substr(0, colon));
}

// A store error as the API reports it. Back-pressure and unavailability keep their codes (the
// client may retry); anything else is Internal: the store's own message, which names fields of
// its transaction, is for the operator's log, not for the client.
absl::Status StoreFailure(std::string_view what, const absl::Status& status) {
  if (absl::IsResourceExhausted(status) || absl::IsUnavailable(status)) {
    return absl::Status(status.code(), fmt::format("{}: {}", what, std::string(status.message())));
  }
  std::fprintf(stderr, "tessera: %s: the store refused the write: %s\n", std::string(what).c_str(),
               status.ToString().c_str());
  return absl::InternalError(
      fmt::format("{}: the state store refused the write ({}); the server's log has the details",
                  what, absl::StatusCodeToString(status.code())));
}

namespace {

// The job is being torn down: a cancel or a preemption; its tasks must not start.
bool Stopping(const JobRecord& record) {
  return record.cancel_requested || record.preemption != PreemptionAction::kNone;
}

std::string DescribeEnd(const TaskRuntime& task) {
  if (!task.message.empty()) return fmt::format("{}: {}", task.name, task.message);
  return fmt::format("{}: {}", task.name, TaskPhaseName(task.phase));
}

std::string DescribePlacement(const TaskRuntime& task) {
  if (task.placement.gpus.empty()) return fmt::format("{} → {}", task.name, task.placement.node);
  return fmt::format("{} → {} gpus [{}]", task.name, task.placement.node,
                     fmt::join(task.placement.gpus, ","));
}

}  // namespace

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

// ---------------------------------------------------------------------------------------------
// Creation, start-up and shutdown

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Create(JobManagerOptions options) {
  if (options.store == nullptr || options.clock == nullptr) {
    return absl::InvalidArgumentError("job manager: a store and a clock are required");
  }
  if (options.cycle_interval.count() <= 0 || options.requeue_backoff.count() < 0) {
    return absl::InvalidArgumentError(
        "job manager: cycle_interval must be > 0 and requeue_backoff >= 0");
  }
  auto manager = std::unique_ptr<JobManager>(new JobManager(std::move(options)));
  const Registry& registry =
      manager->options_.registry != nullptr ? *manager->options_.registry : BuiltinPlugins();
  // Clusters join, leave and change while the control plane runs: a job that fits no node now
  // waits for one rather than being refused.
  SchedulingPolicy policy = manager->options_.policy;
  policy.refuse_unfit = false;
  static const TargetWorkload kNothingSubmitted;
  const std::optional<TargetWorkload>& fixed = manager->options_.target_workload;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(
      manager->options_.profile, registry,
      SchedulerEnv{.rng = manager->rng_.get(),
                   .clock = manager->options_.clock,
                   .target_workload = fixed.has_value() ? &*fixed : &kNothingSubmitted},
      policy);
  if (!scheduler.ok()) return scheduler.status();
  manager->scheduler_ = *std::move(scheduler);
  return manager;
}

JobManager::JobManager(JobManagerOptions options)
    : options_(std::move(options)),
      rng_(std::make_unique<Rng>(options_.seed)),
      recent_workload_(options_.recent_workload),
      metrics_(std::make_unique<ServerMetrics>(options_.metrics)),
      sink_(std::make_unique<Sink>(this)),
      own_timers_(options_.timers ? nullptr : std::make_unique<TimerThread>(*options_.clock)),
      wake_ups_(options_.timers ? *options_.timers : *own_timers_,
                [this](uint64_t wake) { Post(WakeUp{wake}); }) {}

JobManager::~JobManager() { Stop(); }

absl::Status JobManager::Start(std::vector<Cluster*> clusters) {
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    clusters_ = clusters;
  }
  for (Cluster* cluster : clusters) {
    for (Node& node : cluster->Inventory()) {
      const std::string name = node.name;
      absl::StatusOr<int32_t> added = state_.AddNode(std::move(node));
      if (!added.ok()) {
        return absl::InvalidArgumentError(fmt::format("cluster {}: node {}: {}", cluster->name(),
                                                      name, std::string(added.status().message())));
      }
      std::lock_guard<std::mutex> lock(clusters_mu_);
      node_cluster_[name] = cluster;
    }
  }
  if (absl::Status status = LoadJobs(); !status.ok()) return status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, record] : jobs_) NoteSubmitted(record.document.spec);
  }
  if (absl::Status status = LoadQueues(); !status.ok()) return status;

  std::map<Cluster*, std::vector<KnownLaunch>> known;
  std::vector<int64_t> to_launch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::lock_guard<std::mutex> state_lock(state_mu_);
    for (auto& [id, record] : jobs_) RestoreJob(record, known, to_launch);
  }
  for (Cluster* cluster : clusters) cluster->Recover(known[cluster]);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, record] : jobs_) {
      if (IsTerminal(record.status().phase)) continue;
      std::vector<JobEvent> events;
      Resolve(record, events);
      if (!events.empty()) PersistLocked(record, std::move(events));
    }
  }
  for (int64_t id : to_launch) Post(BindingsCommitted{id, jobs_.at(id).attempt});
  wake_ups_.ArmPeriodic(options_.clock->Now(), options_.cycle_interval);
  loop_ = std::thread([this] { LoopMain(); });
  ready_ = true;
  return absl::OkStatus();
}

absl::Status JobManager::LoadJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  store::RangeRequest request{.prefix = std::string(kJobPrefix), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = options_.store->Range(request);
    if (!page.ok()) return page.status();
    for (const store::KeyValue& kv : page->kvs) {
      absl::StatusOr<JobRecord> record = DecodeJobRecord(kv.key, kv.value);
      if (!record.ok()) return record.status();
      const int64_t id = record->id;
      if (!record->document.metadata.request_id.empty()) {
        requests_[IndexKey(record->tenant, record->document.metadata.request_id)] = id;
      }
      if (!IsTerminal(record->status().phase)) {
        active_names_[IndexKey(record->tenant, record->document.spec.name)] = id;
      }
      next_id_ = std::max(next_id_, id + 1);
      jobs_.emplace(id, *std::move(record));
    }
    if (!page->more) break;
    request.after = page->kvs.back().key;
  }
  store::RangeRequest tasks{.prefix = std::string(kTaskPrefix), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = options_.store->Range(tasks);
    if (!page.ok()) return page.status();
    for (const store::KeyValue& kv : page->kvs) {
      if (absl::Status s = LoadStoredTask(jobs_, kv.key, kv.value); !s.ok()) return s;
    }
    if (!page->more) break;
    tasks.after = page->kvs.back().key;
  }
  return absl::OkStatus();
}

absl::Status JobManager::LoadQueues() {
  absl::StatusOr<std::optional<store::KeyValue>> stored = options_.store->Get(kQueuesKey);
  if (!stored.ok()) return stored.status();
  std::vector<QueueSpec> tree = {QueueSpec{.name = "default"}};
  std::string source = "the default (one queue \"default\" without limits)";
  bool configured = true;
  if (stored->has_value()) {
    absl::StatusOr<std::vector<QueueSpec>> decoded = spec::ParseQueueDocument((*stored)->value);
    if (!decoded.ok()) {
      return absl::DataLossError(
          fmt::format("{}: {}", kQueuesKey, std::string(decoded.status().message())));
    }
    tree = *std::move(decoded);
    source = options_.queues.has_value()
                 ? "the store (changed through the API; the configuration's queues are not used)"
                 : "the store (changed through the API)";
  } else if (options_.queues.has_value()) {
    tree = *options_.queues;
    source = "the configuration";
  } else {
    configured = false;  // the Scheduler's own default
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = CheckJobsFitTreeLocked(tree); !s.ok()) {
      return absl::FailedPreconditionError(
          fmt::format("queues from {}: {}", source, std::string(s.message())));
    }
    queues_ = tree;
    queue_leaves_ = spec::LeafIndex(queues_);
  }
  if (configured) {
    if (absl::Status s = scheduler_->SetQueues(tree); !s.ok()) {
      return absl::Status(s.code(),
                          fmt::format("queues from {}: {}", source, std::string(s.message())));
    }
  }
  std::fprintf(stderr, "tessera: queue tree from %s: %zu queue(s)\n", source.c_str(), tree.size());
  PublishQueueStatuses();
  return absl::OkStatus();
}

absl::Status JobManager::CheckJobsFitTreeLocked(const std::vector<QueueSpec>& tree) const {
  std::map<std::string_view, int64_t> unfinished;
  for (const auto& [id, record] : jobs_) {
    if (!IsTerminal(record.status().phase)) ++unfinished[record.document.spec.queue];
  }
  const spec::QueueLeafIndex leaves = spec::LeafIndex(tree);
  for (const auto& [queue, count] : unfinished) {
    auto it = leaves.find(queue);
    if (it != leaves.end() && it->second) continue;
    return absl::FailedPreconditionError(fmt::format(
        "queue \"{}\" has {} unfinished job(s) and would {}; cancel them or wait until they end",
        queue, count, it != leaves.end() ? "no longer be a leaf queue" : "be removed"));
  }
  return absl::OkStatus();
}

void JobManager::RestoreJob(JobRecord& record,
                            std::map<Cluster*, std::vector<KnownLaunch>>& known,
                            std::vector<int64_t>& to_launch) {
  if (IsTerminal(record.status().phase)) return;
  const std::vector<TaskRequest> requests = TaskRequests(record.document.spec);
  std::vector<TaskBinding> placed;  // an ended task holds nothing: node_index -1
  bool unlaunched = false;
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    TaskRuntime& task = record.tasks[i];
    if (task.launch_id.empty()) continue;
    placed.push_back({.task = static_cast<int32_t>(i), .placement = task.placement});
    placed.back().placement.node_index = -1;
    if (task.ended) continue;
    launches_[task.launch_id] = record.id;
    const std::optional<int32_t> node = state_.FindNode(task.placement.node);
    task.placement.node_index = node.value_or(-1);
    if (!node.has_value() || !state_.Assume(requests[i], task.placement).ok()) {
      task.placement.node_index = -1;
      // The end arrives like any other and is handled once the loop runs.
      Post(TaskEnded{{.launch_id = task.launch_id,
                      .phase = TaskPhase::kFailed,
                      .reason = "Lost",
                      .message = fmt::format("node {} is no longer in the inventory",
                                             task.placement.node),
                      .time = options_.clock->Now()}});
      continue;
    }
    placed.back().placement.node_index = *node;
    if (task.launched) {
      known[ClusterOf(task.placement.node)].push_back(
          {.spec = LaunchSpec(record, static_cast<int32_t>(i)), .start_time = task.start_time});
    } else {
      unlaunched = true;
    }
  }
  if (unlaunched) to_launch.push_back(record.id);
  const std::string job = FormatJobId(record.id);
  const TimePoint started = record.status().start_time.value_or(options_.clock->Now());
  if (absl::Status s =
          scheduler_->Restore(job, SchedulingSpec(record.document.spec), placed, started);
      !s.ok()) {
    std::fprintf(stderr, "tessera: job %s cannot be restored: %s\n", job.c_str(),
                 std::string(s.message()).c_str());
  }
}

void JobManager::Stop() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  wake_ups_.CancelAll();  // their timers' callbacks refer to this manager
  // Store callbacks refer to this manager: wait for the writes already handed to the store.
  while (in_flight_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  hub_.Shutdown();
  ready_ = false;
}

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

absl::StatusOr<JobView> JobManager::GetView(const Caller& caller, std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  const JobRecord* record = FindVisibleLocked(caller, id);
  if (record == nullptr) return absl::NotFoundError(fmt::format("job {} not found", id));
  return record->View();
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
  if (request.limit < 1 || request.limit > kMaxListLimit) {
    return spec::FieldError(
        "limit", fmt::format("must be between 1 and {}, not {}", kMaxListLimit, request.limit));
  }
  int64_t after = 0;
  if (!request.page_token.empty()) {
    const std::optional<int64_t> token = ParseJobId(request.page_token);
    if (!token.has_value()) {
      return spec::FieldError(
          "pageToken", fmt::format("\"{}\" is not a page token of this API", request.page_token));
    }
    after = *token;
  }
  if (!request.tenant.empty() && !caller.admin && request.tenant != caller.tenant) {
    return spec::WithField(
        absl::PermissionDeniedError("tenant: only admins may list other tenants' jobs"), "tenant");
  }
  ListPage page(request.limit);
  std::lock_guard<std::mutex> lock(mu_);
  ForEachInListOrder(jobs_, after, request.order, [&](const JobRecord& record) {
    if (uncommitted_.contains(record.id)) return;
    if (!caller.admin && record.tenant != caller.tenant) return;
    if (!request.tenant.empty() && record.tenant != request.tenant) return;
    if (!ListsPhase(request, record.status().phase)) return;
    if (!request.queue.empty() && record.document.spec.queue != request.queue) return;
    if (!request.name.empty() && record.document.spec.name != request.name) return;
    page.Offer([&] { return record.View(); });
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
  int64_t number = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const JobRecord* record = FindVisibleLocked(caller, id);
    if (record == nullptr) return absl::NotFoundError(fmt::format("job {} not found", id));
    number = record->id;
  }
  std::vector<JobEvent> events;
  store::RangeRequest request{.prefix = EventPrefix(number), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = options_.store->Range(request);
    if (!page.ok()) return page.status();
    for (const store::KeyValue& kv : page->kvs) {
      absl::StatusOr<JobEvent> event = DecodeJobEvent(kv.key, kv.value);
      if (!event.ok()) return event.status();
      events.push_back(*std::move(event));
    }
    if (!page->more) break;
    request.after = page->kvs.back().key;
  }
  return events;
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
  if (!request.job_id.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (FindVisibleLocked(caller, request.job_id) == nullptr) {
      return absl::NotFoundError(fmt::format("job {} not found", request.job_id));
    }
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

// ---------------------------------------------------------------------------------------------
// Observer

void JobManager::OnTaskStarted(std::string_view launch_id, TimePoint time) {
  Post(TaskStarted{std::string(launch_id), time});
}

void JobManager::OnTaskEnded(const TaskEnd& end) { Post(TaskEnded{end}); }

void JobManager::OnNodesChanged(const Cluster& cluster, std::vector<Node> nodes) {
  Post(NodesChanged{&cluster, std::move(nodes)});
}

void JobManager::AttachCluster(Cluster* cluster) { Post(ClusterAttached{cluster}); }

void JobManager::Handle(ClusterAttached& event) {
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    if (std::find(clusters_.begin(), clusters_.end(), event.cluster) != clusters_.end()) return;
    clusters_.push_back(event.cluster);
  }
  std::lock_guard<std::mutex> lock(state_mu_);
  for (Node& node : event.cluster->Inventory()) UpsertNodeLocked(event.cluster, std::move(node));
}

absl::Status JobManager::DeleteCluster(const Caller& caller, std::string_view name) {
  if (!caller.admin) return absl::PermissionDeniedError("only admins may delete clusters");
  if (!Ready()) return absl::UnavailableError("the control plane is starting");
  Cluster* cluster = nullptr;
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    for (Cluster* known : clusters_) {
      if (known->name() == name) cluster = known;
    }
  }
  if (cluster == nullptr) return absl::NotFoundError(fmt::format("no cluster named {}", name));
  absl::Status deleted = options_.delete_cluster ? options_.delete_cluster(name)
                                                 : absl::NotFoundError("");
  if (absl::IsNotFound(deleted)) {
    return absl::FailedPreconditionError(fmt::format(
        "cluster {} is configured in the server's config file (clusters:): remove it there",
        name));
  }
  if (absl::IsFailedPrecondition(deleted)) return deleted;
  // Posted after the removed nodes and lost tasks that the deletion reported; answered once
  // the loop has handled them all, so the caller's next read no longer shows the cluster.
  auto handled = std::make_shared<std::promise<void>>();
  std::future<void> detached = handled->get_future();
  Post(ClusterDetached{cluster, [handled] { handled->set_value(); }});
  if (detached.wait_for(kQueueWait) != std::future_status::ready) {
    return absl::UnavailableError(
        fmt::format("cluster {} is deleted but the scheduler has not caught up yet", name));
  }
  return deleted;
}

void JobManager::Handle(ClusterDetached& event) {
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    std::erase(clusters_, event.cluster);
    // node_cluster_ keeps the removed nodes' entries: the deleted cluster object stays valid,
    // and a cluster that reports one of those names later takes it over (UpsertNodeLocked).
  }
  event.done();
}

void JobManager::Handle(NodesChanged& event) {
  Cluster* cluster = nullptr;
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    for (Cluster* known : clusters_) {
      if (known == event.cluster) cluster = known;
    }
  }
  if (cluster == nullptr) return;  // its attachment is still queued: it reads the inventory
  std::lock_guard<std::mutex> lock(state_mu_);
  for (Node& node : event.nodes) UpsertNodeLocked(cluster, std::move(node));
}

void JobManager::UpsertNodeLocked(Cluster* cluster, Node node) {
  const std::optional<int32_t> index = state_.FindNode(node.name);
  if (!index) {
    if (node.removed) return;
    const std::string name = node.name;
    absl::StatusOr<int32_t> added = state_.AddNode(std::move(node));
    if (!added.ok()) {
      fmt::print(stderr, "cluster {}: node {}: {}\n", cluster->name(), name,
                 std::string(added.status().message()));
      return;
    }
    std::lock_guard<std::mutex> lock(clusters_mu_);
    node_cluster_[name] = cluster;
    return;
  }
  if (ClusterOf(node.name) != cluster) {
    if (!state_.node(*index).removed) {
      fmt::print(stderr, "cluster {} reports node {}, which belongs to another cluster\n",
                 cluster->name(), node.name);
      return;
    }
    // A removed node's name, reported again by another cluster (or one registered anew).
    std::lock_guard<std::mutex> lock(clusters_mu_);
    node_cluster_[node.name] = cluster;
  }
  Node& current = state_.MutableNode(*index);
  current.cluster = node.cluster;
  current.pool = std::move(node.pool);
  current.labels = std::move(node.labels);
  current.taints = std::move(node.taints);
  current.capacity = node.capacity;
  current.allocatable = node.allocatable;
  current.condition = node.condition;
  current.unschedulable = node.unschedulable;
  current.removed = node.removed;
  // Devices keep what placed tasks hold on them; a device that appears starts free.
  for (size_t d = 0; d < node.gpus.size(); ++d) {
    if (d < current.gpus.size()) {
      node.gpus[d].used_milli = current.gpus[d].used_milli;
      node.gpus[d].used_memory = current.gpus[d].used_memory;
    }
  }
  current.gpus = std::move(node.gpus);
}

// ---------------------------------------------------------------------------------------------
// The loop

void JobManager::Post(LoopEvent event) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back(std::move(event));
  }
  queue_cv_.notify_one();
}

void JobManager::LoopMain() {
  while (true) {
    std::deque<LoopEvent> batch;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      batch.swap(queue_);
    }
    for (LoopEvent& event : batch) {
      std::visit([this](auto& e) { Handle(e); }, event);
    }
    RunCycle();
    wake_ups_.ArmPeriodic(options_.clock->Now(), options_.cycle_interval);
  }
}

void JobManager::Handle(WakeUp& event) { wake_ups_.Handled(event.wake); }

void JobManager::RunCycle() {
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    HandRecentWorkload();
    scheduler_->RunCycle(state_, *sink_);
  }
  PublishQueueStatuses();
  metrics_->CycleSeconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  UpdateMetrics();
}

void JobManager::NoteSubmitted(const JobSpec& spec) {
  if (options_.target_workload.has_value()) return;
  for (const TaskGroup& group : spec.tasks) {
    for (int32_t r = 0; r < group.replicas; ++r) recent_workload_.Add(group.request);
  }
}

void JobManager::HandRecentWorkload() {
  if (options_.target_workload.has_value() ||
      recent_workload_.revision() == handed_workload_revision_) {
    return;
  }
  handed_workload_revision_ = recent_workload_.revision();
  if (absl::Status s = scheduler_->SetTargetWorkload(recent_workload_.Workload()); !s.ok()) {
    std::fprintf(stderr, "tessera: target workload of the recent tasks refused: %s\n",
                 std::string(s.message()).c_str());
  }
}

void JobManager::UpdateMetrics() {
  const TimePoint now = options_.clock->Now();
  if (now - last_metrics_ < Duration(1000)) return;
  last_metrics_ = now;
  std::map<JobPhase, int> by_phase;
  std::map<std::string, int> pending_by_reason;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, record] : jobs_) {
      ++by_phase[record.status().phase];
      if (record.status().phase == JobPhase::kPending && !record.status().reason.empty()) {
        ++pending_by_reason[record.status().reason];
      }
    }
  }
  metrics_->SetJobCounts(by_phase, pending_by_reason);
  Resources capacity;
  Resources allocated;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    for (const Node& node : state_.nodes()) {
      if (node.removed || node.condition != NodeCondition::kReady) continue;
      capacity += node.allocatable;
      allocated += node.allocated;
    }
  }
  metrics_->SetResources(capacity, allocated);
}

void JobManager::Handle(JobSubmitted& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(event.id);
  if (it == jobs_.end() || IsTerminal(it->second.status().phase)) return;
  JobRecord& record = it->second;
  if (record.cancel_requested) return;
  if (absl::Status s =
          scheduler_->Submit(FormatJobId(event.id), SchedulingSpec(record.document.spec));
      !s.ok()) {
    std::vector<JobEvent> events;
    Finish(record, events, JobPhase::kFailed, "Invalid", std::string(s.message()));
    PersistLocked(record, std::move(events));
    return;
  }
  NoteSubmitted(record.document.spec);
}

void JobManager::Handle(CancelRequested& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(event.id);
  if (it == jobs_.end() || IsTerminal(it->second.status().phase) ||
      it->second.cancel_requested) {
    event.done();
    return;
  }
  JobRecord& record = it->second;
  record.cancel_requested = true;
  std::vector<JobEvent> events;
  AddEvent(record, events, "CancelRequested", "", "cancel requested");
  Resolve(record, events);
  PersistLocked(record, std::move(events), std::move(event.done));
}

void JobManager::Handle(BindingsCommitted& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(event.id);
  if (it == jobs_.end() || it->second.attempt != event.attempt) return;
  JobRecord& record = it->second;
  std::vector<int32_t> to_bind;
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    if (IsActive(record.tasks[i]) && !record.tasks[i].launched) {
      to_bind.push_back(static_cast<int32_t>(i));
    }
  }
  if (to_bind.empty()) return;
  std::vector<JobEvent> events;
  if (IsTerminal(record.status().phase) || Stopping(record)) {
    for (int32_t task : to_bind) {
      EndTask(record, task, TaskPhase::kCancelled, std::nullopt, "", "never started");
    }
    Resolve(record, events);
  } else {
    std::vector<std::string> bound;
    for (int32_t task : to_bind) {
      record.tasks[task].launched = true;
      bound.push_back(DescribePlacement(record.tasks[task]));
    }
    AddEvent(record, events, "Bound", "", fmt::format("{}", fmt::join(bound, ", ")));
  }
  record.SyncTaskStatus();
  const int64_t id = record.id;
  const int32_t attempt = record.attempt;
  PersistLocked(record, std::move(events), [this, id, attempt, to_bind] {
    Post(LaunchRecorded{id, attempt, to_bind});
  });
}

void JobManager::Handle(LaunchRecorded& event) {
  std::vector<std::pair<Cluster*, TaskLaunchSpec>> launches;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(event.id);
    if (it == jobs_.end() || it->second.attempt != event.attempt) return;
    JobRecord& record = it->second;
    std::vector<JobEvent> events;
    for (int32_t task : event.tasks) {
      TaskRuntime& runtime = record.tasks[task];
      if (!IsActive(runtime) || !runtime.launched) continue;
      if (Stopping(record) || IsTerminal(record.status().phase)) {
        EndTask(record, task, TaskPhase::kCancelled, std::nullopt, "", "never started");
        continue;
      }
      launches.emplace_back(ClusterOf(runtime.placement.node), LaunchSpec(record, task));
    }
    if (launches.size() != event.tasks.size()) {
      Resolve(record, events);
      record.SyncTaskStatus();
      PersistLocked(record, std::move(events));
    }
  }
  for (auto& [cluster, spec] : launches) cluster->Launch(spec);
}

void JobManager::Handle(TaskStarted& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto launch = launches_.find(event.launch_id);
  if (launch == launches_.end()) return;
  JobRecord& record = jobs_.at(launch->second);
  for (TaskRuntime& task : record.tasks) {
    if (task.launch_id != event.launch_id || task.ended) continue;
    std::vector<JobEvent> events;
    task.phase = TaskPhase::kRunning;
    task.start_time = event.time;
    if (record.status().phase == JobPhase::kAdmitted) {
      record.status().phase = JobPhase::kRunning;
      record.status().start_time = event.time;
      AddEvent(record, events, "Running", "", fmt::format("{} started", task.name));
    }
    record.SyncTaskStatus();
    PersistLocked(record, std::move(events));
    return;
  }
}

void JobManager::Handle(TaskEnded& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto launch = launches_.find(event.end.launch_id);
  if (launch == launches_.end()) return;
  JobRecord& record = jobs_.at(launch->second);
  launches_.erase(launch);
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    TaskRuntime& task = record.tasks[i];
    if (task.launch_id != event.end.launch_id || task.ended) continue;
    EndTask(record, static_cast<int32_t>(i), event.end.phase, event.end.exit_code,
            event.end.reason, event.end.message);
    std::vector<JobEvent> events;
    AddEvent(record, events, "TaskEnded", task.reason, DescribeEnd(task));
    Resolve(record, events);
    record.SyncTaskStatus();
    Cluster* cluster = ClusterOf(task.placement.node);
    PersistLocked(record, std::move(events), [cluster, id = event.end.launch_id] {
      if (cluster != nullptr) cluster->Forget(id);
    });
    return;
  }
}

void JobManager::Handle(QueuesChanged& event) {
  std::vector<QueueSpec> tree;
  std::vector<QueueSpec> previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<std::vector<QueueSpec>> edited = event.edit(queues_);
    if (!edited.ok()) return event.done(edited.status());
    if (absl::Status s = CheckJobsFitTreeLocked(*edited); !s.ok()) return event.done(s);
    if (absl::Status s = scheduler_->SetQueues(*edited); !s.ok()) {
      return event.done(WithLeadingField(s));
    }
    previous = std::exchange(queues_, *edited);
    queue_leaves_ = spec::LeafIndex(queues_);
    tree = *std::move(edited);
  }
  PublishQueueStatuses();
  PersistQueues(tree, [this, previous = std::move(previous),
                       done = std::move(event.done)](absl::Status stored) mutable {
    if (!stored.ok()) {
      // Not acknowledged, so not in effect either: back to the tree before.
      Post(QueuesChanged{[previous](const std::vector<QueueSpec>&) { return previous; },
                         [](absl::Status) {}});
    }
    done(stored);
  });
}

void JobManager::PersistQueues(const std::vector<QueueSpec>& tree,
                               std::function<void(absl::Status)> done) {
  std::string value = spec::QueueTreeToJson(tree).dump();
  if (const size_t limit = options_.store->limits().max_value_bytes; value.size() > limit) {
    return done(spec::FieldError(
        "queues", fmt::format("the queue tree would take {} bytes in the state store, over its "
                              "limit of {} bytes per value",
                              value.size(), limit)));
  }
  store::Txn txn{.success = {store::Op::Put(std::string(kQueuesKey), std::move(value))}};
  ++in_flight_;
  absl::Status admitted = options_.store->CommitAsync(
      std::move(txn), [this, done](absl::StatusOr<store::TxnResult> result) {
        done(result.ok() ? absl::OkStatus()
                         : StoreFailure("the queue tree could not be stored", result.status()));
        --in_flight_;
      });
  if (!admitted.ok()) {
    --in_flight_;
    done(StoreFailure("the queue tree could not be stored", admitted));
  }
}

void JobManager::Handle(EstimateRequested& event) {
  absl::StatusOr<StartEstimate> estimate;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    estimate = scheduler_->Estimate(FormatJobId(event.id), state_);
  }
  if (estimate.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(event.id);
    if (it != jobs_.end() && it->second.status().phase == JobPhase::kPending) {
      it->second.status().estimated_start_time = estimate->start;
    }
  }
  event.done(std::move(estimate));
}

void JobManager::Handle(PreemptionStarted& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(event.id);
  if (it == jobs_.end() || IsTerminal(it->second.status().phase)) return;
  JobRecord& record = it->second;
  std::vector<JobEvent> events;
  Resolve(record, events);
  record.SyncTaskStatus();
  if (!events.empty()) PersistLocked(record, std::move(events));
}

void JobManager::PublishQueueStatuses() {
  std::vector<QueueStatus> statuses = scheduler_->QueueStatuses();
  std::lock_guard<std::mutex> lock(mu_);
  queue_statuses_ = std::move(statuses);
}

// ---------------------------------------------------------------------------------------------
// Scheduler decisions

void JobManager::OnPlaced(std::string_view job, bool gang, std::span<const TaskBinding> tasks) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  std::vector<JobEvent> events;
  std::vector<std::string> placed;
  for (const TaskBinding& binding : tasks) {
    TaskRuntime& task = record.tasks[binding.task];
    task.placement = binding.placement;
    task.cluster = ClusterOf(task.placement.node)->name();
    task.launch_id = LaunchId(record.id, task.name, record.attempt);
    task.phase = TaskPhase::kPending;
    launches_[task.launch_id] = record.id;
    placed.push_back(DescribePlacement(task));
  }
  if (gang) {
    if (record.status().phase == JobPhase::kPending) {
      MarkAdmitted(record, events, fmt::format("gang of {} placed", tasks.size()));
    }
    record.status().reason.clear();
    record.status().message.clear();
    record.status().cluster = record.tasks[tasks.front().task].cluster;
    explanations_.erase(record.id);
  }
  AddEvent(record, events, "Placed", "", fmt::format("{}", fmt::join(placed, ", ")));
  record.SyncTaskStatus();
  metrics_->Placed(1);
  const int64_t id = record.id;
  const int32_t attempt = record.attempt;
  PersistLocked(record, std::move(events),
                [this, id, attempt] { Post(BindingsCommitted{id, attempt}); });
}

void JobManager::OnRefused(std::string_view job, const PendingReason& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  std::vector<JobEvent> events;
  metrics_->Refused();
  Finish(record, events, JobPhase::kFailed, reason.code, reason.message);
  PersistLocked(record, std::move(events));
}

void JobManager::OnPending(std::string_view job, const PendingReason& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  record.status().reason = reason.code;
  record.status().message = reason.message;
  JobExplanation& explanation = explanations_[record.id];
  explanation = {.phase = record.status().phase,
                 .reason = reason.code,
                 .message = reason.message,
                 .total_nodes = reason.total_nodes};
  for (const auto& [text, nodes] : reason.rejections) {
    explanation.rejections.push_back({.reason = text, .nodes = nodes});
  }
}

void JobManager::OnAdmitted(std::string_view job) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (record.status().phase != JobPhase::kPending) return;
  std::vector<JobEvent> events;
  MarkAdmitted(record, events,
               fmt::format("quota reserved in queue {}", record.document.spec.queue));
  PersistLocked(record, std::move(events));
}

void JobManager::MarkAdmitted(JobRecord& record, std::vector<JobEvent>& events,
                              std::string message) {
  record.status().phase = JobPhase::kAdmitted;
  record.status().reason.clear();
  record.status().message.clear();
  record.status().estimated_start_time.reset();
  explanations_.erase(record.id);
  AddEvent(record, events, "Admitted", "", std::move(message));
}

void JobManager::OnAdmissionRevoked(std::string_view job, const PendingReason& reason,
                                    bool preempted) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (record.status().phase != JobPhase::kAdmitted) return;
  std::vector<JobEvent> events;
  record.status().phase = JobPhase::kPending;
  record.status().reason = reason.code;
  record.status().message = reason.message;
  if (preempted) ++record.status().preemptions;
  // Reclaimed: a queue below its guarantee took the quota back (a preemption); GangTimeout: not
  // placed in time; otherwise the capacity it waited for went to another job.
  const char* type = preempted                       ? "Reclaimed"
                     : reason.code == "GangTimeout" ? "GangTimeout"
                                                    : "AdmissionRevoked";
  AddEvent(record, events, type, reason.code, reason.message);
  PersistLocked(record, std::move(events));
}

void JobManager::OnPreempted(std::string_view job, const PendingReason& reason, bool requeue) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRecord& record = jobs_.at(*ParseJobId(job));
  if (IsTerminal(record.status().phase) || record.preemption != PreemptionAction::kNone) return;
  record.preemption = requeue ? PreemptionAction::kRequeue : PreemptionAction::kCancel;
  ++record.status().preemptions;
  std::vector<JobEvent> events;
  AddEvent(record, events, "Preempted", reason.code.empty() ? "Preempted" : reason.code,
           reason.message);
  // The teardown calls the Scheduler (Hold, Requeue), which a sink must not: it runs as the
  // loop's next event.
  const int64_t id = record.id;
  PersistLocked(record, std::move(events));
  Post(PreemptionStarted{id});
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

void JobManager::EndTask(JobRecord& record, int32_t index, TaskPhase phase,
                         std::optional<int32_t> exit_code, std::string reason,
                         std::string message) {
  TaskRuntime& task = record.tasks[index];
  task.ended = true;
  task.phase = phase;
  task.exit_code = exit_code;
  task.reason = std::move(reason);
  task.message = std::move(message);
  launches_.erase(task.launch_id);
  if (task.placement.node_index < 0) return;
  const std::vector<TaskRequest> requests = TaskRequests(record.document.spec);
  std::lock_guard<std::mutex> lock(state_mu_);
  state_.Forget(requests[index], task.placement);
  task.placement.node_index = -1;
}

void JobManager::Resolve(JobRecord& record, std::vector<JobEvent>& events) {
  if (IsTerminal(record.status().phase)) return;
  const TaskRuntime* failed = nullptr;
  const TaskRuntime* cancelled_outside = nullptr;  // ended Cancelled with no cancel of ours
  bool active = false;
  bool all_succeeded = true;
  for (const TaskRuntime& task : record.tasks) {
    if (IsActive(task)) active = true;
    if (task.ended && task.phase == TaskPhase::kFailed && failed == nullptr) failed = &task;
    if (task.ended && task.phase == TaskPhase::kCancelled && cancelled_outside == nullptr) {
      cancelled_outside = &task;
    }
    if (task.phase != TaskPhase::kSucceeded) all_succeeded = false;
  }
  // A task cancelled on its cluster (scancel, a pod deleted) while the job was not being torn
  // down counts as a failure: the job follows its restart policy.
  if (failed == nullptr && !Stopping(record)) failed = cancelled_outside;
  if (Stopping(record) || failed != nullptr) {
    const std::string job = FormatJobId(record.id);
    if (active) {
      scheduler_->Hold(job).IgnoreError();  // no more placements while it is torn down
      for (const TaskRuntime& task : record.tasks) {
        if (IsActive(task) && task.launched) {
          ClusterOf(task.placement.node)
              ->Cancel(task.launch_id, record.document.spec.termination_grace);
        }
      }
      return;
    }
    if (record.cancel_requested) {
      Finish(record, events, JobPhase::kCancelled, "Cancelled", "cancelled on request");
      return;
    }
    if (record.preemption != PreemptionAction::kNone) {
      EndPreemption(record, events);
      return;
    }
    const control::RestartDecision decision =
        control::AfterFailure(record.document.spec.restart_policy, record.restarts,
                              failed->reason, options_.requeue_backoff);
    if (decision.requeue) {
      Requeue(record, events, *failed, decision);
    } else {
      Finish(record, events, JobPhase::kFailed, failed->reason.empty() ? "Error" : failed->reason,
             DescribeEnd(*failed));
    }
    return;
  }
  if (all_succeeded) {
    Finish(record, events, JobPhase::kSucceeded, "", "every task exited 0");
  }
}

void JobManager::Requeue(JobRecord& record, std::vector<JobEvent>& events,
                         const TaskRuntime& failed, const control::RestartDecision& decision) {
  std::string message =
      fmt::format("{}; restart {} of {} after a back-off of {}", DescribeEnd(failed),
                  decision.restarts, record.document.spec.restart_policy.max_restarts,
                  FormatDuration(decision.backoff));
  record.restarts = decision.restarts;
  Restart(record, events, failed.reason.empty() ? "Error" : failed.reason, std::move(message),
          options_.clock->Now() + decision.backoff);
}

void JobManager::EndPreemption(JobRecord& record, std::vector<JobEvent>& events) {
  const control::RestartDecision decision = control::AfterPreemption(
      record.preemption == PreemptionAction::kRequeue, record.restarts);
  record.preemption = PreemptionAction::kNone;
  if (!decision.requeue) {
    Finish(record, events, JobPhase::kCancelled, "Preempted",
           "preempted; the scheduling policy cancels preempted jobs");
    return;
  }
  Restart(record, events, "Preempted",
          fmt::format("preempted {} time(s); waits again", record.status().preemptions),
          options_.clock->Now() + decision.backoff);
}

void JobManager::Restart(JobRecord& record, std::vector<JobEvent>& events, std::string reason,
                         std::string message, TimePoint not_before) {
  ++record.attempt;
  for (TaskRuntime& task : record.tasks) task = TaskRuntime{.name = task.name};
  record.status().phase = JobPhase::kPending;
  record.status().reason = "Requeued";
  record.status().message = message;
  record.status().cluster.clear();
  record.status().start_time.reset();
  record.SyncTaskStatus();
  AddEvent(record, events, "Requeued", std::move(reason), std::move(message));
  if (not_before > options_.clock->Now()) wake_ups_.At(not_before);  // a cycle when it ends
  if (!scheduler_->Requeue(FormatJobId(record.id), not_before).ok()) {
    scheduler_->Submit(FormatJobId(record.id), SchedulingSpec(record.document.spec)).IgnoreError();
  }
}

void JobManager::Finish(JobRecord& record, std::vector<JobEvent>& events, JobPhase phase,
                        std::string reason, std::string message) {
  scheduler_->Remove(FormatJobId(record.id));
  explanations_.erase(record.id);
  record.status().estimated_start_time.reset();
  active_names_.erase(IndexKey(record.tenant, record.document.spec.name));
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    if (record.tasks[i].phase == TaskPhase::kPending) {
      record.tasks[i].phase = TaskPhase::kCancelled;  // never ran
    }
  }
  record.status().phase = phase;
  record.status().reason = reason;
  record.status().message = message;
  record.status().end_time = options_.clock->Now();
  record.SyncTaskStatus();
  metrics_->Finished(phase);
  AddEvent(record, events, std::string(JobPhaseName(phase)), std::move(reason),
           std::move(message));
}

TaskLaunchSpec JobManager::LaunchSpec(const JobRecord& record, int32_t index) const {
  const JobSpec& spec = record.document.spec;
  const TaskGroup* group = nullptr;
  int32_t first = 0;
  for (const TaskGroup& g : spec.tasks) {
    if (index < first + g.replicas) {
      group = &g;
      break;
    }
    first += g.replicas;
  }
  const TaskRuntime& task = record.tasks[index];
  TaskLaunchSpec launch{.launch_id = task.launch_id,
                        .job_id = FormatJobId(record.id),
                        .task_name = task.name,
                        .placement = task.placement,
                        .cpu = group->request.cpu,
                        .memory = group->request.memory,
                        .command = group->command,
                        .args = group->args,
                        .env = group->env,
                        .working_dir = group->working_dir,
                        .time_limit = spec.time_limit,
                        .termination_grace = spec.termination_grace,
                        .duration = spec.duration,
                        .rank = index};
  launch.env["TESSERA_JOB_ID"] = launch.job_id;
  launch.env["TESSERA_TASK_NAME"] = task.name;
  if (record.tasks.size() > 1) {
    for (const TaskRuntime& peer : record.tasks) launch.peer_nodes.push_back(peer.placement.node);
  }
  return launch;
}

Cluster* JobManager::ClusterOf(std::string_view node) const {
  std::lock_guard<std::mutex> lock(clusters_mu_);
  auto it = node_cluster_.find(node);
  return it == node_cluster_.end() ? nullptr : it->second;
}

// ---------------------------------------------------------------------------------------------
// Persistence

JobEvent& JobManager::AddEvent(JobRecord& record, std::vector<JobEvent>& events, std::string type,
                               std::string reason, std::string message) {
  events.push_back({.job_id = FormatJobId(record.id),
                    .sequence = ++record.last_event,
                    .time = options_.clock->Now(),
                    .type = std::move(type),
                    .phase = record.status().phase,
                    .reason = BoundText(reason, kMaxStoredReasonBytes),
                    .message = BoundText(message, kMaxStoredMessageBytes)});
  return events.back();
}

void JobManager::PersistLocked(JobRecord& record, std::vector<JobEvent> events,
                               std::function<void()> done) {
  store::Txn txn;
  txn.success.push_back(store::Op::Put(JobKey(record.id), EncodeJobRecord(record)));
  for (store::Op& op : TaskWrites(record)) txn.success.push_back(std::move(op));
  for (const JobEvent& event : events) {
    txn.success.push_back(
        store::Op::Put(EventKey(record.id, event.sequence), EncodeJobEvent(event)));
  }
  auto callback = [this, tenant = record.tenant, events = std::move(events),
                   done = std::move(done)](absl::StatusOr<store::TxnResult> result) {
    if (!result.ok()) {
      std::fprintf(stderr, "tessera: a job state write failed: %s\n",
                   std::string(result.status().message()).c_str());
    } else {
      for (const JobEvent& event : events) hub_.Publish(event, tenant);
      if (done) done();
    }
    --in_flight_;
  };
  ++in_flight_;
  // A full write queue (back-pressure) is waited out: the decision must be stored.
  while (true) {
    absl::Status admitted = options_.store->CommitAsync(txn, callback);
    if (admitted.ok()) return;
    if (admitted.code() != absl::StatusCode::kResourceExhausted) {
      std::fprintf(stderr, "tessera: a job state write was refused: %s\n",
                   std::string(admitted.message()).c_str());
      --in_flight_;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace tessera::server

// JobManager: what clusters report (observer), the clusters and nodes it merges, and the loop
// that takes events and runs scheduling cycles (job_manager.h).
#include "server/job_manager.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "fmt/format.h"
#include "server/job_manager_internal.h"
#include "spec/queue_document.h"

namespace tessera::server {

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
  UpsertNodes(event.cluster, event.cluster->Inventory());
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
  UpsertNodes(cluster, std::move(event.nodes));
}

void JobManager::UpsertNodes(Cluster* cluster, std::vector<Node> nodes) {
  std::vector<std::string> tainted;  // nodes that gained a NoExecute taint
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    for (Node& node : nodes) {
      std::string name = node.name;
      if (UpsertNodeLocked(cluster, std::move(node))) tainted.push_back(std::move(name));
    }
  }
  if (tainted.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  EvictUntoleratedLocked(*cluster, tainted);
}

namespace {

// Whether `after` has a NoExecute taint that `before` lacks.
bool GainsNoExecuteTaint(const std::vector<Taint>& before, const std::vector<Taint>& after) {
  for (const Taint& taint : after) {
    if (taint.effect == TaintEffect::kNoExecute &&
        std::find(before.begin(), before.end(), taint) == before.end()) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool JobManager::UpsertNodeLocked(Cluster* cluster, Node node) {
  const std::optional<int32_t> index = state_.FindNode(node.name);
  if (!index) {
    if (node.removed) return false;
    const std::string name = node.name;
    const bool tainted = GainsNoExecuteTaint({}, node.taints);
    ApplyNodeAdminLocked(node);
    absl::StatusOr<int32_t> added = state_.AddNode(std::move(node));
    if (!added.ok()) {
      fmt::print(stderr, "cluster {}: node {}: {}\n", cluster->name(), name,
                 std::string(added.status().message()));
      return false;
    }
    std::lock_guard<std::mutex> lock(clusters_mu_);
    node_cluster_[name] = cluster;
    return tainted;
  }
  if (ClusterOf(node.name) != cluster) {
    if (!state_.node(*index).removed) {
      fmt::print(stderr, "cluster {} reports node {}, which belongs to another cluster\n",
                 cluster->name(), node.name);
      return false;
    }
    // A removed node's name, reported again by another cluster (or one registered anew).
    std::lock_guard<std::mutex> lock(clusters_mu_);
    node_cluster_[node.name] = cluster;
  }
  ApplyNodeAdminLocked(node);
  Node& current = state_.MutableNode(*index);
  const bool tainted = GainsNoExecuteTaint(current.taints, node.taints);
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
  return tainted;
}

// ---------------------------------------------------------------------------------------------
// The loop

bool JobManager::IsQueuedRequest(const LoopEvent& event) {
  return std::holds_alternative<JobSubmitted>(event) ||
         std::holds_alternative<EstimateRequested>(event);
}

absl::Status JobManager::CheckLoopBacklog(size_t requests) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  if (queued_requests_ + requests <= options_.max_queued_requests) return absl::OkStatus();
  return absl::ResourceExhaustedError(fmt::format(
      "the scheduling loop is behind: {} requests wait for it (at most {}); retry later",
      queued_requests_, options_.max_queued_requests));
}

void JobManager::Post(LoopEvent event) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (IsQueuedRequest(event)) ++queued_requests_;
    queue_.push_back(std::move(event));
  }
  queue_cv_.notify_one();
}

void JobManager::LoopMain() {
  // The first turn runs at once: the jobs restored by Start get their first cycle without
  // waiting for an event or one cycle_interval.
  bool first_turn = true;
  while (true) {
    std::deque<LoopEvent> batch;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      handling_ = false;
      idle_cv_.notify_all();
      queue_cv_.wait(lock, [&] {
        return stopping_ || first_turn || !queue_.empty() || (cycle_owed_ && !cycles_held_);
      });
      first_turn = false;
      if (stopping_) return;
      handling_ = true;
      batch.swap(queue_);
      queued_requests_ = 0;
    }
    for (LoopEvent& event : batch) {
      std::visit([this](auto& e) { Handle(e); }, event);
    }
    bool held = false;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      cycle_owed_ = cycles_held_;
      held = cycle_owed_;
    }
    if (!held) RunCycle();
    CompleteDrains();
    {
      // Everything this turn decided, in one transaction.
      std::lock_guard<std::mutex> lock(mu_);
      CommitWritesLocked();
    }
    if (held) continue;
    wake_ups_.ArmPeriodic(options_.clock->Now(), options_.cycle_interval);
  }
}

void JobManager::HoldCycles(bool hold) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    cycles_held_ = hold;
  }
  queue_cv_.notify_one();
}

void JobManager::WaitIdle() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  const auto idle = [&] {
    return stopping_ || (queue_.empty() && !handling_ && (!cycle_owed_ || cycles_held_) &&
                         in_flight_.load() == 0);
  };
  // The loop's going idle is notified; a store write's end is not (its callback only counts
  // down in_flight_), so the condition is read again every millisecond.
  while (!idle()) idle_cv_.wait_for(lock, std::chrono::milliseconds(1));
}

void JobManager::Handle(WakeUp& event) { wake_ups_.Handled(event.wake); }

void JobManager::RunCycle() {
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    HandRecentWorkload();
    scheduler_->RunCycle(state_, *sink_);
    // A job that waits on time alone (a victim's min_runtime, a preemption rate-limit window, a
    // gang timeout) moves at that instant: a cycle then, as Scheduler::NextWakeup asks.
    const std::optional<TimePoint> wake = scheduler_->NextWakeup();
    if (wake && *wake > options_.clock->Now() && wake != scheduler_wake_) {
      scheduler_wake_ = wake;
      wake_ups_.At(*wake);
    }
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
      record.TaskChanged(task);
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
    const PeerNodes peers = PeersOf(record);  // the launches below share it
    for (int32_t task : event.tasks) {
      TaskRuntime& runtime = record.tasks[task];
      if (!IsActive(runtime) || !runtime.launched) continue;
      if (Stopping(record) || IsTerminal(record.status().phase)) {
        EndTask(record, task, TaskPhase::kCancelled, std::nullopt, "", "never started");
        continue;
      }
      launches.emplace_back(ClusterOf(runtime.placement.node), LaunchSpec(record, task, peers));
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
  JobRecord& record = jobs_.at(launch->second.job);
  TaskRuntime& task = record.tasks[launch->second.task];
  if (task.launch_id != event.launch_id || task.ended) return;
  std::vector<JobEvent> events;
  task.phase = TaskPhase::kRunning;
  task.start_time = event.time;
  record.TaskChanged(launch->second.task);
  if (record.status().phase == JobPhase::kAdmitted) {
    record.status().phase = JobPhase::kRunning;
    record.status().start_time = event.time;
    AddEvent(record, events, "Running", "", fmt::format("{} started", task.name));
  }
  record.SyncTaskStatus();
  PersistLocked(record, std::move(events));
}

void JobManager::Handle(TaskEnded& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto launch = launches_.find(event.end.launch_id);
  if (launch == launches_.end()) return;
  const LaunchedTask launched = launch->second;
  launches_.erase(launch);
  JobRecord& record = jobs_.at(launched.job);
  TaskRuntime& task = record.tasks[launched.task];
  if (task.launch_id != event.end.launch_id || task.ended) return;
  EndTask(record, launched.task, event.end.phase, event.end.exit_code, event.end.reason,
          event.end.message);
  std::vector<JobEvent> events;
  AddEvent(record, events, "TaskEnded", task.reason, DescribeEnd(task));
  Resolve(record, events);
  record.SyncTaskStatus();
  Cluster* cluster = ClusterOf(task.placement.node);
  PersistLocked(record, std::move(events), [cluster, id = event.end.launch_id] {
    if (cluster != nullptr) cluster->Forget(id);
  });
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
      MarkChangedLocked(event.id);
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

}  // namespace tessera::server

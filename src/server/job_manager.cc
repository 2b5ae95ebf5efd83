// JobManager: creation, start-up from the store, shutdown, and persistence (job_manager.h).
// The API side is in job_manager_api.cc and job_manager_submit.cc, the loop in
// job_manager_loop.cc, the scheduler's decisions and the job lifecycle in job_manager_lifecycle.cc.
#include "server/job_manager.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>
#include <utility>

#include "fmt/format.h"
#include "sched/plugins/builtin.h"
#include "server/job_manager_internal.h"
#include "spec/queue_document.h"

namespace tessera::server {

namespace {

// `decode` of each of `kvs`, in key order, on up to 8 threads (the decoding, JSON and the spec's
// checks, is most of a restart). The first error, in key order.
template <typename T, typename Decode>
absl::StatusOr<std::vector<T>> DecodeAll(const std::vector<store::KeyValue>& kvs,
                                         const Decode& decode) {
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  const size_t chunk = (kvs.size() + threads - 1) / std::max<size_t>(threads, 1);
  std::vector<absl::StatusOr<T>> decoded(kvs.size());
  const auto decode_chunk = [&](size_t begin) {
    for (size_t i = begin; i < std::min(kvs.size(), begin + chunk); ++i)
      decoded[i] = decode(kvs[i]);
  };
  std::vector<std::thread> workers;
  for (size_t begin = chunk; begin < kvs.size(); begin += chunk) {
    workers.emplace_back(decode_chunk, begin);
  }
  decode_chunk(0);
  for (std::thread& worker : workers) worker.join();
  std::vector<T> values;
  values.reserve(kvs.size());
  for (absl::StatusOr<T>& value : decoded) {
    if (!value.ok()) return value.status();
    values.push_back(*std::move(value));
  }
  return values;
}

// Reads every key under `prefix` in pages of 1,000 and hands the values `decode` makes of each
// page to `add`, in key order; a page is decoded (DecodeAll) while the next one is read.
template <typename T, typename Decode, typename Add>
absl::Status ReadAllDecoded(store::Store& store, std::string_view prefix, const Decode& decode,
                            const Add& add) {
  std::future<absl::StatusOr<std::vector<T>>> decoding;
  store::RangeRequest request{.prefix = std::string(prefix), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = store.Range(request);
    if (!page.ok()) return page.status();
    const bool more = page->more;
    if (more) request.after = page->kvs.back().key;
    auto next = std::async(std::launch::async, [kvs = std::move(page->kvs), &decode] {
      return DecodeAll<T>(kvs, decode);
    });
    if (decoding.valid()) {
      absl::StatusOr<std::vector<T>> values = decoding.get();
      if (!values.ok()) return values.status();
      add(*std::move(values));
    }
    decoding = std::move(next);
    if (!more) break;
  }
  absl::StatusOr<std::vector<T>> values = decoding.get();
  if (!values.ok()) return values.status();
  add(*std::move(values));
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Creation, start-up and shutdown

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Create(JobManagerOptions options) {
  if (options.store == nullptr || options.clock == nullptr) {
    return absl::InvalidArgumentError("job manager: a store and a clock are required");
  }
  if (options.max_queued_requests < 1) {
    return absl::InvalidArgumentError("job manager: max_queued_requests must be >= 1");
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
      metrics_(std::make_unique<ServerMetrics>(options_.metrics)),
      cycle_writes_(options_.store->limits()),
      recent_workload_(options_.recent_workload),
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
  if (absl::Status status = LoadNodeAdmins(); !status.ok()) return status;
  for (Cluster* cluster : clusters) {
    for (Node& node : cluster->Inventory()) {
      const std::string name = node.name;
      ApplyNodeAdminLocked(node);
      absl::StatusOr<int32_t> added = state_.AddNode(std::move(node));
      if (!added.ok()) {
        return absl::InvalidArgumentError(fmt::format("cluster {}: node {}: {}", cluster->name(),
                                                      name, std::string(added.status().message())));
      }
      std::lock_guard<std::mutex> lock(clusters_mu_);
      node_cluster_[name] = cluster;
    }
  }
  if (options_.stored_jobs.has_value()) {
    AdoptStoredJobs();
  } else if (absl::Status status = LoadJobs(); !status.ok()) {
    return status;
  }
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
    ResumeDrainsLocked();
    for (const auto& [id, record] : jobs_) MarkChangedLocked(id);
    for (auto& [id, record] : jobs_) {
      if (IsTerminal(record.status().phase)) continue;
      std::vector<JobEvent> events;
      Resolve(record, events);
      if (!events.empty()) PersistLocked(record, std::move(events));
    }
    CommitWritesLocked();
  }
  for (int64_t id : to_launch) Post(BindingsCommitted{id, jobs_.at(id).attempt});
  wake_ups_.ArmPeriodic(options_.clock->Now(), options_.cycle_interval);
  loop_ = std::thread([this] { LoopMain(); });
  ready_ = true;
  return absl::OkStatus();
}

absl::Status JobManager::LoadJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  // The specs first: each record is decoded with its job's spec, taken from `specs`.
  std::map<int64_t, spec::JobDocument> specs;
  absl::Status read = ReadAllDecoded<spec::JobDocument>(
      *options_.store, kSpecPrefix,
      [](const store::KeyValue& kv) { return DecodeJobSpec(kv.key, kv.value); },
      [&specs](std::vector<spec::JobDocument> documents) {
        for (spec::JobDocument& document : documents) {
          const int64_t id = *ParseJobId(document.metadata.id);
          specs.emplace_hint(specs.end(), id, std::move(document));
        }
      });
  if (!read.ok()) return read;
  // Each record moves its own spec out of `specs` (distinct entries, from any thread).
  const auto decode = [&specs](const store::KeyValue& kv) { return DecodeJobRecord(kv, specs); };
  read = ReadAllDecoded<JobRecord>(
      *options_.store, kJobPrefix, decode, [this](std::vector<JobRecord> records) {
        for (JobRecord& record : records) {
          IndexStoredLocked(record);
          jobs_.emplace_hint(jobs_.end(), record.id, std::move(record));
        }
      });
  if (!read.ok()) return read;
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

void JobManager::AdoptStoredJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_ = *std::move(options_.stored_jobs);
  options_.stored_jobs.reset();
  for (const auto& [id, record] : jobs_) IndexStoredLocked(record);
}

void JobManager::IndexStoredLocked(const JobRecord& record) {
  if (!record.document.metadata.request_id.empty()) {
    requests_[IndexKey(record.tenant, record.document.metadata.request_id)] = record.id;
  }
  if (!IsTerminal(record.status().phase)) {
    active_names_[IndexKey(record.tenant, record.document.spec.name)] = record.id;
  }
  next_id_ = std::max(next_id_, record.id + 1);
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

void JobManager::RestoreJob(JobRecord& record, std::map<Cluster*, std::vector<KnownLaunch>>& known,
                            std::vector<int64_t>& to_launch) {
  if (IsTerminal(record.status().phase)) return;
  std::vector<TaskRequest> requests;  // once a task is found running (most jobs have none)
  std::vector<TaskBinding> placed;    // an ended task holds nothing: node_index -1
  std::optional<PeerNodes> peers;     // once a launched task is found
  bool unlaunched = false;
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    TaskRuntime& task = record.tasks[i];
    if (task.launch_id.empty()) continue;
    placed.push_back({.task = static_cast<int32_t>(i), .placement = task.placement});
    placed.back().placement.node_index = -1;
    if (task.ended) continue;
    launches_[task.launch_id] = {.job = record.id, .task = static_cast<int32_t>(i)};
    if (requests.empty()) requests = TaskRequests(record.document.spec);
    const std::optional<int32_t> node = state_.FindNode(task.placement.node);
    task.placement.node_index = node.value_or(-1);
    if (!node.has_value() || !state_.Assume(requests[i], task.placement).ok()) {
      task.placement.node_index = -1;
      // The end arrives like any other and is handled once the loop runs.
      Post(TaskEnded{
          {.launch_id = task.launch_id,
           .phase = TaskPhase::kFailed,
           .reason = "Lost",
           .message = fmt::format("node {} is no longer in the inventory", task.placement.node),
           .time = options_.clock->Now()}});
      continue;
    }
    placed.back().placement.node_index = *node;
    if (task.launched) {
      if (!peers.has_value()) peers = PeersOf(record);
      known[ClusterOf(task.placement.node)].push_back(
          {.spec = LaunchSpec(record, static_cast<int32_t>(i), *peers),
           .start_time = task.start_time});
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
  std::vector<store::Op> ops;
  ops.reserve(3 + events.size());
  if (!record.spec_stored) {  // read from an older version's record, which held it inline
    ops.push_back(store::Op::Put(SpecKey(record.id), EncodeJobSpec(record)));
    record.spec_stored = true;
  }
  MarkChangedLocked(record.id);
  ops.push_back(store::Op::Put(JobKey(record.id), EncodeJobRecord(record)));
  for (store::Op& op : TaskWrites(record)) ops.push_back(std::move(op));
  for (const JobEvent& event : events) {
    ops.push_back(store::Op::Put(EventKey(record.id, event.sequence), EncodeJobEvent(event)));
  }
  if (!cycle_writes_.Fits(ops)) CommitWritesLocked();
  cycle_writes_.Add(std::move(ops), record.tenant, std::move(events), std::move(done));
}

void JobManager::CommitWritesLocked() {
  PublishLocked();
  if (cycle_writes_.empty()) return;
  CycleWrites::Batch batch = cycle_writes_.Take();
  auto callback = [this, events = std::move(batch.events),
                   done = std::move(batch.done)](absl::StatusOr<store::TxnResult> result) {
    if (!result.ok()) {
      std::fprintf(stderr, "tessera: a job state write failed: %s\n",
                   std::string(result.status().message()).c_str());
      if (options_.on_write_failure) options_.on_write_failure(result.status());
    } else {
      for (const auto& [event, tenant] : events) hub_.Publish(event, tenant);
      for (const std::function<void()>& step_done : done) step_done();
    }
    --in_flight_;
  };
  ++in_flight_;
  // A full write queue (back-pressure) is waited out: the decisions must be stored.
  while (true) {
    absl::Status admitted = options_.store->CommitAsync(batch.txn, callback);
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

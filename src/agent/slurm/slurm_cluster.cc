#include "agent/slurm/slurm_cluster.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

#include "absl/strings/str_join.h"
#include "agent/local/distributed_env.h"
#include "agent/local/system_clock.h"
#include "agent/slurm/slurm_api_probe.h"
#include "core/timer_thread.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

// Distributed-training ports: a job's ranks get consecutive ports from a start derived from
// the job id, so ranks sharing a node never collide and jobs rarely do.
constexpr int32_t kPortBase = 20000;
constexpr uint32_t kPortSpread = 20000;

uint32_t Fnv1a(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  return hash;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlurmCluster>> SlurmCluster::Create(SlurmClusterOptions options,
                                                                   TaskObserver* observer) {
  absl::StatusOr<std::optional<SlurmApiVersion>> setting =
      ParseSlurmApiVersionSetting(options.api_version);
  if (!setting.ok()) return setting.status();
  if (options.poll_interval <= Duration(0)) {
    return absl::InvalidArgumentError("slurm poll interval: must be positive");
  }
  if (options.active_poll_interval <= Duration(0)) {
    return absl::InvalidArgumentError("slurm active poll interval: must be positive");
  }
  options.active_poll_interval = std::min(options.active_poll_interval, options.poll_interval);
  // Slurm's log brings the ends: the job list is then read only for starts, at the idle pace.
  if (!options.jobcomp_file.empty()) options.active_poll_interval = options.poll_interval;
  if (options.jobcomp_interval <= Duration(0)) {
    return absl::InvalidArgumentError("slurm job-completion log interval: must be positive");
  }
  if (options.concurrent_submissions < 1) {
    return absl::InvalidArgumentError("slurm concurrent submissions: must be at least 1");
  }
  std::vector<std::shared_ptr<SlurmTransport>> submit_transports;
  if (options.transport != nullptr) {
    // An injected transport (tests) takes the submissions in flight together.
    submit_transports.assign(options.concurrent_submissions, options.transport);
  } else {
    absl::StatusOr<SlurmClusterOptions> checked = SlurmClusterOptions::FromEnvironment(
        options, [](std::string_view) { return std::nullopt; });
    if (!checked.ok()) return checked.status();
    options = *std::move(checked);
    const SlurmHttpOptions http{.url = options.url,
                                .user = options.user,
                                .jwt = options.jwt,
                                .jwt_file = options.jwt_file,
                                .timeout = options.request_timeout};
    // The HTTP transport asks one thing at a time: each submission in flight has its own.
    for (int i = 0; i < options.concurrent_submissions; ++i) {
      absl::StatusOr<std::unique_ptr<SlurmTransport>> one = NewHttpSlurmTransport(http);
      if (!one.ok()) return one.status();
      submit_transports.push_back(*std::move(one));
    }
  }
  std::shared_ptr<SlurmTransport> transport = submit_transports.front();
  absl::StatusOr<SlurmApiVersion> version = setting->has_value()
                                                ? absl::StatusOr<SlurmApiVersion>(**setting)
                                                : ProbeSlurmApiVersion(*transport);
  if (!version.ok()) return version.status();
  options.api_version = SlurmApiVersionName(*version);
  options.labels[std::string(kClusterLabel)] = options.name;
  auto cluster = std::unique_ptr<SlurmCluster>(new SlurmCluster(
      std::move(options), observer, std::move(transport), std::move(submit_transports), *version));
  cluster->Log(fmt::format(
      "slurmrestd REST API {} ({})", cluster->options_.api_version,
      setting->has_value() ? "as set" : "the newest of v0.0.38 to v0.0.43 that slurmrestd serves"));
  {
    std::lock_guard<std::mutex> rest(cluster->rest_mu_);
    absl::Status first = cluster->RefreshInventory().status();
    if (!first.ok()) return first;
    cluster->MeasureSlurmClock();
  }
  if (!cluster->options_.partition.empty() && cluster->nodes_.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("--slurm-partition: no Slurm node is in partition \"{}\" (does it exist?)",
                    cluster->options_.partition));
  }
  cluster->poller_ = std::thread([self = cluster.get()] { self->Run(); });
  if (!cluster->options_.jobcomp_file.empty()) {
    SlurmCluster* self = cluster.get();
    cluster->jobcomp_ = std::make_unique<SlurmJobCompFollower>(
        self->options_.jobcomp_file, self->options_.jobcomp_interval,
        [self](const SlurmJob& logged) { self->Notice(logged); },
        [self](std::string_view line) { self->Log(line); });
  }
  return cluster;
}

SlurmCluster::SlurmCluster(SlurmClusterOptions options, TaskObserver* observer,
                           std::shared_ptr<SlurmTransport> transport,
                           std::vector<std::shared_ptr<SlurmTransport>> submit_transports,
                           SlurmApiVersion api_version)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
      own_timers_(options_.timers == nullptr ? std::make_unique<TimerThread>(clock_) : nullptr),
      timers_(options_.timers != nullptr ? options_.timers : own_timers_.get()),
      observer_(observer),
      transport_(std::move(transport)),
      client_(transport_.get(), options_.api_version),
      submit_transports_(std::move(submit_transports)),
      inventory_options_{.cluster = options_.name,
                         .labels = options_.labels,
                         .partition = options_.partition,
                         .gpu_types = options_.gpu_types},
      submit_options_{.partition = options_.partition,
                      .log_dir = options_.log_dir,
                      .working_dir = options_.working_dir,
                      .base_env = options_.base_env,
                      .api_version = api_version},
      interval_({.active = options_.active_poll_interval, .idle = options_.poll_interval}) {
  for (const std::shared_ptr<SlurmTransport>& transport : submit_transports_) {
    submit_clients_.emplace_back(transport.get(), options_.api_version);
  }
}

SlurmCluster::~SlurmCluster() {
  jobcomp_.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (poller_.joinable()) poller_.join();
  std::set<TimerId> armed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed = armed_;
  }
  for (TimerId id : armed) timers_->Cancel(id);  // no lock held: a firing one returns first
  own_timers_.reset();
}

void SlurmCluster::Log(std::string_view line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    fmt::print(stderr, "tessera agent (slurm {}): {}\n", options_.name, line);
  }
}

void SlurmCluster::LogChange(const std::string& key, const std::string& line) {
  if (logged_.Changed(key, line)) Log(line);
}

SlurmCluster::Task::Task(const TaskLaunchSpec& spec)
    : node(spec.placement.node),
      request{.cpu = spec.cpu,
              .memory = spec.memory,
              .gpus = static_cast<int32_t>(spec.placement.gpus.size())},
      devices(spec.placement.gpus.begin(), spec.placement.gpus.end()) {}

bool SlurmCluster::SubmitQueued() {
  bool submitted = false;
  while (true) {
    std::vector<Submission> batch = TakeSubmissions(submit_clients_.size());
    if (batch.empty()) return submitted;
    SendSubmissions(batch);
    submitted = true;
    jobs_dirty_ = true;
    for (Submission& submission : batch) RecordSubmission(submission);
  }
}

std::vector<SlurmCluster::Submission> SlurmCluster::TakeSubmissions(size_t at_most) {
  std::vector<Submission> batch;
  std::lock_guard<std::mutex> lock(mu_);
  while (batch.size() < at_most && !submit_queue_.empty()) {
    std::string launch_id = std::move(submit_queue_.front());
    submit_queue_.pop_front();
    auto it = tasks_.find(launch_id);
    if (it == tasks_.end() || it->second->ended || it->second->submit_body.empty()) continue;
    batch.push_back(
        {.launch_id = std::move(launch_id), .body = std::move(it->second->submit_body)});
    it->second->submit_body.clear();
  }
  return batch;
}

void SlurmCluster::SendSubmissions(std::vector<Submission>& batch) {
  std::vector<std::thread> others;
  for (size_t i = 1; i < batch.size(); ++i) {
    others.emplace_back(
        [this, &batch, i] { batch[i].job_id = submit_clients_[i].Submit(batch[i].body); });
  }
  batch[0].job_id = submit_clients_[0].Submit(batch[0].body);
  for (std::thread& other : others) other.join();
}

void SlurmCluster::RecordSubmission(Submission& submission) {
  const std::string& launch_id = submission.launch_id;
  const absl::StatusOr<int64_t>& job_id = submission.job_id;
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(launch_id);
    if (it == tasks_.end()) return;
    Task& task = *it->second;
    if (job_id.ok()) {
      task.job_id = *job_id;
    } else if (absl::IsUnavailable(job_id.status())) {
      // No reply: the job may exist all the same. The next job poll looks for it by comment,
      // and sends it once more when Slurm has none.
      task.adopting = true;
      task.submit_error = std::string(job_id.status().message());
      if (!task.resubmitted) task.unanswered_body = std::move(submission.body);
    } else {
      task.ended = true;
      events.push_back({.launch_id = launch_id,
                        .end = TaskEnd{.launch_id = launch_id,
                                       .phase = TaskPhase::kFailed,
                                       .reason = "StartFailed",
                                       .message = std::string(job_id.status().message()),
                                       .time = clock_.Now()}});
    }
  }
  if (!job_id.ok())
    Log(fmt::format("task {}: {}", launch_id, std::string(job_id.status().message())));
  Deliver(events);
}

void SlurmCluster::SendSignals() {
  struct Signal {
    std::string launch_id;
    int64_t job_id;
    std::string signal;  // "" = Slurm's cancel
  };
  std::vector<Signal> signals;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = clock_.Now();
    for (auto& [id, task] : tasks_) {
      if (!task->cancel_requested || !task->job_id.has_value() || task->ended) continue;
      if (!task->term_sent) {
        task->term_sent = true;
        task->kill_sent = task->grace <= Duration(0);
        signals.push_back({id, *task->job_id, task->kill_sent ? "" : "TERM"});
        if (!task->kill_sent) ArmLocked(task->kill_at, /*poll=*/false);
      } else if (!task->kill_sent && now >= task->kill_at) {
        task->kill_sent = true;
        signals.push_back({id, *task->job_id, ""});
      }
    }
  }
  for (const Signal& signal : signals) {
    jobs_dirty_ = true;
    absl::Status sent = client_.Signal(signal.job_id, signal.signal);
    if (sent.ok()) continue;
    Log(fmt::format("cancelling task {} (Slurm job {}): {}", signal.launch_id, signal.job_id,
                    std::string(sent.message())));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(signal.launch_id);
    if (it == tasks_.end()) continue;
    // Tried again on the next round.
    if (signal.signal.empty()) {
      it->second->kill_sent = false;
      if (it->second->grace <= Duration(0)) it->second->term_sent = false;
    } else {
      it->second->term_sent = false;
    }
  }
}

void SlurmCluster::MatchJobsLocked(const SlurmJobList& jobs, bool kill_orphans,
                                   std::vector<Event>& events, std::vector<int64_t>& orphans) {
  std::map<std::string, std::vector<const SlurmJob*>> by_launch;
  for (const SlurmJob& job : jobs.jobs) {
    if (!options_.partition.empty() && job.partition != options_.partition) continue;
    std::string launch_id = LaunchIdOf(job);
    if (launch_id.empty()) {
      // A known launch's job whose comment was lost is still found by its name.
      auto it = tasks_.find(job.name);
      if (it == tasks_.end() || !it->second->adopting) continue;
      launch_id = job.name;
    }
    by_launch[launch_id].push_back(&job);
  }
  for (const auto& [launch_id, candidates] : by_launch) {
    auto it = tasks_.find(launch_id);
    Task* task = it == tasks_.end() ? nullptr : it->second.get();
    if (task != nullptr && !task->job_id.has_value() && task->adopting) {
      const SlurmJob* newest = candidates.front();
      for (const SlurmJob* job : candidates) newest = job->id > newest->id ? job : newest;
      task->job_id = newest->id;
    }
    if (task != nullptr) task->adopting = false;
    if (!kill_orphans) continue;
    for (const SlurmJob* job : candidates) {
      const bool claimed = task != nullptr && task->job_id == job->id;
      if (!claimed && PhaseOf(job->state) != SlurmJobPhase::kEnded) orphans.push_back(job->id);
    }
  }
  // Adopted launches Slurm has no job for.
  for (auto& [launch_id, task] : tasks_) {
    if (!task->adopting || task->ended) continue;
    task->adopting = false;
    if (!task->unanswered_body.empty()) {
      // A submission that got no reply never arrived (a kept-alive connection slurmrestd had
      // closed): sent once more.
      task->submit_body = std::exchange(task->unanswered_body, {});
      task->resubmitted = true;
      task->submit_error.clear();
      submit_queue_.push_back(launch_id);
      work_ = true;
      continue;
    }
    task->ended = true;
    const bool submit_failed = !task->submit_error.empty();
    events.push_back(
        {.launch_id = launch_id,
         .end = TaskEnd{
             .launch_id = launch_id,
             .phase = TaskPhase::kFailed,
             .reason = submit_failed ? "StartFailed" : "LostOnRestart",
             .message = submit_failed
                            ? task->submit_error
                            : "Slurm has no job for this task (it never ran, or ended long ago)",
             .time = clock_.Now()}});
  }
}

std::vector<int64_t> SlurmCluster::ApplyJobsLocked(const std::vector<SlurmJob>& jobs,
                                                   std::vector<Event>& events) {
  std::map<int64_t, const SlurmJob*> by_id;
  for (const SlurmJob& job : jobs) by_id[job.id] = &job;
  std::vector<int64_t> missing;
  const TimePoint now = clock_.Now();
  for (auto& [launch_id, task] : tasks_) {
    if (task->ended || !task->job_id.has_value()) continue;
    auto found = by_id.find(*task->job_id);
    if (found == by_id.end()) {
      missing.push_back(*task->job_id);
      continue;
    }
    const SlurmJob& job = *found->second;
    const SlurmJobPhase phase = PhaseOf(job.state);
    Event event{.launch_id = launch_id};
    // A job seen only after it ended had started when Slurm gives it a start — unless it was
    // cancelled before anyone saw it run.
    const bool ran = phase == SlurmJobPhase::kRunning ||
                     (phase == SlurmJobPhase::kEnded && job.start_time.has_value() &&
                      !task->cancel_requested && job.state != "CANCELLED");
    if (!task->started && ran) {
      task->started = true;
      event.started = job.start_time.value_or(now);
    }
    if (task->started && phase == SlurmJobPhase::kWaiting && !task->cancel_requested) {
      // Slurm put a started job back in its queue (its node failed; the REST API of 22.05
      // ignores requeue: false): the task is lost, and Tessera's restart policy decides, for
      // the whole gang. The requeued Slurm job is cancelled so that it does not run again.
      event.end = TaskEnd{.launch_id = launch_id,
                          .phase = TaskPhase::kFailed,
                          .reason = "Lost",
                          .message = fmt::format("Slurm requeued job {} ({})", job.id, job.state),
                          .time = now};
      task->ended = true;
      requeued_.push_back(job.id);
      events.push_back(std::move(event));
      continue;
    }
    event.end = TaskEndOf(job, launch_id, task->cancel_requested, now);
    if (event.end.has_value()) task->ended = true;
    if (event.started.has_value() || event.end.has_value()) events.push_back(std::move(event));
  }
  return missing;
}

void SlurmCluster::ReadJobs(const std::vector<int64_t>& job_ids, std::vector<Event>& events) {
  for (int64_t job_id : job_ids) {
    absl::StatusOr<std::optional<SlurmJob>> job = client_.Job(job_id);
    if (!job.ok()) continue;  // asked again next poll
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [launch_id, task] : tasks_) {
      if (task->ended || task->job_id != job_id) continue;
      if (job->has_value()) {
        std::vector<int64_t> ignored = ApplyJobsLocked({**job}, events);
        break;
      }
      task->ended = true;
      events.push_back(
          {.launch_id = launch_id,
           .end =
               TaskEnd{.launch_id = launch_id,
                       .phase = task->cancel_requested ? TaskPhase::kCancelled : TaskPhase::kFailed,
                       .reason = task->cancel_requested ? "" : "Lost",
                       .message = fmt::format("Slurm no longer knows job {}", job_id),
                       .time = clock_.Now()}});
    }
  }
}

void SlurmCluster::Deliver(const std::vector<Event>& events) {
  for (const Event& event : events) {
    if (event.started.has_value()) observer_->OnTaskStarted(event.launch_id, *event.started);
    if (event.end.has_value()) observer_->OnTaskEnded(*event.end);
  }
}

// ---- Cluster

std::vector<Node> SlurmCluster::Inventory() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nodes_;
}

std::vector<NodeUsage> SlurmCluster::Usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

std::map<std::string, std::string> SlurmCluster::ExtraEnvLocked(const TaskLaunchSpec& spec) const {
  std::map<std::string, std::string> env = {{"TESSERA_TASK_ID", spec.launch_id}};
  if (spec.peer_nodes.size() <= 1) return env;
  DistributedTask distributed{.index = spec.rank};
  const int32_t first = kPortBase + static_cast<int32_t>(Fnv1a(spec.job_id) % kPortSpread);
  for (size_t rank = 0; rank < spec.peer_nodes.size(); ++rank) {
    const std::string& node = spec.peer_nodes[rank];
    auto address = addresses_.find(node);
    distributed.tasks.push_back({.address = address != addresses_.end() ? address->second : node,
                                 .port = first + static_cast<int32_t>(rank % 20000)});
  }
  absl::StatusOr<EnvMap> vars = DistributedEnv(distributed);
  if (vars.ok()) env.insert(vars->begin(), vars->end());
  return env;
}

void SlurmCluster::Launch(const TaskLaunchSpec& spec) {
  absl::StatusOr<std::string> body;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(spec.launch_id);
    if (it != tasks_.end() && !it->second->ended) {
      Log(fmt::format("task {}: launched twice; the second launch is ignored", spec.launch_id));
      return;
    }
    body = SubmitBody(spec, submit_options_, ExtraEnvLocked(spec));
    if (body.ok()) {
      auto task = std::make_unique<Task>(spec);
      task->submit_body = *std::move(body);
      tasks_[spec.launch_id] = std::move(task);
      submit_queue_.push_back(spec.launch_id);
      work_ = true;
    }
  }
  if (!body.ok()) {
    observer_->OnTaskEnded({.launch_id = spec.launch_id,
                            .phase = TaskPhase::kFailed,
                            .reason = "StartFailed",
                            .message = fmt::format("Slurm cannot run the task: {}",
                                                   std::string(body.status().message())),
                            .time = clock_.Now()});
    return;
  }
  wake_.notify_all();
}

void SlurmCluster::Cancel(std::string_view launch_id, Duration grace) {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(launch_id);
    if (it == tasks_.end() || it->second->ended || it->second->cancel_requested) return;
    Task& task = *it->second;
    task.cancel_requested = true;
    task.grace = grace;
    task.kill_at = clock_.Now() + grace;
    if (!task.submit_body.empty()) {
      // Still queued: it never reaches Slurm.
      task.submit_body.clear();
      task.ended = true;
      events.push_back({.launch_id = std::string(launch_id),
                        .end = TaskEnd{.launch_id = std::string(launch_id),
                                       .phase = TaskPhase::kCancelled,
                                       .message = "cancelled before it was submitted",
                                       .time = clock_.Now()}});
    } else {
      work_ = true;
    }
  }
  wake_.notify_all();
  Deliver(events);
}

std::vector<std::string> SlurmCluster::Recover(const std::vector<KnownLaunch>& known) {
  std::lock_guard<std::mutex> rest(rest_mu_);
  absl::StatusOr<SlurmJobList> jobs = client_.Jobs();
  std::vector<Event> events;
  std::vector<int64_t> orphans;
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, std::unique_ptr<Task>, std::less<>> tasks;
    for (const KnownLaunch& launch : known) {
      const std::string& id = launch.spec.launch_id;
      auto it = tasks_.find(id);
      if (it != tasks_.end() && !it->second->ended) {
        tasks[id] = std::move(it->second);
        tasks_.erase(it);
        continue;
      }
      auto task = std::make_unique<Task>(launch.spec);
      task->adopting = true;
      task->started = launch.start_time.has_value();
      tasks[id] = std::move(task);
    }
    // What this cluster followed that the control plane no longer knows is stopped.
    for (const auto& [id, task] : tasks_) {
      if (!task->ended && task->job_id.has_value()) orphans.push_back(*task->job_id);
    }
    tasks_ = std::move(tasks);
    std::erase_if(submit_queue_, [this](const std::string& id) { return !tasks_.contains(id); });
    reconcile_pending_ = !jobs.ok();
    if (jobs.ok()) {
      MatchJobsLocked(*jobs, /*kill_orphans=*/true, events, orphans);
      missing = ApplyJobsLocked(jobs->jobs, events);
    }
  }
  if (!jobs.ok()) {
    Log(
        fmt::format("recovering: reading the job list: {} (the known tasks are kept until it "
                    "can be read)",
                    std::string(jobs.status().message())));
  }
  ReadJobs(missing, events);
  std::sort(orphans.begin(), orphans.end());
  orphans.erase(std::unique(orphans.begin(), orphans.end()), orphans.end());
  for (int64_t job_id : orphans) {
    Log(
        fmt::format("recovering: cancelling Slurm job {}: a Tessera task the control plane does "
                    "not know",
                    job_id));
    absl::Status cancelled = client_.Signal(job_id, "");
    if (!cancelled.ok()) Log(std::string(cancelled.message()));
  }
  std::vector<std::string> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, task] : tasks_) {
      if (!task->ended) running.push_back(id);
    }
  }
  Deliver(events);
  return running;
}

void SlurmCluster::Forget(std::string_view launch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(launch_id);
  if (it != tasks_.end() && it->second->ended) tasks_.erase(it);
}

std::optional<int64_t> SlurmCluster::JobIdOf(std::string_view launch_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(launch_id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second->job_id;
}

absl::StatusOr<LogChunk> SlurmCluster::ReadLog(std::string_view launch_id, LogStream stream,
                                               int64_t offset, int64_t limit) const {
  if (offset < 0) return absl::InvalidArgumentError("offset: must be >= 0");
  const std::string path = LogPath(options_.log_dir, launch_id, stream);
  bool followed = false;
  bool started = false;
  bool ended = true;  // a task no longer followed has ended (or was never launched here)
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = tasks_.find(launch_id); it != tasks_.end()) {
      followed = true;
      started = it->second->started;
      ended = it->second->ended;
    }
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    const int error = errno;
    if (error == ENOENT && (!followed || !started)) {
      return absl::NotFoundError(fmt::format("no log for task {} (yet)", launch_id));
    }
    return absl::FailedPreconditionError(
        fmt::format("the log of task {} is not readable on the agent's host: {}: {} (the Slurm log "
                    "directory must be shared between the nodes and the agent)",
                    launch_id, path, std::strerror(error)));
  }
  file.seekg(0, std::ios::end);
  const int64_t size = file.tellg();
  LogChunk chunk;
  if (offset < size && limit > 0) {
    chunk.data.resize(static_cast<size_t>(std::min(limit, size - offset)));
    file.seekg(offset);
    file.read(chunk.data.data(), static_cast<std::streamsize>(chunk.data.size()));
    chunk.data.resize(static_cast<size_t>(file.gcount()));
  }
  chunk.next_offset = offset + static_cast<int64_t>(chunk.data.size());
  chunk.end = ended && chunk.next_offset >= size;
  return chunk;
}

}  // namespace tessera::agent

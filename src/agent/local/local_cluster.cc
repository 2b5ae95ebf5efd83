#include "agent/local/local_cluster.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include "agent/local/free_ports.h"
#include "agent/local/system_clock.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

tessera::TaskEnd ToTaskEnd(const TaskOutcome& outcome) {
  tessera::TaskEnd end{.launch_id = outcome.task_id,
              .exit_code = outcome.exit_code,
              .message = outcome.message,
              .time = outcome.finished_at};
  switch (outcome.end) {
    case agent::TaskEnd::kSucceeded:
      end.phase = TaskPhase::kSucceeded;
      break;
    case agent::TaskEnd::kFailed:
      end.phase = TaskPhase::kFailed;
      end.reason = "Error";
      break;
    case agent::TaskEnd::kKilled:
      end.phase = TaskPhase::kFailed;
      end.reason = "Killed";
      break;
    case agent::TaskEnd::kCancelled:
      end.phase = TaskPhase::kCancelled;
      break;
    case agent::TaskEnd::kTimeLimitExceeded:
      end.phase = TaskPhase::kFailed;
      end.reason = "TimeLimitExceeded";
      break;
    case agent::TaskEnd::kStartFailed:
      end.phase = TaskPhase::kFailed;
      end.reason = "StartFailed";
      break;
    case agent::TaskEnd::kLost:
      end.phase = TaskPhase::kFailed;
      end.reason = "LostOnRestart";
      break;
  }
  return end;
}

std::string JobOfLaunch(std::string_view launch_id) {
  return std::string(launch_id.substr(0, launch_id.find('-')));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Create(LocalClusterOptions options,
                                                                   TaskObserver* observer) {
  options.labels[std::string(kClusterLabel)] = options.name;
  options.inventory.cluster = options.name;
  absl::StatusOr<Node> node = agent::DiscoverLocalNode(options.inventory);
  if (!node.ok()) return node.status();
  for (const auto& [key, value] : options.labels) node->labels[key] = value;
  auto cluster = std::unique_ptr<LocalCluster>(
      new LocalCluster(std::move(options), *std::move(node), observer));
  LocalCluster* self = cluster.get();
  absl::StatusOr<std::unique_ptr<agent::LocalExecutor>> executor =
      agent::LocalExecutor::Create({
          .log_dir = self->options_.task_dir,
          .clock = self->options_.clock,
          .on_outcome = [self](const agent::TaskOutcome& outcome) { self->OnOutcome(outcome); },
          .supervisor = self->options_.supervisor,
      });
  if (!executor.ok()) return executor.status();
  cluster->executor_ = *std::move(executor);
  return cluster;
}

LocalCluster::LocalCluster(LocalClusterOptions options, Node node, TaskObserver* observer)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : agent::SystemClock::Get()),
      node_(std::move(node)),
      observer_(observer),
      cpu_meter_(static_cast<int32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))) {}

LocalCluster::~LocalCluster() = default;

std::string LocalCluster::SupervisorBesideBinary() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  const std::filesystem::path supervisor = self.parent_path() / "tessera-task-supervisor";
  return std::filesystem::exists(supervisor, error) ? supervisor.string() : "";
}

std::vector<NodeUsage> LocalCluster::Usage() const {
  NodeUsage usage{.node = node_.name};
  {
    std::lock_guard<std::mutex> lock(usage_mu_);
    usage.cpu = cpu_meter_.Sample();
  }
  if (absl::StatusOr<int64_t> memory = agent::ReadMemoryUsed(); memory.ok()) {
    usage.memory = *memory;
  }
  return {usage};
}

void LocalCluster::OnOutcome(const agent::TaskOutcome& outcome) {
  observer_->OnTaskEnded(ToTaskEnd(outcome));
}

absl::StatusOr<std::vector<int32_t>> LocalCluster::JobPorts(const std::string& job_id,
                                                            int count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = job_ports_.find(job_id);
  if (it != job_ports_.end() && static_cast<int>(it->second.size()) == count) return it->second;
  absl::StatusOr<std::vector<int32_t>> ports = agent::PickFreePorts(count);
  if (!ports.ok()) return ports.status();
  job_ports_[job_id] = *ports;
  return ports;
}

void LocalCluster::Launch(const TaskLaunchSpec& spec) {
  agent::TaskLaunch launch{
      .task_id = spec.launch_id,
      .command = spec.command,
      .args = spec.args,
      .env = spec.env,
      .working_dir = spec.working_dir,
      .gpus = {spec.placement.gpus.begin(), spec.placement.gpus.end()},
      .time_limit = spec.time_limit,
      .termination_grace = spec.termination_grace,
  };
  if (spec.peer_nodes.size() > 1) {
    absl::StatusOr<std::vector<int32_t>> ports =
        JobPorts(spec.job_id, static_cast<int>(spec.peer_nodes.size()));
    if (!ports.ok()) {
      observer_->OnTaskEnded({.launch_id = spec.launch_id,
                              .phase = TaskPhase::kFailed,
                              .reason = "StartFailed",
                              .message = std::string(ports.status().message())});
      return;
    }
    agent::DistributedTask distributed{.index = spec.rank};
    for (int32_t port : *ports) distributed.tasks.push_back({.address = "127.0.0.1", .port = port});
    launch.distributed = std::move(distributed);
  }
  absl::StatusOr<agent::StartedTask> started = executor_->Start(launch);
  if (!started.ok()) {
    observer_->OnTaskEnded({.launch_id = spec.launch_id,
                            .phase = TaskPhase::kFailed,
                            .reason = "StartFailed",
                            .message = std::string(started.status().message())});
    return;
  }
  // A task that could not start has its outcome delivered by the executor.
  if (started->pid > 0) observer_->OnTaskStarted(spec.launch_id, clock_.Now());
}

void LocalCluster::Cancel(std::string_view launch_id, Duration grace) {
  // NotFound: the task is unknown here (never launched, or forgotten); nothing to stop.
  executor_->Cancel(launch_id, grace).IgnoreError();
}

std::vector<std::string> LocalCluster::Recover(const std::vector<KnownLaunch>& known) {
  // Records on disk the executor does not hold yet: after a restart, every one. The outcome of
  // an adopted task that ended meanwhile arrives through OnOutcome.
  std::set<std::string, std::less<>> adopted;
  if (absl::StatusOr<agent::AdoptReport> report = executor_->Adopt(); report.ok()) {
    for (const agent::AdoptedTask& task : report->tasks) adopted.insert(task.task_id);
  }
  std::set<std::string, std::less<>> known_ids;
  std::vector<std::string> running;
  for (const KnownLaunch& launch : known) {
    const std::string& id = launch.spec.launch_id;
    known_ids.insert(id);
    if (executor_->Pid(id).has_value()) {
      running.push_back(id);
    } else if (std::optional<agent::TaskOutcome> outcome = executor_->Outcome(id)) {
      // Held from before this call (an agent that stayed up while the control plane was
      // away): its end may not have been heard, so it is told again.
      if (!adopted.contains(id)) observer_->OnTaskEnded(ToTaskEnd(*outcome));
    } else if (!options_.supervisor.empty()) {
      // No record: the task did not run. Under the supervisor a program starts only once its
      // record is written (the executor's start gate), so it is launched now.
      Launch(launch.spec);
      running.push_back(id);
    } else {
      // Without the supervisor it may have started in the instant before a crash: reported
      // lost rather than risk running it twice.
      observer_->OnTaskEnded({.launch_id = id,
                              .phase = TaskPhase::kFailed,
                              .reason = "LostOnRestart",
                              .message = "the task has no record on this node after a restart",
                              .time = clock_.Now()});
    }
  }
  // Running tasks the control plane does not know (it gave them up while it could not reach
  // this cluster, or lost them) are killed, whether adopted now or held from before.
  for (const std::string& id : executor_->RunningTasks()) {
    if (!known_ids.contains(id)) executor_->Cancel(id, Duration(0)).IgnoreError();
  }
  return running;
}

void LocalCluster::Forget(std::string_view launch_id) {
  executor_->Forget(launch_id).IgnoreError();
  std::lock_guard<std::mutex> lock(mu_);
  job_ports_.erase(JobOfLaunch(launch_id));
}

absl::StatusOr<LogChunk> LocalCluster::ReadLog(std::string_view launch_id, LogStream stream,
                                               int64_t offset, int64_t limit) const {
  const agent::TaskLogs logs = executor_->LogsFor(launch_id);
  const std::string& path = stream == LogStream::kStdout ? logs.stdout_path : logs.stderr_path;
  // Whether the task had ended is read before the file, so a final write is never missed.
  const bool ended = executor_->Outcome(launch_id).has_value() || !executor_->Pid(launch_id);
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(fmt::format("no log for task {}", launch_id));
  file.seekg(0, std::ios::end);
  const int64_t size = file.tellg();
  LogChunk chunk;
  if (offset < size) {
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

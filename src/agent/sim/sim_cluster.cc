#include "agent/sim/sim_cluster.h"

#include <utility>

#include "fmt/format.h"

namespace tessera::agent {

SimCluster::SimCluster(SimClusterOptions options, TaskObserver* observer)
    : options_(std::move(options)), observer_(observer) {
  options_.labels[std::string(kClusterLabel)] = options_.name;
  for (Node& node : options_.nodes) {
    node.cluster = options_.name;
    for (const auto& [key, value] : options_.labels) node.labels[key] = value;
    node.taints.push_back(
        {.key = std::string(kSimulatedTaint), .value = "true", .effect = TaintEffect::kNoSchedule});
  }
  timer_ = std::thread([this] { TimerLoop(); });
}

SimCluster::~SimCluster() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  timer_.join();
}

void SimCluster::Track(const TaskLaunchSpec& spec, TimePoint start) {
  Running running{.node = spec.placement.node,
                  .gpu_milli = spec.placement.gpu_milli *
                               static_cast<int64_t>(spec.placement.gpus.size())};
  if (spec.duration.has_value()) running.end = start + *spec.duration;
  if (spec.time_limit.has_value() &&
      (!running.end.has_value() || start + *spec.time_limit < *running.end)) {
    running.end = start + *spec.time_limit;
    running.time_limit = true;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (running.end.has_value()) due_.emplace(*running.end, spec.launch_id);
  running_[spec.launch_id] = running;
  wake_.notify_all();
}

std::vector<NodeUsage> SimCluster::Usage() const {
  std::map<std::string, int64_t, std::less<>> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, running] : running_) held[running.node] += running.gpu_milli;
  }
  std::vector<NodeUsage> usage;
  usage.reserve(options_.nodes.size());
  for (const Node& node : options_.nodes) {
    NodeUsage& out = usage.emplace_back(NodeUsage{.node = node.name});
    if (node.capacity.gpu <= 0) continue;
    auto it = held.find(node.name);
    const int64_t busy = it == held.end() ? 0 : it->second;
    out.gpu_utilization.assign(node.gpus.size(), 100.0 * static_cast<double>(busy) /
                                                     static_cast<double>(node.capacity.gpu));
  }
  return usage;
}

void SimCluster::Launch(const TaskLaunchSpec& spec) {
  const TimePoint now = options_.clock->Now();
  Track(spec, now);
  observer_->OnTaskStarted(spec.launch_id, now);
}

void SimCluster::Cancel(std::string_view launch_id, Duration grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = running_.find(launch_id);
    if (it == running_.end()) return;
    if (it->second.end.has_value()) due_.erase({*it->second.end, it->first});
    running_.erase(it);
  }
  observer_->OnTaskEnded({.launch_id = std::string(launch_id),
                          .phase = TaskPhase::kCancelled,
                          .message = "cancelled",
                          .time = options_.clock->Now()});
}

std::vector<std::string> SimCluster::Recover(const std::vector<KnownLaunch>& known) {
  std::vector<std::string> running;
  for (const KnownLaunch& launch : known) {
    Track(launch.spec, launch.start_time.value_or(options_.clock->Now()));
    running.push_back(launch.spec.launch_id);
  }
  wake_.notify_all();  // tasks already due end on the timer thread
  return running;
}

absl::StatusOr<LogChunk> SimCluster::ReadLog(std::string_view launch_id, LogStream stream,
                                             int64_t offset, int64_t limit) const {
  return absl::FailedPreconditionError(
      fmt::format("task {} ran on a simulated node: simulated tasks have no logs", launch_id));
}

void SimCluster::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const TimePoint now = options_.clock->Now();
    std::vector<TaskEnd> ended;
    while (!due_.empty() && due_.begin()->first <= now) {
      const auto [end, launch_id] = *due_.begin();
      due_.erase(due_.begin());
      auto it = running_.find(launch_id);
      const bool time_limit = it->second.time_limit;
      running_.erase(it);
      ended.push_back({.launch_id = launch_id,
                       .phase = time_limit ? TaskPhase::kFailed : TaskPhase::kSucceeded,
                       .reason = time_limit ? "TimeLimitExceeded" : "",
                       .message = time_limit ? "ran past its time limit" : "completed",
                       .time = end});
    }
    if (!ended.empty()) {
      lock.unlock();
      for (const TaskEnd& end : ended) observer_->OnTaskEnded(end);
      lock.lock();
      continue;
    }
    Duration wait = options_.tick;
    if (!due_.empty()) wait = std::min(wait, due_.begin()->first - now);
    wake_.wait_for(lock, wait);
  }
}

}  // namespace tessera::agent

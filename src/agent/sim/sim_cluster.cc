#include "agent/sim/sim_cluster.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"

namespace tessera::agent {

SimCluster::SimCluster(SimClusterOptions options, TaskObserver* observer)
    : options_(std::move(options)), observer_(observer) {
  options_.labels[std::string(kClusterLabel)] = options_.name;
  for (Node& node : options_.nodes) {
    node.cluster = options_.name;
    for (const auto& [key, value] : options_.labels) node.labels[key] = value;
    if (!options_.simulated_taint) continue;
    node.taints.push_back(
        {.key = std::string(kSimulatedTaint), .value = "true", .effect = TaintEffect::kNoSchedule});
  }
  if (options_.timers == nullptr) timer_ = std::thread([this] { TimerLoop(); });
}

SimCluster::~SimCluster() {
  std::set<TimerId> armed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    armed.swap(armed_);
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
  for (TimerId id : armed) options_.timers->Cancel(id);  // no lock held: a firing one returns
}

void SimCluster::Track(const TaskLaunchSpec& spec, TimePoint start) {
  Running running{.node = spec.placement.node,
                  .gpus = {spec.placement.gpus.begin(), spec.placement.gpus.end()},
                  .gpu_milli = spec.placement.gpu_milli *
                               static_cast<int64_t>(spec.placement.gpus.size())};
  std::optional<TimePoint> end;
  Outcome outcome = Outcome::kSucceeded;
  if (spec.duration.has_value()) {
    end = start + *spec.duration;
    if (options_.fails && options_.fails(spec)) outcome = Outcome::kFailed;
  }
  if (spec.time_limit.has_value()) running.limit = start + *spec.time_limit;
  if (running.limit.has_value() && (!end.has_value() || *running.limit < *end)) {
    end = running.limit;
    if (options_.exit_after_grace) *end += spec.termination_grace;  // SIGTERM at the limit
    outcome = Outcome::kTimeLimit;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Running& tracked = running_[spec.launch_id] = std::move(running);
  if (end.has_value()) ScheduleLocked(spec.launch_id, tracked, *end, outcome);
}

void SimCluster::ScheduleLocked(const std::string& launch_id, Running& running, TimePoint end,
                                Outcome outcome) {
  if (running.end.has_value()) due_.erase({*running.end, launch_id});
  running.end = end;
  running.outcome = outcome;
  due_.emplace(end, launch_id);
  if (options_.timers == nullptr) {
    wake_.notify_all();
    return;
  }
  // The callback reads its own id under mu_, which is held until the id is stored.
  auto id = std::make_shared<TimerId>(0);
  *id = options_.timers->Arm(end, [this, id, launch_id, end] { TimerFired(*id, launch_id, end); });
  armed_.insert(*id);
}

std::optional<TaskEnd> SimCluster::EndLocked(const std::string& launch_id, TimePoint end) {
  if (due_.erase({end, launch_id}) == 0) return std::nullopt;  // gone, or its end moved
  auto it = running_.find(launch_id);
  const Outcome outcome = it->second.outcome;
  running_.erase(it);
  TaskEnd ended{.launch_id = launch_id, .time = end};
  switch (outcome) {
    case Outcome::kSucceeded:
      ended.phase = TaskPhase::kSucceeded;
      ended.message = "completed";
      break;
    case Outcome::kFailed:
      ended.phase = TaskPhase::kFailed;
      ended.exit_code = 1;
      ended.reason = "Error";
      ended.message = "exited with code 1";
      break;
    case Outcome::kTimeLimit:
      ended.phase = TaskPhase::kFailed;
      ended.reason = "TimeLimitExceeded";
      ended.message = "ran past its time limit";
      break;
    case Outcome::kCancelled:
      ended.phase = TaskPhase::kCancelled;
      ended.message = "cancelled";
      break;
  }
  return ended;
}

void SimCluster::TimerFired(TimerId id, const std::string& launch_id, TimePoint end) {
  std::optional<TaskEnd> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (armed_.erase(id) == 0) return;  // the destructor cancels it
    ended = EndLocked(launch_id, end);
  }
  if (ended.has_value()) observer_->OnTaskEnded(*ended);
}

std::vector<Node> SimCluster::Inventory() const {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.nodes;
}

absl::Status SimCluster::ChangeNode(Node node, bool lose, std::optional<int32_t> lost_gpu) {
  std::vector<TaskEnd> lost;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto known = std::find_if(options_.nodes.begin(), options_.nodes.end(),
                              [&](const Node& n) { return n.name == node.name; });
    if (known == options_.nodes.end()) {
      return absl::NotFoundError(absl::StrCat("cluster ", options_.name, " has no node ", node.name));
    }
    *known = node;
    for (auto it = running_.begin(); lose && it != running_.end();) {
      const Running& running = it->second;
      const bool hit = running.node == node.name &&
                       (!lost_gpu || std::find(running.gpus.begin(), running.gpus.end(),
                                               *lost_gpu) != running.gpus.end());
      if (!hit) {
        ++it;
        continue;
      }
      if (running.end.has_value()) due_.erase({*running.end, it->first});
      lost.push_back({.launch_id = it->first,
                      .phase = TaskPhase::kFailed,
                      .reason = "Lost",
                      .message = absl::StrCat("node ", node.name, " failed"),
                      .time = options_.clock->Now()});
      it = running_.erase(it);
    }
  }
  if (options_.inventory_observer != nullptr) {
    options_.inventory_observer->OnNodesChanged(*this, {std::move(node)});
  }
  for (const TaskEnd& end : lost) observer_->OnTaskEnded(end);
  return absl::OkStatus();
}

std::vector<NodeUsage> SimCluster::Usage() const {
  std::map<std::string, int64_t, std::less<>> held;
  std::vector<Node> nodes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, running] : running_) held[running.node] += running.gpu_milli;
    nodes = options_.nodes;
  }
  std::vector<NodeUsage> usage;
  usage.reserve(nodes.size());
  for (const Node& node : nodes) {
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
  // Started first: a task due at once may end on the timer thread as soon as it is tracked.
  observer_->OnTaskStarted(spec.launch_id, now);
  Track(spec, now);
}

void SimCluster::Cancel(std::string_view launch_id, Duration grace) {
  const TimePoint now = options_.clock->Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = running_.find(launch_id);
    if (it == running_.end()) return;
    if (options_.exit_after_grace && grace > Duration::zero()) {
      Running& task = it->second;
      // A second signal, or one after the time limit's, keeps the first deadline.
      if (task.cancelled || (task.limit.has_value() && *task.limit <= now)) return;
      task.cancelled = true;
      const TimePoint exit = now + grace;
      const bool limit_inside = task.limit.has_value() && *task.limit < exit;
      ScheduleLocked(it->first, task, exit,
                     limit_inside ? Outcome::kTimeLimit : Outcome::kCancelled);
      return;
    }
    if (it->second.end.has_value()) due_.erase({*it->second.end, it->first});
    running_.erase(it);
  }
  observer_->OnTaskEnded({.launch_id = std::string(launch_id),
                          .phase = TaskPhase::kCancelled,
                          .message = "cancelled",
                          .time = now});
}

std::vector<std::string> SimCluster::Recover(const std::vector<KnownLaunch>& known) {
  std::vector<std::string> running;
  for (const KnownLaunch& launch : known) {
    Track(launch.spec, launch.start_time.value_or(options_.clock->Now()));
    running.push_back(launch.spec.launch_id);
  }
  wake_.notify_all();  // tasks already due end on the timer thread (or the timers' next firing)
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
      ended.push_back(*EndLocked(launch_id, end));
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

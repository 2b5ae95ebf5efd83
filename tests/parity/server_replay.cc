#include "tests/parity/server_replay.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "agent/sim/sim_cluster.h"
#include "fmt/format.h"
#include "server/job_manager.h"
#include "sim/scenario/scenario_workload.h"
#include "store/sqlite/sqlite_store.h"
#include "tessera/common/simulated_clock.h"

namespace tessera::parity {
namespace {

const server::Caller kCaller{.tenant = "parity", .admin = true};
// A run that has not reached `until` after this many instants is stopped: an error.
constexpr int64_t kMaxInstants = 1'000'000;

TimePoint At(Duration d) { return TimePoint{} + d; }

// What falls due at one instant of the scenario: cancels and submissions, in file order.
struct Due {
  std::vector<const sim::ScenarioEvent*> node_events;  // in file order
  std::vector<std::string> cancels;  // job names
  std::vector<const sim::ScenarioJob*> submissions;
};

class Replay {
 public:
  explicit Replay(const sim::Scenario& scenario) : scenario_(scenario) {}
  ~Replay() {
    if (manager_) manager_->Stop();
    clusters_.clear();
    manager_.reset();
  }

  absl::Status Start(const std::string& data_dir);
  absl::Status Run(TimePoint until);
  absl::StatusOr<DecisionLogs> Logs();

 private:
  // Handles what is due now (the cycles are held), then lets one cycle run and waits.
  absl::Status Step(const Due* due);
  // Changes the node on its SimCluster as the runner does (its tasks lost when it goes down,
  // is removed, or the GPU they use turns unhealthy).
  absl::Status ApplyNodeEvent(const sim::ScenarioEvent& event);
  bool Fails(const TaskLaunchSpec& spec) {
    std::lock_guard<std::mutex> lock(mu_);
    return failing_.contains(spec.job_id);
  }

  const sim::Scenario& scenario_;
  SimulatedClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<server::JobManager> manager_;
  std::vector<std::unique_ptr<agent::SimCluster>> clusters_;
  std::map<std::string, agent::SimCluster*> cluster_of_;  // node name → its cluster
  std::map<TimePoint, Due> due_;
  std::map<std::string, std::string> ids_;  // job name → server id
  std::set<std::string> cancel_on_arrival_;  // jobs cancelled before their submission
  std::mutex mu_;
  std::set<std::string> failing_;  // server ids of `outcome: fail` jobs
};

absl::Status Replay::Start(const std::string& data_dir) {
  for (const sim::ScenarioEvent& event : scenario_.events) {
    switch (event.action) {
      case sim::EventAction::kCancel:
        due_[At(event.at)].cancels.push_back(event.job);
        break;
      default:
        due_[At(event.at)].node_events.push_back(&event);
    }
  }
  for (const sim::ScenarioJob& job : scenario_.jobs) due_[At(job.at)].submissions.push_back(&job);

  absl::StatusOr<std::unique_ptr<store::SqliteStore>> store = store::SqliteStore::Open(
      {.data_dir = data_dir, .sync = store::SqliteStoreOptions::Sync::kNormal});
  if (!store.ok()) return store.status();
  store_ = *std::move(store);
  std::optional<std::vector<QueueSpec>> queues;
  if (!scenario_.queues.empty()) {
    queues.emplace();
    for (const sim::ScenarioQueue& q : scenario_.queues) queues->push_back(q.spec);
  }
  absl::StatusOr<std::unique_ptr<server::JobManager>> manager =
      server::JobManager::Create({.store = store_.get(),
                                  .clock = &clock_,
                                  .timers = &clock_,
                                  .profile = scenario_.config.profile,
                                  .policy = scenario_.config.policy,
                                  .queues = std::move(queues),
                                  .seed = scenario_.config.seed,
                                  // No periodic cycle within a scenario (1000h): as the
                                  // runner's, cycles follow events and the Scheduler's
                                  // wake-ups.
                                  .cycle_interval = std::chrono::hours(1000),
                                  .requeue_backoff = scenario_.config.requeue_backoff,
                                  .target_workload = sim::ScenarioWorkload(scenario_)});
  if (!manager.ok()) return manager.status();
  manager_ = *std::move(manager);

  std::map<std::string, std::vector<Node>> by_cluster;  // in name order, nodes in file order
  for (const sim::ScenarioNode& sn : scenario_.nodes) {
    Node node = sn.node;
    node.condition =
        sn.state == sim::InitialNodeState::kDown ? NodeCondition::kDown : NodeCondition::kReady;
    node.unschedulable = sn.state == sim::InitialNodeState::kCordoned;
    by_cluster[node.cluster].push_back(std::move(node));
  }
  std::vector<Cluster*> clusters;
  for (auto& [name, nodes] : by_cluster) {
    agent::SimClusterOptions options{.name = name.empty() ? "sim" : name,
                                     .nodes = std::move(nodes),
                                     .clock = &clock_,
                                     .timers = &clock_,
                                     .simulated_taint = false,
                                     .exit_after_grace = true,
                                     .fails = [this](const TaskLaunchSpec& s) { return Fails(s); }};
    for (const sim::ScenarioCluster& c : scenario_.clusters) {
      if (c.name == name) options.labels = {c.labels.begin(), c.labels.end()};
    }
    options.inventory_observer = manager_.get();
    std::vector<std::string> names;
    for (const Node& node : options.nodes) names.push_back(node.name);
    clusters_.push_back(std::make_unique<agent::SimCluster>(std::move(options), manager_.get()));
    clusters.push_back(clusters_.back().get());
    for (const std::string& node : names) cluster_of_[node] = clusters_.back().get();
  }
  return manager_->Start(clusters);
}

absl::Status Replay::ApplyNodeEvent(const sim::ScenarioEvent& event) {
  agent::SimCluster& cluster = *cluster_of_.at(event.node);
  if (event.action == sim::EventAction::kDrain || event.action == sim::EventAction::kUncordon) {
    // A drain is the control plane's (an admin's `tessera node drain`); an uncordon ends it
    // there, and the backend's own cordon below.
    const server::NodeAction action = event.action == sim::EventAction::kDrain
                                          ? server::NodeAction::kDrain
                                          : server::NodeAction::kUncordon;
    absl::StatusOr<server::NodeView> changed = manager_->ChangeNode(
        kCaller, {.cluster = cluster.name(), .node = event.node, .action = action});
    if (!changed.ok()) return changed.status();
    if (event.action == sim::EventAction::kDrain) return absl::OkStatus();
  }
  std::optional<Node> node;
  for (Node& n : cluster.Inventory()) {
    if (n.name == event.node) node = std::move(n);
  }
  if (!node || node->removed) return absl::OkStatus();  // the runner ignores it too
  bool lose = false;
  std::optional<int32_t> lost_gpu;
  switch (event.action) {
    case sim::EventAction::kDown:
      node->condition = NodeCondition::kDown;
      lose = true;
      break;
    case sim::EventAction::kUp:
      node->condition = NodeCondition::kReady;
      break;
    case sim::EventAction::kCordon:
      node->unschedulable = true;
      break;
    case sim::EventAction::kUncordon:
      node->unschedulable = false;
      break;
    case sim::EventAction::kRemove:
      node->removed = true;
      lose = true;
      break;
    case sim::EventAction::kGpuUnhealthy:
      node->gpus.at(event.gpu).healthy = false;
      lose = true;
      lost_gpu = event.gpu;
      break;
    case sim::EventAction::kGpuHealthy:
      node->gpus.at(event.gpu).healthy = true;
      break;
    case sim::EventAction::kTaint:  // replaces a taint of the same key and effect, as the runner
      std::erase_if(node->taints, [&](const Taint& t) {
        return t.key == event.taint.key && t.effect == event.taint.effect;
      });
      node->taints.push_back(event.taint);
      break;
    case sim::EventAction::kUntaint:
      std::erase_if(node->taints, [&](const Taint& t) {
        return t.key == event.taint.key && (!event.has_effect || t.effect == event.taint.effect);
      });
      break;
    default:
      break;
  }
  return cluster.ChangeNode(*std::move(node), lose, lost_gpu);
}

absl::Status Replay::Step(const Due* due) {
  if (due != nullptr) {
    for (const sim::ScenarioEvent* event : due->node_events) {
      if (absl::Status s = ApplyNodeEvent(*event); !s.ok()) return s;
    }
    for (const std::string& job : due->cancels) {
      auto id = ids_.find(job);
      if (id == ids_.end()) {
        cancel_on_arrival_.insert(job);  // the runner cancels it on arrival
        continue;
      }
      absl::StatusOr<server::JobView> cancelled = manager_->Cancel(kCaller, id->second);
      if (!cancelled.ok()) return cancelled.status();
    }
    if (!due->submissions.empty()) {
      std::vector<spec::JobDocument> docs;
      for (const sim::ScenarioJob* job : due->submissions) {
        spec::JobDocument doc{.spec = job->spec};
        doc.spec.duration = job->duration;
        docs.push_back(std::move(doc));
      }
      absl::StatusOr<server::SubmitBatchResult> results =
          manager_->SubmitBatch(kCaller, std::move(docs));
      if (!results.ok()) return results.status();
      for (size_t i = 0; i < results->size(); ++i) {
        const sim::ScenarioJob& job = *due->submissions[i];
        if (!(*results)[i].ok()) {
          return absl::InvalidArgumentError(fmt::format(
              "{}:{}: job {}: the server refused it: {}", scenario_.file, job.line,
              job.spec.name, std::string((*results)[i].status().message())));
        }
        const std::string& id = (*results)[i]->job.document.metadata.id;
        ids_[job.spec.name] = id;
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (job.fails) failing_.insert(id);
        }
        if (cancel_on_arrival_.contains(job.spec.name)) {
          // Cancelled while Pending, before any cycle (they are held) could place it.
          absl::StatusOr<server::JobView> cancelled = manager_->Cancel(kCaller, id);
          if (!cancelled.ok()) return cancelled.status();
        }
      }
    }
  }
  manager_->WaitIdle();
  manager_->HoldCycles(false);
  manager_->WaitIdle();
  return absl::OkStatus();
}

absl::Status Replay::Run(TimePoint until) {
  for (int64_t instants = 0; instants < kMaxInstants; ++instants) {
    std::optional<TimePoint> next = clock_.NextDue();
    if (!due_.empty() && (!next || due_.begin()->first <= *next)) next = due_.begin()->first;
    if (!next || *next > until) return absl::OkStatus();
    manager_->HoldCycles(true);
    clock_.Set(std::max(*next, clock_.Now()));  // fires the timers due by then
    const auto due = due_.find(clock_.Now());
    absl::Status stepped = Step(due == due_.end() ? nullptr : &due->second);
    if (due != due_.end()) due_.erase(due);
    if (!stepped.ok()) return stepped;
  }
  return absl::DeadlineExceededError(
      fmt::format("{}: the server run was stopped after {} instants", scenario_.file,
                  kMaxInstants));
}

absl::StatusOr<DecisionLogs> Replay::Logs() {
  DecisionLogs logs;
  for (const auto& [name, id] : ids_) {
    absl::StatusOr<std::vector<server::JobEvent>> events = manager_->Events(kCaller, id);
    if (!events.ok()) return events.status();
    logs[name] = FromEvents(*events);
  }
  return logs;
}

}  // namespace

absl::StatusOr<DecisionLogs> ReplayThroughServer(const sim::Scenario& scenario,
                                                 const std::string& data_dir, TimePoint until) {
  Replay replay(scenario);
  if (absl::Status s = replay.Start(data_dir); !s.ok()) return s;
  if (absl::Status s = replay.Run(until); !s.ok()) return s;
  return replay.Logs();
}

}  // namespace tessera::parity

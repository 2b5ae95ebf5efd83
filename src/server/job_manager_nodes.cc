// JobManager: the node lifecycle — cordon, uncordon and drain of a node by an admin, its stored
// administrative state, and the evictions a drain or a NoExecute taint makes (job_manager.h,
// node_admin.h).
#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <utility>

#include "core/duration.h"
#include "fmt/format.h"
#include "server/job_manager.h"
#include "server/job_manager_internal.h"
#include "spec/request_error.h"

namespace tessera::server {

absl::StatusOr<NodeView> JobManager::ChangeNode(const Caller& caller, const NodeChange& change) {
  if (!caller.admin) {
    return absl::PermissionDeniedError("only admins may cordon, uncordon or drain nodes");
  }
  if (!Ready()) return absl::UnavailableError("the control plane is starting");
  if (absl::Status s = CheckNodeChange(change); !s.ok()) return s;
  NodeChange bounded = change;
  bounded.reason = BoundText(change.reason, kMaxNodeReasonBytes);
  auto answer = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> stored = answer->get_future();
  Post(NodeChangeRequested{std::move(bounded), caller.tenant,
                           [answer](absl::Status s) { answer->set_value(std::move(s)); }});
  if (stored.wait_for(kQueueWait) != std::future_status::ready) {
    return absl::UnavailableError(
        fmt::format("node {}/{}: the change was not stored in time; read the nodes", change.cluster,
                    change.node));
  }
  if (absl::Status s = stored.get(); !s.ok()) return s;
  for (NodeView& view : Nodes()) {
    if (view.cluster == change.cluster && view.name == change.node) return std::move(view);
  }
  return absl::NotFoundError(
      fmt::format("node {}/{} left the inventory meanwhile", change.cluster, change.node));
}

void JobManager::Handle(NodeChangeRequested& event) {
  const NodeChange& change = event.change;
  bool cluster_known = false;
  {
    std::lock_guard<std::mutex> lock(clusters_mu_);
    for (const Cluster* cluster : clusters_) cluster_known |= cluster->name() == change.cluster;
  }
  if (!cluster_known) {
    return event.done(spec::WithField(
        absl::NotFoundError(fmt::format("cluster: no cluster named \"{}\"", change.cluster)),
        "cluster"));
  }
  NodeAdmin record;
  NodeAdminState before = NodeAdminState::kReady;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    const std::optional<int32_t> index = state_.FindNode(change.node);
    if (!index || state_.node(*index).removed || state_.node(*index).cluster != change.cluster) {
      return event.done(spec::WithField(
          absl::NotFoundError(fmt::format("node: cluster {} has no node named \"{}\"",
                                          change.cluster, change.node)),
          "node"));
    }
    const std::string key = NodeAdminKey(change.cluster, change.node);
    auto it = node_admin_.find(key);
    if (it == node_admin_.end() &&
        NextAdminState(NodeAdminState::kReady, change.action) == NodeAdminState::kReady) {
      return event.done(absl::OkStatus());  // never changed, and an uncordon changes nothing
    }
    if (it == node_admin_.end()) {
      it = node_admin_.emplace(key, NodeAdminEntry{}).first;
      it->second.record.cluster = change.cluster;
      it->second.record.node = change.node;
      it->second.backend_unschedulable = state_.node(*index).unschedulable;
    }
    NodeAdminEntry& entry = it->second;
    before = entry.record.state;
    ApplyNodeAction(entry.record, change.action, change.reason, change.grace, event.by,
                    options_.clock->Now());
    state_.MutableNode(*index).unschedulable =
        entry.backend_unschedulable || OutOfService(entry.record.state);
    record = entry.record;
  }
  if (before != record.state) {
    fmt::print(stderr, "tessera: node {}/{}: {} -> {} by {}{}\n", record.cluster, record.node,
               NodeAdminStateName(before), NodeAdminStateName(record.state), record.by,
               record.reason.empty() ? "" : ": " + record.reason);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (record.state == NodeAdminState::kDraining) EvictFromNodeLocked(record);
  PersistNodeAdminLocked(record, [done = std::move(event.done)] { done(absl::OkStatus()); });
}

void JobManager::EvictFromNodeLocked(const NodeAdmin& admin) {
  std::set<int64_t> candidates;  // jobs with a task placed and not ended
  for (const auto& [launch, launched] : launches_) candidates.insert(launched.job);
  for (int64_t id : candidates) {
    JobRecord& record = jobs_.at(id);
    if (IsTerminal(record.status().phase)) continue;
    int32_t here = 0;
    for (const TaskRuntime& task : record.tasks) {
      if (IsActive(task) && task.cluster == admin.cluster && task.placement.node == admin.node) {
        ++here;
      }
    }
    if (here == 0) continue;
    if (record.preemption == control::Eviction::kDrain) {
      record.eviction_grace = admin.grace;  // evicted before a restart: the same grace
      continue;
    }
    if (Stopping(record)) continue;  // a cancel or a preemption tears it down already
    const Duration grace = admin.grace.value_or(record.document.spec.termination_grace);
    EvictLocked(record, control::Eviction::kDrain, admin.grace, "NodeDrained",
                fmt::format("node {}/{} is drained{}: {} of its {} task(s) run there; every task "
                            "gets {} to exit, then the job waits again",
                            admin.cluster, admin.node,
                            admin.reason.empty() ? "" : " (" + admin.reason + ")", here,
                            record.tasks.size(), FormatDuration(grace)));
  }
}

namespace {

// Taints of Kubernetes' node lifecycle controller, which pods tolerate for 300 s by default
// (DefaultTolerationSeconds) and which Kubernetes acts on itself.
bool LeftToTheBackend(const Taint& taint) {
  return taint.key == "node.kubernetes.io/not-ready" ||
         taint.key == "node.kubernetes.io/unreachable";
}

std::string DescribeTaint(const Taint& taint) {
  return taint.value.empty() ? fmt::format("{}:NoExecute", taint.key)
                             : fmt::format("{}={}:NoExecute", taint.key, taint.value);
}

}  // namespace

void JobManager::EvictUntoleratedLocked(const Cluster& cluster,
                                        const std::vector<std::string>& nodes) {
  std::map<std::string, std::vector<Taint>, std::less<>> no_execute;  // node → its taints
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    for (const std::string& name : nodes) {
      const std::optional<int32_t> index = state_.FindNode(name);
      if (!index || state_.node(*index).removed) continue;
      for (const Taint& taint : state_.node(*index).taints) {
        if (taint.effect == TaintEffect::kNoExecute && !LeftToTheBackend(taint)) {
          no_execute[name].push_back(taint);
        }
      }
    }
  }
  if (no_execute.empty()) return;
  std::set<int64_t> candidates;  // jobs with a task placed and not ended
  for (const auto& [launch, launched] : launches_) candidates.insert(launched.job);
  for (int64_t id : candidates) {
    JobRecord& record = jobs_.at(id);
    if (IsTerminal(record.status().phase) || Stopping(record)) continue;
    std::optional<std::string> why;
    for (size_t t = 0; t < record.tasks.size() && !why; ++t) {
      const TaskRuntime& task = record.tasks[t];
      if (!IsActive(task) || task.cluster != cluster.name()) continue;
      auto taints = no_execute.find(task.placement.node);
      if (taints == no_execute.end()) continue;
      const std::vector<Toleration>& tolerations =
          GroupOf(record.document.spec, static_cast<int32_t>(t))->request.tolerations;
      for (const Taint& taint : taints->second) {
        if (std::none_of(tolerations.begin(), tolerations.end(),
                         [&](const Toleration& tol) { return tol.Tolerates(taint); })) {
          why = fmt::format("node {}/{} has the taint {}, which task {} does not tolerate",
                            cluster.name(), task.placement.node, DescribeTaint(taint), task.name);
          break;
        }
      }
    }
    if (!why) continue;
    EvictLocked(record, control::Eviction::kTaint, std::nullopt, "NoExecuteTaint",
                fmt::format("{}: every task gets {} to exit, then the job waits again", *why,
                            FormatDuration(record.document.spec.termination_grace)));
  }
}

void JobManager::EvictLocked(JobRecord& record, control::Eviction action,
                             std::optional<Duration> grace, std::string reason,
                             std::string message) {
  record.preemption = action;
  record.eviction_grace = grace;
  std::vector<JobEvent> events;
  AddEvent(record, events, "Evicted", std::move(reason), std::move(message));
  Resolve(record, events);
  record.SyncTaskStatus();
  PersistLocked(record, std::move(events));
}

void JobManager::ResumeDrainsLocked() {
  std::vector<NodeAdmin> draining;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    for (const auto& [key, entry] : node_admin_) {
      if (entry.record.state == NodeAdminState::kDraining) draining.push_back(entry.record);
    }
  }
  for (const NodeAdmin& admin : draining) EvictFromNodeLocked(admin);
}

void JobManager::CompleteDrains() {
  std::lock_guard<std::mutex> lock(mu_);
  std::lock_guard<std::mutex> state_lock(state_mu_);
  std::vector<NodeAdminEntry*> draining;
  for (auto& [key, entry] : node_admin_) {
    if (entry.record.state == NodeAdminState::kDraining) draining.push_back(&entry);
  }
  if (draining.empty()) return;
  std::set<std::pair<std::string_view, std::string_view>> busy;  // (cluster, node)
  std::set<int64_t> candidates;
  for (const auto& [launch, launched] : launches_) candidates.insert(launched.job);
  for (int64_t id : candidates) {
    for (const TaskRuntime& task : jobs_.at(id).tasks) {
      if (IsActive(task)) busy.emplace(task.cluster, task.placement.node);
    }
  }
  for (NodeAdminEntry* entry : draining) {
    NodeAdmin& record = entry->record;
    if (busy.contains({record.cluster, record.node})) continue;
    record.state = NodeAdminState::kDrained;
    record.since = options_.clock->Now();
    record.grace.reset();
    fmt::print(stderr, "tessera: node {}/{}: Draining -> Drained\n", record.cluster, record.node);
    PersistNodeAdminLocked(record);
  }
}

void JobManager::PersistNodeAdminLocked(const NodeAdmin& record, std::function<void()> done) {
  std::vector<store::Op> ops;
  ops.push_back(store::Op::Put(NodeAdminKey(record.cluster, record.node), EncodeNodeAdmin(record)));
  if (!cycle_writes_.Fits(ops)) CommitWritesLocked();
  cycle_writes_.Add(std::move(ops), "", {}, std::move(done));
}

absl::Status JobManager::LoadNodeAdmins() {
  store::RangeRequest request{.prefix = std::string(kNodeAdminPrefix), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = options_.store->Range(request);
    if (!page.ok()) return page.status();
    for (const store::KeyValue& kv : page->kvs) {
      absl::StatusOr<NodeAdmin> record = DecodeNodeAdmin(kv.key, kv.value);
      if (!record.ok()) return record.status();
      std::lock_guard<std::mutex> lock(state_mu_);  // Nodes() may be called already
      node_admin_[kv.key].record = *std::move(record);
    }
    if (!page->more) break;
    request.after = page->kvs.back().key;
  }
  return absl::OkStatus();
}

void JobManager::ApplyNodeAdminLocked(Node& node) {
  auto it = node_admin_.find(NodeAdminKey(node.cluster, node.name));
  if (it == node_admin_.end()) return;
  it->second.backend_unschedulable = node.unschedulable;
  node.unschedulable = node.unschedulable || OutOfService(it->second.record.state);
}

}  // namespace tessera::server

#include "server/agent/agent_clusters.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera::server {

AgentClusters::AgentClusters(AgentClustersOptions options) : options_(std::move(options)) {}

AgentClusters::~AgentClusters() { Stop(); }

RemoteClusterOptions AgentClusters::ClusterOptions(const std::string& name) const {
  return RemoteClusterOptions{.name = name,
                              .heartbeat_interval = options_.heartbeat_interval,
                              .unreachable_timeout = options_.unreachable_timeout,
                              .lost_grace = options_.lost_grace,
                              .log_timeout = options_.log_timeout,
                              .rules = options_.rules,
                              .clock = options_.clock,
                              .store = options_.store,
                              .node_names = options_.node_names,
                              .task_observer = options_.task_observer,
                              .inventory_observer = options_.inventory_observer,
                              .on_established = [this](RemoteCluster* cluster) {
                                options_.attach(cluster);
                              }};
}

absl::Status AgentClusters::Load() {
  absl::StatusOr<std::map<std::string, RemoteClusterRecord>> records =
      RemoteCluster::LoadRecords(*options_.store);
  if (!records.ok()) return records.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, record] : *records) {
    if (record.backend.empty()) {  // nodes without their cluster
      absl::Status removed = RemoteCluster::RemoveRecords(*options_.store, name);
      fmt::print(stderr, "cluster {}: {} stored nodes without their cluster record removed{}\n",
                 name, record.nodes.size(),
                 removed.ok() ? "" : fmt::format(" (failed: {})", std::string(removed.message())));
      continue;
    }
    clusters_.emplace(name,
                      std::make_unique<RemoteCluster>(ClusterOptions(name), std::move(record)));
  }
  return absl::OkStatus();
}

std::vector<Cluster*> AgentClusters::clusters() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Cluster*> out;
  for (const auto& [name, cluster] : clusters_) out.push_back(cluster.get());
  return out;  // all of them stored, so established
}

void AgentClusters::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (monitor_.joinable() || stopping_) return;
  monitor_ = std::thread([this] { MonitorMain(); });
}

void AgentClusters::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> AgentClusters::Attach(
    AgentChannel* channel, const agent::v1::Register& request) {
  if (!IsValidClusterName(request.cluster())) {
    return absl::InvalidArgumentError(fmt::format(
        "register.cluster: \"{}\" is not a cluster name ([a-z0-9][a-z0-9._-]{{0,62}})",
        request.cluster()));
  }
  if (absl::Status s = agent::CheckClusterLabels(request.labels(), "register.labels"); !s.ok()) {
    return s;
  }
  if (options_.reserved_names.contains(request.cluster())) {
    return absl::InvalidArgumentError(fmt::format(
        "register.cluster: \"{}\" is a cluster of the server's config file (clusters:); give "
        "the agent another --cluster name",
        request.cluster()));
  }
  static constexpr std::string_view kBackends[] = {"slurm", "kubernetes", "local", "sim"};
  if (std::find(std::begin(kBackends), std::end(kBackends), request.backend()) ==
      std::end(kBackends)) {
    return absl::InvalidArgumentError(fmt::format(
        "register.backend: must be slurm, kubernetes, local or sim, not \"{}\"",
        request.backend()));
  }
  RemoteCluster* cluster = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = clusters_.find(request.cluster());
    if (it == clusters_.end()) {
      it = clusters_
               .emplace(request.cluster(),
                        std::make_unique<RemoteCluster>(ClusterOptions(request.cluster()),
                                                        RemoteClusterRecord{}))
               .first;
    }
    cluster = it->second.get();
  }
  absl::StatusOr<uint64_t> epoch = cluster->Attach(channel, request);
  if (!epoch.ok()) return epoch.status();
  return std::make_pair(cluster, *epoch);
}

absl::Status AgentClusters::Delete(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clusters_.find(name);
  if (it == clusters_.end()) {
    return absl::NotFoundError(fmt::format("no agent ever registered cluster {}", name));
  }
  const absl::Status deleted = it->second->Delete();
  if (absl::IsFailedPrecondition(deleted)) return deleted;  // its agent is connected
  // Deleted, even when the store refused the write (the stale record comes back at restart).
  deleted_.push_back(std::move(it->second));
  clusters_.erase(it);
  return deleted;
}

uint64_t AgentClusters::node_updates() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [name, cluster] : clusters_) total += cluster->node_updates();
  return total;
}

void AgentClusters::MonitorMain() {
  const Duration period = std::max(Duration(5), options_.heartbeat_interval / 50);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::vector<RemoteCluster*> clusters;
    for (const auto& [name, cluster] : clusters_) clusters.push_back(cluster.get());
    lock.unlock();
    for (RemoteCluster* cluster : clusters) cluster->CheckLiveness();
    lock.lock();
    wake_.wait_for(lock, period, [this] { return stopping_; });
  }
}

}  // namespace tessera::server

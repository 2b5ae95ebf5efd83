#include "server/agent/remote_cluster.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "fmt/format.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "nlohmann/json.hpp"

namespace tessera::server {
namespace {

namespace v1 = agent::v1;

constexpr std::string_view kClustersPrefix = "/tessera/clusters/";
constexpr size_t kOpsPerTxn = 5000;  // at most; and never more than the store's limits allow

std::string ClusterKey(std::string_view cluster) {
  return fmt::format("{}{}", kClustersPrefix, cluster);
}
std::string NodeKey(std::string_view cluster, std::string_view node) {
  return fmt::format("{}{}/nodes/{}", kClustersPrefix, cluster, node);
}

std::string NodeJson(const v1::Node& node) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(node, &out);
  return out;
}

std::string ClusterRecordJson(std::string_view backend, const Labels& labels, uint64_t epoch,
                              bool reachable) {
  nlohmann::json labels_json = nlohmann::json::object();
  for (const auto& [key, value] : labels) labels_json[key] = value;
  return nlohmann::json{
      {"backend", backend}, {"epoch", epoch}, {"labels", labels_json}, {"reachable", reachable}}
      .dump();
}

// The part of `node` that makes its record largest, as a field under `field`.
std::string LargestPart(const v1::Node& node, std::string_view field) {
  size_t labels = 0;
  for (const auto& [key, value] : node.labels()) labels += key.size() + value.size();
  size_t taints = 0;
  for (const v1::Taint& taint : node.taints()) {
    taints += taint.key().size() + taint.value().size() + taint.effect().size();
  }
  size_t gpus = 0;
  for (const v1::GpuDevice& gpu : node.gpus()) gpus += gpu.model().size() + 32;
  const std::pair<const char*, size_t> parts[] = {
      {"labels", labels}, {"taints", taints}, {"gpus", gpus}, {"pool", node.pool().size()}};
  const auto largest = std::max_element(
      parts, std::end(parts), [](const auto& a, const auto& b) { return a.second < b.second; });
  return fmt::format("{}.{}", field, largest->first);
}

// InvalidArgument naming the field when a node of `inventory` could not be stored under
// `limits` (its key, or its record with labels and taints that make it too large).
absl::Status CheckNodeRecords(const v1::Inventory& inventory, std::string_view cluster,
                              const store::TxnLimits& limits) {
  for (int i = 0; i < inventory.nodes_size(); ++i) {
    const v1::Node& node = inventory.nodes(i);
    const std::string field = fmt::format("inventory.nodes[{}]", i);
    if (NodeKey(cluster, node.name()).size() > limits.max_key_bytes) {
      return absl::InvalidArgumentError(fmt::format(
          "{}.name: the node's store key would be longer than the store's limit of {} bytes", field,
          limits.max_key_bytes));
    }
    const size_t bytes = NodeJson(node).size();
    if (bytes > limits.max_value_bytes) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: node \"{}\" is too large to store: its record would take {} bytes, over the "
          "store's limit of {} bytes per value",
          LargestPart(node, field), node.name(), bytes, limits.max_value_bytes));
    }
  }
  return absl::OkStatus();
}

std::string Stale(std::string_view what, uint64_t epoch, uint64_t current) {
  return fmt::format("{}: stale epoch {} (the cluster's session is epoch {})", what, epoch,
                     current);
}

}  // namespace

RemoteCluster::RemoteCluster(RemoteClusterOptions options, RemoteClusterRecord record)
    : options_(std::move(options)),
      backend_(std::move(record.backend)),
      labels_(std::move(record.labels)),
      epoch_(record.epoch),
      established_(!backend_.empty()),
      last_heartbeat_(options_.clock->Now()) {
  labels_[std::string(kClusterLabel)] = options_.name;
  for (v1::Node& proto : record.nodes) {
    absl::StatusOr<Node> node = agent::NodeFromProto(proto, options_.name, labels_, {}, "stored");
    if (!node.ok()) continue;  // stored by this code, so only a newer rule can refuse it
    (void)options_.node_names->Claim(proto.name(), options_.name);
    std::string name = proto.name();
    nodes_.emplace(std::move(name), Reported{std::move(proto), *std::move(node)});
  }
}

absl::StatusOr<std::map<std::string, RemoteClusterRecord>> RemoteCluster::LoadRecords(
    store::Store& store) {
  absl::StatusOr<store::RangeResult> range =
      store.Range({.prefix = std::string(kClustersPrefix)});
  if (!range.ok()) return range.status();
  std::map<std::string, RemoteClusterRecord> records;
  for (const store::KeyValue& kv : range->kvs) {
    std::string_view rest = std::string_view(kv.key).substr(kClustersPrefix.size());
    const size_t slash = rest.find('/');
    const std::string cluster(rest.substr(0, slash));
    RemoteClusterRecord& record = records[cluster];
    if (slash == std::string_view::npos) {
      nlohmann::json j = nlohmann::json::parse(kv.value, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object() || !j["backend"].is_string() || !j["epoch"].is_number_unsigned() ||
          !j["labels"].is_object()) {
        return absl::DataLossError(fmt::format("{}: not a cluster record", kv.key));
      }
      record.backend = j["backend"].get<std::string>();
      record.epoch = j["epoch"].get<uint64_t>();
      for (const auto& [key, value] : j["labels"].items()) {
        if (value.is_string()) record.labels[key] = value.get<std::string>();
      }
      continue;
    }
    v1::Node node;
    if (!google::protobuf::util::JsonStringToMessage(kv.value, &node).ok()) {
      return absl::DataLossError(fmt::format("{}: not a node record", kv.key));
    }
    record.nodes.push_back(std::move(node));
  }
  return records;
}

std::string_view RemoteCluster::backend() const {
  std::lock_guard<std::mutex> lock(mu_);
  return backend_;  // set once, by the first session, before the cluster is attached
}

const Labels& RemoteCluster::labels() const { return labels_; }

bool RemoteCluster::reachable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reachable_;
}

std::vector<Node> RemoteCluster::Inventory() const {
  std::lock_guard<std::mutex> lock(mu_);
  return EffectiveNodesLocked();
}

std::vector<NodeUsage> RemoteCluster::Usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<NodeUsage> out;
  out.reserve(usage_.size());
  for (const auto& [name, measured] : usage_) {
    if (measured.heartbeat == heartbeats_) out.push_back(measured.usage);
  }
  return out;
}

uint64_t RemoteCluster::node_updates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return node_updates_;
}

Node RemoteCluster::EffectiveLocked(const Reported& reported) const {
  Node node = reported.node;
  if (!reachable_) node.condition = NodeCondition::kDown;
  return node;
}

std::vector<Node> RemoteCluster::EffectiveNodesLocked() const {
  std::vector<Node> out;
  out.reserve(nodes_.size());
  for (const auto& [name, reported] : nodes_) out.push_back(EffectiveLocked(reported));
  return out;
}

void RemoteCluster::Launch(const TaskLaunchSpec& spec) {
  std::unique_lock<std::mutex> lock(mu_);
  if (deleted_) {
    lock.unlock();
    EndLost({spec.launch_id}, fmt::format("cluster {} was deleted", options_.name));
    return;
  }
  Launched& launched = launches_[spec.launch_id];
  launched.spec = spec;
  if (session_ && session_->resynced) {
    v1::ServerMessage message;
    *message.mutable_bind() = agent::BindFromLaunch(spec, session_->epoch);
    session_->channel->Send(std::move(message));
    launched.sent = true;
  }
}

void RemoteCluster::Cancel(std::string_view launch_id, Duration grace) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = launches_.find(launch_id);
  if (it == launches_.end()) return;
  if (!it->second.sent) {
    // Never reached the agent: it ends here.
    launches_.erase(it);
    lock.unlock();
    options_.task_observer->OnTaskEnded(TaskEnd{.launch_id = std::string(launch_id),
                                                .phase = TaskPhase::kCancelled,
                                                .time = options_.clock->Now()});
    return;
  }
  it->second.cancel_grace = grace;
  if (session_ && session_->resynced) SendCancelLocked(launch_id, grace);
}

void RemoteCluster::SendCancelLocked(std::string_view launch_id, Duration grace) {
  v1::ServerMessage message;
  v1::Cancel* cancel = message.mutable_cancel();
  cancel->set_epoch(session_->epoch);
  cancel->set_launch_id(std::string(launch_id));
  cancel->set_grace_ms(grace.count());
  session_->channel->Send(std::move(message));
}

std::vector<std::string> RemoteCluster::Recover(const std::vector<KnownLaunch>& known) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> kept;
  for (const KnownLaunch& launch : known) {
    Launched& launched = launches_[launch.spec.launch_id];
    launched.spec = launch.spec;
    launched.start_time = launch.start_time;
    launched.sent = true;  // it was sent before the restart: the next resync settles it
    kept.push_back(launch.spec.launch_id);
  }
  return kept;
}

void RemoteCluster::Forget(std::string_view launch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = launches_.find(launch_id); it != launches_.end()) launches_.erase(it);
}

absl::StatusOr<LogChunk> RemoteCluster::ReadLog(std::string_view launch_id, LogStream stream,
                                                int64_t offset, int64_t limit) const {
  if (offset < 0) return absl::InvalidArgumentError("offset: must be >= 0");
  if (limit <= 0) return absl::InvalidArgumentError("limit: must be > 0");
  limit = std::min(limit, agent::kMaxLogChunkBytes);
  std::unique_lock<std::mutex> lock(mu_);
  if (!session_) {
    return absl::UnavailableError(fmt::format(
        "cluster {} runs behind an agent and no agent is connected: its logs cannot be read now",
        options_.name));
  }
  if (!reachable_) {
    return absl::UnavailableError(fmt::format(
        "cluster {} is unreachable (its agent is silent): its logs cannot be read now",
        options_.name));
  }
  const uint64_t id = ++last_log_request_;
  pending_logs_.emplace(id, PendingLog{.epoch = session_->epoch, .offset = offset, .limit = limit});
  v1::ServerMessage message;
  *message.mutable_log_request() =
      agent::LogRequestMessage(session_->epoch, id, launch_id, stream, offset, limit);
  session_->channel->Send(std::move(message));
  const bool answered = log_answered_.wait_for(lock, options_.log_timeout, [&] {
    return pending_logs_.at(id).result.has_value();
  });
  auto pending = pending_logs_.extract(id);
  if (!answered) {
    return absl::DeadlineExceededError(fmt::format(
        "cluster {}: its agent did not answer the request for task {}'s log within {} ms",
        options_.name, launch_id, options_.log_timeout.count()));
  }
  return *std::move(pending.mapped().result);
}

void RemoteCluster::FailPendingLogsLocked(uint64_t epoch, std::string_view why) const {
  bool woke = false;
  for (auto& [id, pending] : pending_logs_) {
    if (pending.epoch != epoch || pending.result) continue;
    pending.result = absl::UnavailableError(
        fmt::format("cluster {}: {} before it answered the log request", options_.name, why));
    woke = true;
  }
  if (woke) log_answered_.notify_all();
}

absl::Status RemoteCluster::OnLogChunk(uint64_t epoch, const v1::LogChunk& chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status s = CheckEpochLocked(chunk.epoch(), "logChunk"); !s.ok()) return s;
  if (absl::Status s = CheckEpochLocked(epoch, "logChunk"); !s.ok()) return s;
  auto it = pending_logs_.find(chunk.request_id());
  // Not waited for (any more): the ReadLog timed out, or the id was never asked of this session.
  if (it == pending_logs_.end() || it->second.epoch != epoch || it->second.result) {
    return absl::OkStatus();
  }
  absl::Status valid = agent::CheckLogChunk(chunk, it->second.offset, it->second.limit);
  if (valid.ok()) {
    it->second.result = agent::LogChunkFromProto(chunk);
  } else {
    it->second.result = absl::InternalError(fmt::format(
        "cluster {}: its agent answered the log request badly: {}", options_.name,
        std::string(valid.message())));
  }
  lock.unlock();
  log_answered_.notify_all();
  return valid;
}

absl::Status RemoteCluster::CheckEpochLocked(uint64_t epoch, std::string_view what) const {
  if (!session_ || session_->epoch != epoch) {
    return absl::FailedPreconditionError(Stale(what, epoch, epoch_));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RemoteCluster::Attach(AgentChannel* channel,
                                               const v1::Register& request) {
  std::unique_lock<std::mutex> lock(mu_);
  if (deleted_) {
    return absl::UnavailableError(fmt::format(
        "cluster {} was deleted meanwhile: reconnect to register it anew", options_.name));
  }
  if (established_ && request.backend() != backend_) {
    return absl::InvalidArgumentError(fmt::format(
        "register.backend: cluster {} is a {} cluster, not {}", options_.name, backend_,
        request.backend()));
  }
  Labels labels;
  for (const auto& [key, value] : request.labels()) labels[key] = value;
  labels[std::string(kClusterLabel)] = options_.name;
  if (!established_) {
    const size_t bytes =
        ClusterRecordJson(request.backend(), labels, std::numeric_limits<uint64_t>::max(), true)
            .size();
    if (bytes > options_.store->limits().max_value_bytes) {
      return absl::InvalidArgumentError(fmt::format(
          "register.labels: {} labels make the cluster's record {} bytes, over the store's "
          "limit of {} bytes per value",
          request.labels_size(), bytes, options_.store->limits().max_value_bytes));
    }
  }
  if (session_) {
    session_->channel->Close(absl::FailedPreconditionError(fmt::format(
        "the session of epoch {} was superseded by a new session", session_->epoch)));
    FailPendingLogsLocked(session_->epoch, "the agent's session was superseded");
  }
  if (!established_) {  // the registration that establishes it names the backend and labels
    backend_ = request.backend();
    labels_ = std::move(labels);
  } else if (labels != labels_) {
    Log("the agent's labels differ from those the cluster was established with; the cluster "
        "keeps its own (delete the cluster to change them)");
  }
  ++epoch_;
  session_ = Session{.channel = channel, .epoch = epoch_};
  if (absl::Status s = PersistClusterLocked(); !s.ok()) {
    session_.reset();
    return s;
  }
  Log(fmt::format("agent registered ({} backend, epoch {})", backend_, epoch_));
  return epoch_;
}

void RemoteCluster::Detach(uint64_t epoch) {
  std::unique_lock<std::mutex> lock(mu_);
  FailPendingLogsLocked(epoch, "the agent's session ended");
  if (!session_ || session_->epoch != epoch) return;
  session_.reset();
  std::vector<Node> notify =
      MarkUnreachableLocked(fmt::format("the agent's session (epoch {}) ended", epoch));
  lock.unlock();
  if (!notify.empty()) options_.inventory_observer->OnNodesChanged(*this, std::move(notify));
}

absl::Status RemoteCluster::OnInventory(uint64_t epoch, const v1::Inventory& inventory) {
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status s = CheckEpochLocked(inventory.epoch(), "inventory"); !s.ok()) return s;
  if (absl::Status s = CheckEpochLocked(epoch, "inventory"); !s.ok()) return s;
  Session& session = *session_;
  if (!session.inventory_received && !inventory.full()) {
    return absl::InvalidArgumentError("inventory.full: a session's first inventory must be full");
  }
  if (inventory.more() && !inventory.full()) {
    return absl::InvalidArgumentError("inventory.more: only a full inventory is split");
  }
  if (session.partial && !inventory.full()) {
    return absl::InvalidArgumentError(
        "inventory.full: a delta came before the last part of a split full inventory");
  }
  if (inventory.more() || session.partial) {
    if (!session.partial) session.partial.emplace();
    session.partial->mutable_nodes()->MergeFrom(inventory.nodes());
    if (inventory.more()) return absl::OkStatus();
    v1::Inventory whole = *std::move(session.partial);
    session.partial.reset();
    whole.set_epoch(inventory.epoch());
    whole.set_full(true);
    lock.unlock();
    return OnInventory(epoch, whole);
  }
  absl::StatusOr<std::vector<Node>> nodes =
      agent::InventoryFromProto(inventory, options_.name, labels_, options_.rules);
  if (!nodes.ok()) return nodes.status();
  if (absl::Status s = CheckNodeRecords(inventory, options_.name, options_.store->limits());
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < inventory.nodes_size(); ++i) {
    absl::Status claimed = options_.node_names->Claim(inventory.nodes(i).name(), options_.name);
    if (!claimed.ok()) {
      ReleaseNewNamesLocked(inventory, i);
      return absl::InvalidArgumentError(
          fmt::format("inventory.nodes[{}].name: {}", i, std::string(claimed.message())));
    }
  }
  // A new cluster is stored whole before anything of it is kept or announced.
  const bool establishes = !established_;
  if (establishes) {
    if (absl::Status s = EstablishLocked(inventory); !s.ok()) {
      ReleaseNewNamesLocked(inventory, inventory.nodes_size());
      return s;
    }
  }
  // Names leaving: those missing from a full inventory, or removed by id.
  std::vector<std::string> removed;
  if (inventory.full()) {
    std::set<std::string_view> present;
    for (const v1::Node& node : inventory.nodes()) present.insert(node.name());
    for (const auto& [name, reported] : nodes_) {
      if (!present.contains(name)) removed.push_back(name);
    }
    session.node_by_id.clear();
  } else {
    for (uint32_t id : inventory.removed()) {
      if (id >= session.node_by_id.size() || session.node_by_id[id].empty()) {
        return absl::InvalidArgumentError(
            fmt::format("inventory.removed: node id {} is unknown to this session", id));
      }
      removed.push_back(session.node_by_id[id]);
      session.node_by_id[id].clear();
    }
  }
  std::vector<v1::Node> changed;
  std::vector<Node> notify;
  for (int i = 0; i < inventory.nodes_size(); ++i) {
    const v1::Node& proto = inventory.nodes(i);
    if (proto.id() >= session.node_by_id.size()) session.node_by_id.resize(proto.id() + 1);
    session.node_by_id[proto.id()] = proto.name();
    auto it = nodes_.find(proto.name());
    const bool same = it != nodes_.end() &&
                      google::protobuf::util::MessageDifferencer::Equals(it->second.proto, proto);
    if (same) continue;
    changed.push_back(proto);
    Reported reported{proto, (*nodes)[i]};
    notify.push_back(reported.node);
    nodes_.insert_or_assign(proto.name(), std::move(reported));
  }
  std::vector<std::string> lost_with_nodes;
  for (const std::string& name : removed) {
    for (auto launch = launches_.begin(); launch != launches_.end();) {
      if (launch->second.spec.placement.node != name) {
        ++launch;
        continue;
      }
      if (launch->second.sent && session.resynced) SendCancelLocked(launch->first, Duration(0));
      lost_with_nodes.push_back(launch->first);
      launch = launches_.erase(launch);
    }
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    Node gone = it->second.node;
    gone.removed = true;
    gone.condition = NodeCondition::kDown;
    notify.push_back(std::move(gone));
    usage_.erase(name);
    nodes_.erase(it);
    options_.node_names->Release(name, options_.name);
  }
  const bool first = !session.inventory_received;
  session.inventory_received = true;
  if (first) {
    last_heartbeat_ = options_.clock->Now();
    if (!reachable_) {
      reachable_ = true;
      Log("reachable again");
      notify = EffectiveNodesLocked();
      for (const std::string& name : removed) {
        Node gone;
        gone.name = name;
        gone.cluster = options_.name;
        gone.removed = true;
        gone.condition = NodeCondition::kDown;
        notify.push_back(std::move(gone));
      }
    }
    v1::ServerMessage message;
    v1::Resync* resync = message.mutable_resync();
    resync->set_epoch(session.epoch);
    for (const auto& [id, launched] : launches_) {
      if (!launched.sent) continue;
      v1::Bind* bind = resync->add_launches();
      *bind = agent::BindFromLaunch(launched.spec, session.epoch);
      if (launched.start_time) bind->set_start_time_ms(agent::ToMillis(*launched.start_time));
    }
    session.channel->Send(std::move(message));
  }
  lock.unlock();
  // A new cluster's nodes are stored already (EstablishLocked).
  const absl::Status persisted = establishes ? absl::OkStatus() : PersistNodes(changed, removed);
  if (establishes && options_.on_established) options_.on_established(this);
  if (!notify.empty()) options_.inventory_observer->OnNodesChanged(*this, std::move(notify));
  EndLost(lost_with_nodes, "its node left the cluster's inventory");
  return persisted;
}

absl::Status RemoteCluster::OnHeartbeat(uint64_t epoch, const v1::Heartbeat& heartbeat) {
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status s = CheckEpochLocked(heartbeat.epoch(), "heartbeat"); !s.ok()) return s;
  if (absl::Status s = CheckEpochLocked(epoch, "heartbeat"); !s.ok()) return s;
  const int n = heartbeat.node_id_size();
  const auto column_ok = [n](int size) { return size == 0 || size == n; };
  if (!column_ok(heartbeat.cpu_size()) || !column_ok(heartbeat.memory_size()) ||
      !column_ok(heartbeat.gpu_utilization_size()) || !column_ok(heartbeat.power_watts_size())) {
    return absl::InvalidArgumentError(fmt::format(
        "heartbeat: every usage column must have one entry per node id ({}) or none", n));
  }
  const std::vector<std::string>& names = session_->node_by_id;
  for (int i = 0; i < n; ++i) {
    const uint32_t id = heartbeat.node_id(i);
    if (id >= names.size() || names[id].empty()) {
      return absl::InvalidArgumentError(
          fmt::format("heartbeat.nodeId[{}]: node id {} is not in the inventory", i, id));
    }
  }
  ++heartbeats_;
  for (int i = 0; i < n; ++i) {
    const std::string& name = names[heartbeat.node_id(i)];
    Measured& measured = usage_[name];
    measured.heartbeat = heartbeats_;
    NodeUsage& usage = measured.usage;
    if (usage.node.empty()) usage.node = name;
    usage.cpu = heartbeat.cpu_size() > 0 ? std::optional(heartbeat.cpu(i)) : std::nullopt;
    usage.memory = heartbeat.memory_size() > 0 ? std::optional(heartbeat.memory(i)) : std::nullopt;
    usage.gpu_utilization.clear();
    if (heartbeat.gpu_utilization_size() > 0) {
      usage.gpu_utilization.push_back(heartbeat.gpu_utilization(i));
    }
    usage.power_watts = heartbeat.power_watts_size() > 0
                            ? std::optional<double>(heartbeat.power_watts(i))
                            : std::nullopt;
  }
  node_updates_ += n;
  last_heartbeat_ = options_.clock->Now();
  if (reachable_ || !session_->inventory_received) return absl::OkStatus();
  reachable_ = true;
  Log("reachable again");
  std::vector<Node> notify = EffectiveNodesLocked();
  absl::Status persisted = PersistClusterLocked();
  lock.unlock();
  options_.inventory_observer->OnNodesChanged(*this, std::move(notify));
  return persisted;
}

absl::Status RemoteCluster::OnTaskUpdate(uint64_t epoch, const v1::TaskUpdate& update) {
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status s = CheckEpochLocked(update.epoch(), "task"); !s.ok()) return s;
  if (absl::Status s = CheckEpochLocked(epoch, "task"); !s.ok()) return s;
  auto it = launches_.find(update.launch_id());
  if (it == launches_.end()) return absl::OkStatus();  // already ended here (lost, cancelled)
  if (update.state() == v1::TaskUpdate::STARTED) {
    const TimePoint time = agent::FromMillis(update.time_ms());
    it->second.start_time = time;
    lock.unlock();
    options_.task_observer->OnTaskStarted(update.launch_id(), time);
    return absl::OkStatus();
  }
  absl::StatusOr<TaskEnd> end = agent::EndFromUpdate(update);
  if (!end.ok()) return end.status();
  launches_.erase(it);
  lock.unlock();
  options_.task_observer->OnTaskEnded(*end);
  return absl::OkStatus();
}

absl::Status RemoteCluster::OnResyncReport(uint64_t epoch, const v1::ResyncReport& report) {
  std::unique_lock<std::mutex> lock(mu_);
  if (absl::Status s = CheckEpochLocked(report.epoch(), "resyncReport"); !s.ok()) return s;
  if (absl::Status s = CheckEpochLocked(epoch, "resyncReport"); !s.ok()) return s;
  if (session_->resynced) {
    return absl::InvalidArgumentError("resyncReport: the session has already resynced");
  }
  std::set<std::string_view> running(report.running().begin(), report.running().end());
  std::vector<std::string> lost;
  for (const auto& [id, launched] : launches_) {
    if (launched.sent && !running.contains(id)) lost.push_back(id);
  }
  for (const std::string& id : lost) launches_.erase(id);
  session_->resynced = true;
  SendPendingLocked();
  lock.unlock();
  EndLost(lost, "its agent did not report it running after reconnecting");
  return absl::OkStatus();
}

void RemoteCluster::SendPendingLocked() {
  for (auto& [id, launched] : launches_) {
    if (launched.sent && launched.cancel_grace) SendCancelLocked(id, *launched.cancel_grace);
    if (launched.sent) continue;
    v1::ServerMessage message;
    *message.mutable_bind() = agent::BindFromLaunch(launched.spec, session_->epoch);
    session_->channel->Send(std::move(message));
    launched.sent = true;
  }
}

void RemoteCluster::CheckLiveness() {
  std::unique_lock<std::mutex> lock(mu_);
  const TimePoint now = options_.clock->Now();
  const Duration silent = std::chrono::duration_cast<Duration>(now - last_heartbeat_);
  std::vector<Node> notify;
  if (silent >= options_.unreachable_timeout) {
    notify = MarkUnreachableLocked(fmt::format("no heartbeat for {} ms", silent.count()));
    // A silent agent will not answer either: its pending log reads end now, not at their timeout.
    if (session_) FailPendingLogsLocked(session_->epoch, "the agent went silent (unreachable)");
  }
  std::vector<std::string> lost;
  if (!reachable_ && silent >= options_.unreachable_timeout + options_.lost_grace) {
    for (const auto& [id, launched] : launches_) lost.push_back(id);
    launches_.clear();
  }
  lock.unlock();
  if (!notify.empty()) options_.inventory_observer->OnNodesChanged(*this, std::move(notify));
  EndLost(lost, fmt::format("no heartbeat from cluster {} for {} ms", options_.name,
                            silent.count()));
}

void RemoteCluster::Log(std::string_view line) const {
  fmt::print(stderr, "cluster {}: {}\n", options_.name, line);
}

void RemoteCluster::EndLost(const std::vector<std::string>& launch_ids,
                            const std::string& message) {
  if (!launch_ids.empty()) Log(fmt::format("{} task(s) lost: {}", launch_ids.size(), message));
  const TimePoint now = options_.clock->Now();
  for (const std::string& id : launch_ids) {
    options_.task_observer->OnTaskEnded(TaskEnd{.launch_id = id,
                                                .phase = TaskPhase::kFailed,
                                                .reason = "Lost",
                                                .message = message,
                                                .time = now});
  }
}

absl::Status RemoteCluster::Delete() {
  std::unique_lock<std::mutex> lock(mu_);
  if (session_) {
    return absl::FailedPreconditionError(fmt::format(
        "cluster {}: its agent is connected (session epoch {}): stop the agent first",
        options_.name, session_->epoch));
  }
  deleted_ = true;
  std::vector<Node> removed;
  for (const auto& [name, reported] : nodes_) {
    Node gone = EffectiveLocked(reported);
    gone.removed = true;
    removed.push_back(std::move(gone));
    options_.node_names->Release(name, options_.name);
  }
  std::vector<std::string> lost;
  for (const auto& [id, launched] : launches_) lost.push_back(id);
  nodes_.clear();
  usage_.clear();
  launches_.clear();
  lock.unlock();
  const absl::Status deleted = RemoveRecords(*options_.store, options_.name);
  Log(deleted.ok() ? "deleted" : fmt::format("deleted, but its records were not all removed: {}",
                                             std::string(deleted.message())));
  if (!removed.empty()) options_.inventory_observer->OnNodesChanged(*this, std::move(removed));
  EndLost(lost, fmt::format("cluster {} was deleted", options_.name));
  return deleted;
}

absl::Status RemoteCluster::RemoveRecords(store::Store& store, std::string_view name) {
  return store
      .Commit(store::Txn::Unconditional({store::Op::Delete(ClusterKey(name)),
                                         store::Op::DeletePrefix(ClusterKey(name) + "/")}))
      .status();
}

std::vector<Node> RemoteCluster::MarkUnreachableLocked(std::string_view why) {
  if (!reachable_) return {};
  reachable_ = false;
  Log(fmt::format("unreachable: {}; its nodes are NotReady, and its tasks are lost if no "
                  "heartbeat comes for {} ms in all",
                  why, (options_.unreachable_timeout + options_.lost_grace).count()));
  (void)PersistClusterLocked();  // a failed write only loses the stored flag, never read back
  return EffectiveNodesLocked();
}

absl::Status RemoteCluster::PersistClusterLocked() {
  if (!established_) return absl::OkStatus();  // nothing is stored before the first inventory
  absl::StatusOr<store::TxnResult> result =
      options_.store->Commit(store::Txn::Unconditional({store::Op::Put(
          ClusterKey(options_.name), ClusterRecordJson(backend_, labels_, epoch_, reachable_))}));
  return result.status();
}

absl::Status RemoteCluster::PersistNodes(const std::vector<v1::Node>& changed,
                                         const std::vector<std::string>& removed) {
  std::vector<store::Op> ops;
  for (const v1::Node& node : changed) {
    ops.push_back(store::Op::Put(NodeKey(options_.name, node.name()), NodeJson(node)));
  }
  for (const std::string& name : removed) {
    ops.push_back(store::Op::Delete(NodeKey(options_.name, name)));
  }
  // Transactions as large as the store takes, in entries and in bytes (one node always fits:
  // CheckNodeRecords).
  const store::TxnLimits limits = options_.store->limits();
  const size_t max_ops = std::min(kOpsPerTxn, limits.max_entries);
  std::vector<store::Op> chunk;
  size_t chunk_bytes = 0;
  for (size_t i = 0; i <= ops.size(); ++i) {
    const size_t bytes = i < ops.size() ? ops[i].key.size() + ops[i].value.size() : 0;
    const bool full = chunk.size() == max_ops || chunk_bytes + bytes > limits.max_total_bytes;
    if (!chunk.empty() && (i == ops.size() || full)) {
      absl::StatusOr<store::TxnResult> result =
          options_.store->Commit(store::Txn::Unconditional(std::exchange(chunk, {})));
      if (!result.ok()) return result.status();
      chunk_bytes = 0;
    }
    if (i == ops.size()) break;
    chunk.push_back(std::move(ops[i]));
    chunk_bytes += bytes;
  }
  return absl::OkStatus();
}

absl::Status RemoteCluster::EstablishLocked(const v1::Inventory& inventory) {
  // Its nodes first, then its record: a cluster record is stored only with all its nodes (nodes
  // without their cluster record are removed at the next start: AgentClusters::Load).
  absl::Status stored = PersistNodes({inventory.nodes().begin(), inventory.nodes().end()}, {});
  if (stored.ok()) {
    established_ = true;
    stored = PersistClusterLocked();
    if (!stored.ok()) established_ = false;
  }
  if (stored.ok()) return stored;
  (void)RemoveRecords(*options_.store, options_.name);  // what was written of it
  Log(fmt::format("not registered: its inventory could not be stored: {}",
                  std::string(stored.message())));
  return absl::Status(
      stored.code(),
      fmt::format("cluster {} is not registered: its inventory of {} nodes could "
                  "not be stored ({}); nothing of it was kept",
                  options_.name, inventory.nodes_size(), absl::StatusCodeToString(stored.code())));
}

void RemoteCluster::ReleaseNewNamesLocked(const v1::Inventory& inventory, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string& name = inventory.nodes(i).name();
    if (!nodes_.contains(name)) options_.node_names->Release(name, options_.name);
  }
}

}  // namespace tessera::server

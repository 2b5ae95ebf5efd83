#include "agent/protocol/agent_protocol.h"

#include <limits>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::optional<TaintEffect> ParseEffect(std::string_view text) {
  if (text == "NoSchedule") return TaintEffect::kNoSchedule;
  if (text == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (text == "NoExecute") return TaintEffect::kNoExecute;
  return std::nullopt;
}

absl::Status Fault(std::string_view field, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, message));
}

absl::Status CheckQuantity(std::string_view field, int64_t value) {
  if (value < 0) return Fault(field, fmt::format("must be >= 0, not {}", value));
  return absl::OkStatus();
}

absl::Status CheckGpu(const v1::GpuDevice& gpu, int index, const InventoryRules& rules,
                      std::string_view field) {
  if (gpu.index() != index) {
    return Fault(fmt::format("{}.index", field),
                 fmt::format("must be {} (devices are listed in index order), not {}", index,
                             gpu.index()));
  }
  if (!IsValidName(gpu.model())) {
    return Fault(fmt::format("{}.model", field),
                 fmt::format("\"{}\" is not a model name ([A-Za-z0-9][A-Za-z0-9._-]*)",
                             gpu.model()));
  }
  if (!rules.known_gpu_models.empty() && !rules.known_gpu_models.contains(gpu.model())) {
    return Fault(fmt::format("{}.model", field),
                 fmt::format("unknown GPU model \"{}\" (the control plane knows {} models)",
                             gpu.model(), rules.known_gpu_models.size()));
  }
  return CheckQuantity(fmt::format("{}.memory", field), gpu.memory());
}

absl::Status CheckNode(const v1::Node& proto, const InventoryRules& rules,
                       std::string_view field) {
  if (!IsValidName(proto.name())) {
    return Fault(fmt::format("{}.name", field),
                 fmt::format("\"{}\" is not a node name ([A-Za-z0-9][A-Za-z0-9._-]*)",
                             proto.name()));
  }
  const std::pair<const char*, int64_t> quantities[] = {
      {"cpu", proto.cpu()},
      {"memory", proto.memory()},
      {"allocatableCpu", proto.allocatable_cpu()},
      {"allocatableMemory", proto.allocatable_memory()}};
  for (const auto& [name, value] : quantities) {
    if (absl::Status s = CheckQuantity(fmt::format("{}.{}", field, name), value); !s.ok()) return s;
  }
  if (proto.allocatable_cpu() > proto.cpu()) {
    return Fault(fmt::format("{}.allocatableCpu", field),
                 fmt::format("{} exceeds the capacity {}", proto.allocatable_cpu(), proto.cpu()));
  }
  if (proto.allocatable_memory() > proto.memory()) {
    return Fault(fmt::format("{}.allocatableMemory", field),
                 fmt::format("{} exceeds the capacity {}", proto.allocatable_memory(),
                             proto.memory()));
  }
  if (proto.gpus_size() > kMaxGpusPerNode) {
    return Fault(fmt::format("{}.gpus", field),
                 fmt::format("{} devices, more than the {} a node may have", proto.gpus_size(),
                             kMaxGpusPerNode));
  }
  for (int i = 0; i < proto.gpus_size(); ++i) {
    absl::Status s = CheckGpu(proto.gpus(i), i, rules, fmt::format("{}.gpus[{}]", field, i));
    if (!s.ok()) return s;
  }
  for (int i = 0; i < proto.taints_size(); ++i) {
    const v1::Taint& taint = proto.taints(i);
    if (taint.key().empty()) return Fault(fmt::format("{}.taints[{}].key", field, i), "required");
    if (!ParseEffect(taint.effect())) {
      return Fault(fmt::format("{}.taints[{}].effect", field, i),
                   fmt::format("must be NoSchedule, PreferNoSchedule or NoExecute, not \"{}\"",
                               taint.effect()));
    }
  }
  for (const auto& [key, value] : proto.labels()) {
    if (key.empty()) return Fault(fmt::format("{}.labels", field), "a label key is empty");
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 253 || !NameChar(name[0]) || name[0] == '.' ||
      name[0] == '_' || name[0] == '-') {
    return false;
  }
  for (char c : name) {
    if (!NameChar(c)) return false;
  }
  return true;
}

namespace {

bool LabelName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool LabelPrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > 253) return false;
  for (char c : prefix) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return prefix.front() != '.' && prefix.front() != '-' && prefix.back() != '.' &&
         prefix.back() != '-';
}

}  // namespace

absl::Status CheckClusterLabels(const google::protobuf::Map<std::string, std::string>& labels,
                                std::string_view field) {
  for (const auto& [key, value] : labels) {
    const size_t slash = key.find('/');
    const bool key_ok = slash == std::string::npos
                            ? LabelName(key)
                            : LabelPrefix(std::string_view(key).substr(0, slash)) &&
                                  LabelName(std::string_view(key).substr(slash + 1));
    if (!key_ok) {
      return Fault(field, fmt::format("\"{}\" is not a label key ([prefix/]name)", key));
    }
    if (key == kClusterLabel) {
      return Fault(field, fmt::format("{} is set by the cluster's name", key));
    }
    if (!value.empty() && !LabelName(value)) {
      return Fault(field, fmt::format("{}: \"{}\" is not a label value", key, value));
    }
  }
  return absl::OkStatus();
}

int64_t ToMillis(TimePoint time) { return time.time_since_epoch().count(); }
TimePoint FromMillis(int64_t millis) { return TimePoint(Duration(millis)); }

v1::Node NodeToProto(const Node& node, uint32_t id) {
  v1::Node proto;
  proto.set_id(id);
  proto.set_name(node.name);
  proto.set_pool(node.pool);
  for (const auto& [key, value] : node.labels) (*proto.mutable_labels())[key] = value;
  for (const Taint& taint : node.taints) {
    v1::Taint* out = proto.add_taints();
    out->set_key(taint.key);
    out->set_value(taint.value);
    out->set_effect(std::string(TaintEffectName(taint.effect)));
  }
  proto.set_cpu(node.capacity.cpu);
  proto.set_memory(node.capacity.memory);
  proto.set_allocatable_cpu(node.allocatable.cpu);
  proto.set_allocatable_memory(node.allocatable.memory);
  for (const GpuDevice& gpu : node.gpus) {
    v1::GpuDevice* out = proto.add_gpus();
    out->set_index(gpu.index);
    out->set_model(gpu.model);
    out->set_memory(gpu.memory);
    out->set_healthy(gpu.healthy);
  }
  proto.set_ready(node.condition == NodeCondition::kReady && !node.removed);
  proto.set_unschedulable(node.unschedulable);
  return proto;
}

absl::StatusOr<Node> NodeFromProto(const v1::Node& proto, std::string_view cluster,
                                   const Labels& cluster_labels, const InventoryRules& rules,
                                   std::string_view field) {
  if (absl::Status s = CheckNode(proto, rules, field); !s.ok()) return s;
  Node node;
  node.name = proto.name();
  node.cluster = std::string(cluster);
  node.pool = proto.pool();
  node.labels = cluster_labels;
  for (const auto& [key, value] : proto.labels()) {
    if (key != kClusterLabel) node.labels[key] = value;
  }
  node.labels[std::string(kClusterLabel)] = std::string(cluster);
  for (const v1::Taint& taint : proto.taints()) {
    node.taints.push_back(
        Taint{.key = taint.key(), .value = taint.value(), .effect = *ParseEffect(taint.effect())});
  }
  node.capacity.cpu = proto.cpu();
  node.capacity.memory = proto.memory();
  node.allocatable.cpu = proto.allocatable_cpu();
  node.allocatable.memory = proto.allocatable_memory();
  for (const v1::GpuDevice& gpu : proto.gpus()) {
    node.gpus.push_back(GpuDevice{
        .index = gpu.index(), .model = gpu.model(), .memory = gpu.memory(), .healthy = gpu.healthy()});
  }
  node.capacity.gpu = kMilliGpuPerDevice * static_cast<int64_t>(node.gpus.size());
  node.allocatable.gpu = node.capacity.gpu;
  for (const GpuDevice& gpu : node.gpus) {
    node.capacity.gpu_memory += gpu.memory;
  }
  node.allocatable.gpu_memory = node.capacity.gpu_memory;
  node.condition = proto.ready() ? NodeCondition::kReady : NodeCondition::kDown;
  node.unschedulable = proto.unschedulable();
  return node;
}

absl::StatusOr<std::vector<Node>> InventoryFromProto(const v1::Inventory& inventory,
                                                     std::string_view cluster,
                                                     const Labels& cluster_labels,
                                                     const InventoryRules& rules) {
  std::vector<Node> nodes;
  nodes.reserve(inventory.nodes_size());
  std::set<std::string_view> names;
  std::set<uint32_t> ids;
  for (int i = 0; i < inventory.nodes_size(); ++i) {
    const v1::Node& proto = inventory.nodes(i);
    const std::string field = fmt::format("inventory.nodes[{}]", i);
    if (!names.insert(proto.name()).second) {
      return Fault(field + ".name", fmt::format("duplicate node name \"{}\"", proto.name()));
    }
    if (!ids.insert(proto.id()).second) {
      return Fault(field + ".id", fmt::format("duplicate node id {}", proto.id()));
    }
    absl::StatusOr<Node> node = NodeFromProto(proto, cluster, cluster_labels, rules, field);
    if (!node.ok()) return node.status();
    nodes.push_back(*std::move(node));
  }
  if (inventory.full() && inventory.removed_size() > 0) {
    return Fault("inventory.removed", "a full inventory removes nothing");
  }
  return nodes;
}

v1::Bind BindFromLaunch(const TaskLaunchSpec& spec, uint64_t epoch) {
  v1::Bind bind;
  bind.set_epoch(epoch);
  bind.set_launch_id(spec.launch_id);
  bind.set_job_id(spec.job_id);
  bind.set_task_name(spec.task_name);
  bind.set_node(spec.placement.node);
  for (int32_t device : spec.placement.gpus) bind.add_devices(device);
  bind.set_gpu_milli(spec.placement.gpu_milli);
  bind.set_gpu_memory(spec.placement.gpu_memory);
  bind.set_cpu(spec.cpu);
  bind.set_memory(spec.memory);
  for (const std::string& word : spec.command) bind.add_command(word);
  for (const std::string& word : spec.args) bind.add_args(word);
  for (const auto& [key, value] : spec.env) (*bind.mutable_env())[key] = value;
  bind.set_working_dir(spec.working_dir);
  if (spec.time_limit) bind.set_time_limit_ms(spec.time_limit->count());
  bind.set_termination_grace_ms(spec.termination_grace.count());
  if (spec.duration) bind.set_duration_ms(spec.duration->count());
  for (const std::string& peer : spec.peer_nodes) bind.add_peer_nodes(peer);
  bind.set_rank(spec.rank);
  return bind;
}

absl::StatusOr<TaskLaunchSpec> LaunchFromBind(const v1::Bind& bind) {
  if (!IsValidName(bind.launch_id())) {
    return Fault("bind.launchId", fmt::format("\"{}\" is not a launch id", bind.launch_id()));
  }
  if (!IsValidName(bind.node())) {
    return Fault("bind.node", fmt::format("\"{}\" is not a node name", bind.node()));
  }
  const std::pair<const char*, int64_t> quantities[] = {
      {"bind.gpuMilli", bind.gpu_milli()},
      {"bind.gpuMemory", bind.gpu_memory()},
      {"bind.cpu", bind.cpu()},
      {"bind.memory", bind.memory()},
      {"bind.timeLimitMs", bind.time_limit_ms()},
      {"bind.terminationGraceMs", bind.termination_grace_ms()},
      {"bind.durationMs", bind.duration_ms()}};
  for (const auto& [name, value] : quantities) {
    if (absl::Status s = CheckQuantity(name, value); !s.ok()) return s;
  }
  TaskLaunchSpec spec;
  spec.launch_id = bind.launch_id();
  spec.job_id = bind.job_id();
  spec.task_name = bind.task_name();
  spec.placement.node = bind.node();
  for (int32_t device : bind.devices()) {
    if (device < 0) return Fault("bind.devices", fmt::format("must be >= 0, not {}", device));
    spec.placement.gpus.push_back(device);
  }
  spec.placement.gpu_milli = bind.gpu_milli();
  spec.placement.gpu_memory = bind.gpu_memory();
  spec.cpu = bind.cpu();
  spec.memory = bind.memory();
  spec.command.assign(bind.command().begin(), bind.command().end());
  spec.args.assign(bind.args().begin(), bind.args().end());
  spec.env.insert(bind.env().begin(), bind.env().end());
  spec.working_dir = bind.working_dir();
  if (bind.time_limit_ms() > 0) spec.time_limit = Duration(bind.time_limit_ms());
  spec.termination_grace = Duration(bind.termination_grace_ms());
  if (bind.duration_ms() > 0) spec.duration = Duration(bind.duration_ms());
  spec.peer_nodes = std::vector<std::string>(bind.peer_nodes().begin(), bind.peer_nodes().end());
  spec.rank = bind.rank();
  return spec;
}

v1::TaskUpdate StartedUpdate(std::string_view launch_id, TimePoint time, uint64_t epoch) {
  v1::TaskUpdate update;
  update.set_epoch(epoch);
  update.set_launch_id(std::string(launch_id));
  update.set_state(v1::TaskUpdate::STARTED);
  update.set_time_ms(ToMillis(time));
  return update;
}

v1::TaskUpdate EndedUpdate(const TaskEnd& end, uint64_t epoch) {
  v1::TaskUpdate update;
  update.set_epoch(epoch);
  update.set_launch_id(end.launch_id);
  switch (end.phase) {
    case TaskPhase::kSucceeded:
      update.set_state(v1::TaskUpdate::SUCCEEDED);
      break;
    case TaskPhase::kCancelled:
      update.set_state(v1::TaskUpdate::CANCELLED);
      break;
    default:
      update.set_state(v1::TaskUpdate::FAILED);
      break;
  }
  update.set_time_ms(ToMillis(end.time));
  if (end.exit_code) {
    update.set_has_exit_code(true);
    update.set_exit_code(*end.exit_code);
  }
  update.set_reason(end.reason);
  update.set_message(end.message);
  return update;
}

absl::StatusOr<TaskEnd> EndFromUpdate(const v1::TaskUpdate& update) {
  TaskEnd end;
  switch (update.state()) {
    case v1::TaskUpdate::SUCCEEDED:
      end.phase = TaskPhase::kSucceeded;
      break;
    case v1::TaskUpdate::FAILED:
      end.phase = TaskPhase::kFailed;
      break;
    case v1::TaskUpdate::CANCELLED:
      end.phase = TaskPhase::kCancelled;
      break;
    default:
      return Fault("task.state", fmt::format("{} is not an end", static_cast<int>(update.state())));
  }
  end.launch_id = update.launch_id();
  if (update.has_exit_code()) end.exit_code = update.exit_code();
  end.reason = update.reason();
  end.message = update.message();
  end.time = FromMillis(update.time_ms());
  return end;
}

v1::LogRequest LogRequestMessage(uint64_t epoch, uint64_t request_id, std::string_view launch_id,
                                 LogStream stream, int64_t offset, int64_t limit) {
  v1::LogRequest request;
  request.set_epoch(epoch);
  request.set_request_id(request_id);
  request.set_launch_id(std::string(launch_id));
  request.set_stream(stream == LogStream::kStderr ? v1::LogRequest::STREAM_STDERR
                                                          : v1::LogRequest::STREAM_STDOUT);
  request.set_offset(offset);
  request.set_limit(limit);
  return request;
}

LogStream LogStreamFromProto(v1::LogRequest::Stream stream) {
  return stream == v1::LogRequest::STREAM_STDERR ? LogStream::kStderr
                                                 : LogStream::kStdout;
}

absl::Status CheckLogRequest(const v1::LogRequest& request) {
  if (!IsValidName(request.launch_id())) {
    return Fault("logRequest.launchId",
                 fmt::format("\"{}\" is not a launch id ([A-Za-z0-9][A-Za-z0-9._-]*)",
                             request.launch_id()));
  }
  if (request.stream() != v1::LogRequest::STREAM_STDOUT &&
      request.stream() != v1::LogRequest::STREAM_STDERR) {
    return Fault("logRequest.stream",
                 fmt::format("unknown stream {}", static_cast<int>(request.stream())));
  }
  if (request.offset() < 0) {
    return Fault("logRequest.offset", fmt::format("must be >= 0, not {}", request.offset()));
  }
  if (request.limit() <= 0) {
    return Fault("logRequest.limit", fmt::format("must be > 0, not {}", request.limit()));
  }
  return absl::OkStatus();
}

v1::LogChunk LogChunkToProto(const absl::StatusOr<LogChunk>& result, uint64_t request_id,
                             uint64_t epoch) {
  v1::LogChunk chunk;
  chunk.set_epoch(epoch);
  chunk.set_request_id(request_id);
  if (!result.ok()) {
    chunk.set_error_code(static_cast<int32_t>(result.status().code()));
    chunk.set_error_message(std::string(result.status().message()));
    return chunk;
  }
  chunk.set_data(result->data);
  chunk.set_next_offset(result->next_offset);
  chunk.set_end(result->end);
  return chunk;
}

absl::Status CheckLogChunk(const v1::LogChunk& chunk, int64_t offset, int64_t limit) {
  const int32_t code = chunk.error_code();
  // Canonical codes are 0 (OK) to 16 (UNAUTHENTICATED).
  if (code < 0 || code > static_cast<int32_t>(absl::StatusCode::kUnauthenticated)) {
    return Fault("logChunk.errorCode", fmt::format("{} is not a status code", code));
  }
  const int64_t size = static_cast<int64_t>(chunk.data().size());
  if (code != 0) {
    if (size != 0) return Fault("logChunk.data", "an error carries no data");
    return absl::OkStatus();
  }
  if (size > limit) {
    return Fault("logChunk.data",
                 fmt::format("{} bytes answer a request for at most {}", size, limit));
  }
  if (size > std::numeric_limits<int64_t>::max() - offset || chunk.next_offset() != offset + size) {
    return Fault("logChunk.nextOffset",
                 fmt::format("must be the offset {} + {} bytes, not {}", offset, size,
                             chunk.next_offset()));
  }
  return absl::OkStatus();
}

absl::StatusOr<LogChunk> LogChunkFromProto(const v1::LogChunk& chunk) {
  if (chunk.error_code() != 0) {
    return absl::Status(static_cast<absl::StatusCode>(chunk.error_code()), chunk.error_message());
  }
  return LogChunk{
      .data = chunk.data(), .next_offset = chunk.next_offset(), .end = chunk.end()};
}

}  // namespace tessera::agent

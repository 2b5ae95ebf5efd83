#include "agent/kubernetes/node_conversion.h"

#include <algorithm>
#include <optional>

#include "absl/strings/numbers.h"
#include "agent/kubernetes/watch_event.h"
#include "core/quantity.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
// Device memory above this (1 PiB) is refused, so sums over a node's devices cannot overflow.
constexpr int64_t kMaxGpuMemoryMiB = int64_t{1} << 30;

// One of status.capacity / status.allocatable; nullopt when the object lacks it.
absl::StatusOr<std::optional<Resources>> ResourceList(const Json& status, const char* key,
                                                      const std::string& prefix) {
  const Json* list = Member(status, key);
  if (list == nullptr || list->is_null()) return std::optional<Resources>();
  const std::string path = fmt::format("{}status.{}", prefix, key);
  if (!list->is_object()) return absl::InvalidArgumentError(path + ": must be a map");
  Resources resources;
  for (const auto& [name, value] : list->items()) {
    const std::string field = fmt::format("{}.{}", path, name);
    absl::StatusOr<std::string> text = QuantityText(value, field);
    if (!text.ok()) return text.status();
    absl::StatusOr<int64_t> parsed;
    if (name == "cpu") {
      parsed = ParseCpuMillis(*text, field);
      if (parsed.ok()) resources.cpu = *parsed;
    } else if (name == "memory") {
      parsed = ParseBytes(*text, field);
      if (parsed.ok()) resources.memory = *parsed;
    } else if (name == kGpuResource) {
      parsed = ParseCount(*text, field);
      if (parsed.ok() && *parsed > kMaxGpusPerNode) {
        return absl::InvalidArgumentError(
            fmt::format("{}: more than {} devices", field, kMaxGpusPerNode));
      }
      if (parsed.ok()) resources.gpu = *parsed * kMilliGpuPerDevice;
    } else if (name == "pods") {
      continue;  // a kubelet limit, not a resource tasks request
    } else {
      parsed = ParseCount(*text, field);
      if (parsed.ok() && *parsed > 0) resources.extended[name] = *parsed;
    }
    if (!parsed.ok()) return parsed.status();
  }
  return std::optional<Resources>(std::move(resources));
}

absl::StatusOr<Labels> NodeLabels(const Json& metadata, const std::string& prefix) {
  Labels labels;
  const Json* list = Member(metadata, "labels");
  if (list == nullptr || list->is_null()) return labels;
  if (!list->is_object()) {
    return absl::InvalidArgumentError(prefix + "metadata.labels: must be a map");
  }
  for (const auto& [key, value] : list->items()) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(
          fmt::format("{}metadata.labels.{}: must be a string", prefix, key));
    }
    labels[key] = value.get<std::string>();
  }
  return labels;
}

absl::StatusOr<std::vector<Taint>> Taints(const Json& spec, const std::string& prefix) {
  std::vector<Taint> taints;
  const Json* list = Member(spec, "taints");
  if (list == nullptr || list->is_null()) return taints;
  if (!list->is_array()) return absl::InvalidArgumentError(prefix + "spec.taints: must be a list");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = fmt::format("{}spec.taints[{}]", prefix, i);
    const Json& entry = (*list)[i];
    if (!entry.is_object()) return absl::InvalidArgumentError(path + ": must be a map");
    Taint taint;
    absl::StatusOr<std::string> key = StringOr(entry, "key", path);
    if (!key.ok()) return key.status();
    if (key->empty()) return absl::InvalidArgumentError(path + ".key: must be set");
    absl::StatusOr<std::string> value = StringOr(entry, "value", path);
    if (!value.ok()) return value.status();
    absl::StatusOr<std::string> effect = StringOr(entry, "effect", path);
    if (!effect.ok()) return effect.status();
    taint.key = *key;
    taint.value = *value;
    if (*effect == "NoSchedule") {
      taint.effect = TaintEffect::kNoSchedule;
    } else if (*effect == "PreferNoSchedule") {
      taint.effect = TaintEffect::kPreferNoSchedule;
    } else if (*effect == "NoExecute") {
      taint.effect = TaintEffect::kNoExecute;
    } else {
      return absl::InvalidArgumentError(fmt::format(
          "{}.effect: '{}' is not NoSchedule, PreferNoSchedule or NoExecute", path, *effect));
    }
    taints.push_back(std::move(taint));
  }
  return taints;
}

absl::StatusOr<NodeCondition> Condition(const Json& status, const std::string& prefix) {
  const Json* list = Member(status, "conditions");
  if (list == nullptr || list->is_null()) return NodeCondition::kDown;
  if (!list->is_array()) {
    return absl::InvalidArgumentError(prefix + "status.conditions: must be a list");
  }
  for (const Json& condition : *list) {
    const Json* type = Member(condition, "type");
    if (type == nullptr || *type != "Ready") continue;
    const Json* value = Member(condition, "status");
    return value != nullptr && *value == "True" ? NodeCondition::kReady : NodeCondition::kDown;
  }
  return NodeCondition::kDown;
}

absl::StatusOr<int64_t> GpuMemory(const Labels& labels, const std::string& prefix) {
  auto it = labels.find(kGpuMemoryLabel);
  if (it == labels.end()) return 0;
  int64_t mib = 0;
  if (!absl::SimpleAtoi(it->second, &mib) || mib < 0 || mib > kMaxGpuMemoryMiB) {
    return absl::InvalidArgumentError(
        fmt::format("{}metadata.labels.{}: '{}' is not a whole number of MiB", prefix,
                    kGpuMemoryLabel, it->second.substr(0, 64)));
  }
  return mib * kMiB;
}

std::string Pool(const Labels& labels, const std::string& pool_label) {
  for (std::string_view key : {std::string_view(pool_label), kInstanceTypeLabel}) {
    if (auto it = labels.find(key); it != labels.end()) return it->second;
  }
  return "";
}

// Devices from the capacity count; those beyond the allocatable count are unhealthy.
absl::Status AddGpus(Node& node, const std::string& prefix) {
  absl::StatusOr<int64_t> memory = GpuMemory(node.labels, prefix);
  if (!memory.ok()) return memory.status();
  auto product = node.labels.find(kGpuProductLabel);
  const std::string model = product != node.labels.end() ? product->second : "GPU";
  const int64_t devices = node.capacity.gpu / kMilliGpuPerDevice;
  const int64_t healthy = node.allocatable.gpu / kMilliGpuPerDevice;  // <= devices
  for (int64_t i = 0; i < devices; ++i) {
    node.gpus.push_back({.index = static_cast<int32_t>(i),
                         .model = model,
                         .memory = *memory,
                         .healthy = i < healthy});
  }
  node.capacity.gpu_memory = *memory * devices;
  node.allocatable.gpu_memory = *memory * healthy;
  return absl::OkStatus();
}

absl::StatusOr<Node> Convert(const Json& object, const NodeConversion& conversion) {
  if (!object.is_object()) return absl::InvalidArgumentError("node: not a JSON object");
  const Json* metadata = Member(object, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    return absl::InvalidArgumentError("node: metadata: missing or not a map");
  }
  absl::StatusOr<std::string> name = StringOr(*metadata, "name", "node: metadata");
  if (!name.ok()) return name.status();
  if (name->empty()) return absl::InvalidArgumentError("node: metadata.name: missing");
  const std::string prefix = fmt::format("node \"{}\": ", name->substr(0, 253));

  Node node;
  node.name = *name;
  node.cluster = conversion.cluster;
  absl::StatusOr<Labels> labels = NodeLabels(*metadata, prefix);
  if (!labels.ok()) return labels.status();
  node.labels = *std::move(labels);
  node.pool = Pool(node.labels, conversion.pool_label);
  for (const auto& [key, value] : conversion.cluster_labels) node.labels[key] = value;

  static const Json kEmpty = Json::object();
  const Json* spec = Member(object, "spec");
  if (spec == nullptr || spec->is_null()) spec = &kEmpty;
  if (!spec->is_object()) return absl::InvalidArgumentError(prefix + "spec: must be a map");
  absl::StatusOr<std::vector<Taint>> taints = Taints(*spec, prefix);
  if (!taints.ok()) return taints.status();
  node.taints = *std::move(taints);
  absl::StatusOr<bool> unschedulable = BoolOr(*spec, "unschedulable", false, prefix + "spec");
  if (!unschedulable.ok()) return unschedulable.status();
  node.unschedulable = *unschedulable;

  const Json* status = Member(object, "status");
  if (status == nullptr || status->is_null()) status = &kEmpty;
  if (!status->is_object()) return absl::InvalidArgumentError(prefix + "status: must be a map");
  absl::StatusOr<std::optional<Resources>> capacity = ResourceList(*status, "capacity", prefix);
  if (!capacity.ok()) return capacity.status();
  absl::StatusOr<std::optional<Resources>> allocatable =
      ResourceList(*status, "allocatable", prefix);
  if (!allocatable.ok()) return allocatable.status();
  node.capacity = capacity->value_or(allocatable->value_or(Resources{}));
  node.allocatable = allocatable->value_or(node.capacity);
  node.allocatable.gpu = std::min(node.allocatable.gpu, node.capacity.gpu);
  if (absl::Status added = AddGpus(node, prefix); !added.ok()) return added;
  absl::StatusOr<NodeCondition> condition = Condition(*status, prefix);
  if (!condition.ok()) return condition.status();
  node.condition = *condition;
  return node;
}

}  // namespace

absl::StatusOr<Node> NodeFromJson(const Json& object, const NodeConversion& conversion) {
  try {
    return Convert(object, conversion);
  } catch (const Json::exception& e) {  // a bug guard: the reads above do not throw
    return absl::InvalidArgumentError(fmt::format("node: {}", e.what()));
  }
}

absl::StatusOr<NodeList> ParseNodeList(std::string_view body, const NodeConversion& conversion) {
  absl::StatusOr<ObjectList> list = ParseObjectList(body, "nodes");
  if (!list.ok()) return list.status();
  NodeList out;
  out.resource_version = list->resource_version;
  for (const Json& item : list->items) {
    absl::StatusOr<Node> node = NodeFromJson(item, conversion);
    if (node.ok()) {
      out.nodes.push_back(*std::move(node));
    } else {
      out.errors.emplace_back(std::string(node.status().message()));
    }
  }
  return out;
}

}  // namespace tessera::agent::k8s

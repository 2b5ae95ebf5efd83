#include "agent/kubernetes/node_metrics.h"

#include <set>

#include "core/quantity.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

// usage.<key> of an entry as a quantity text.
absl::StatusOr<std::string> UsageText(const Json& usage, std::string_view key,
                                      const std::string& path) {
  const std::string field = fmt::format("{}.{}", path, key);
  const Json* value = Member(usage, key);
  if (value == nullptr || value->is_null()) {
    return absl::InvalidArgumentError(field + ": missing");
  }
  return QuantityText(*value, field);
}

absl::StatusOr<NodeUsage> Entry(const Json& item, const std::string& path) {
  if (!item.is_object()) return absl::InvalidArgumentError(path + ": must be a map");
  const Json* metadata = Member(item, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    return absl::InvalidArgumentError(path + ".metadata: missing or not a map");
  }
  absl::StatusOr<std::string> name = StringOr(*metadata, "name", path + ".metadata");
  if (!name.ok()) return name.status();
  if (name->empty()) return absl::InvalidArgumentError(path + ".metadata.name: missing");
  const std::string usage_path = path + ".usage";
  const Json* usage = Member(item, "usage");
  if (usage == nullptr || !usage->is_object()) {
    return absl::InvalidArgumentError(usage_path + ": missing or not a map");
  }
  absl::StatusOr<std::string> cpu_text = UsageText(*usage, "cpu", usage_path);
  if (!cpu_text.ok()) return cpu_text.status();
  absl::StatusOr<int64_t> cpu = ParseCpuMillisRoundedUp(*cpu_text, usage_path + ".cpu");
  if (!cpu.ok()) return cpu.status();
  absl::StatusOr<std::string> memory_text = UsageText(*usage, "memory", usage_path);
  if (!memory_text.ok()) return memory_text.status();
  absl::StatusOr<int64_t> memory = ParseBytes(*memory_text, usage_path + ".memory");
  if (!memory.ok()) return memory.status();
  return NodeUsage{.node = *std::move(name), .cpu = *cpu, .memory = *memory};
}

}  // namespace

absl::StatusOr<NodeMetricsList> NodeMetricsFromJson(const Json& list) {
  if (!list.is_object()) return absl::InvalidArgumentError("node metrics list: not a JSON object");
  NodeMetricsList out;
  const Json* items = Member(list, "items");
  if (items == nullptr || items->is_null()) return out;  // an empty list may omit items
  if (!items->is_array()) {
    return absl::InvalidArgumentError("node metrics list: items: must be a list");
  }
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string path = fmt::format("items[{}]", i);
    absl::StatusOr<NodeUsage> usage = Entry((*items)[i], path);
    if (!usage.ok()) {
      out.errors.emplace_back(std::string(usage.status().message()));
    } else if (!seen.insert(usage->node).second) {
      out.errors.push_back(fmt::format("{}.metadata.name: node \"{}\" is listed twice", path,
                                       usage->node.substr(0, 253)));
    } else {
      out.usage.push_back(*std::move(usage));
    }
  }
  return out;
}

std::string NodeMetricsUnavailable(const absl::Status& status) {
  const absl::StatusCode code = status.code();
  std::string_view advice;
  if (code == absl::StatusCode::kNotFound || code == absl::StatusCode::kUnavailable) {
    advice = " (the metrics API needs metrics-server: install it, or check that it runs)";
  } else if (code == absl::StatusCode::kPermissionDenied) {
    advice =
        " (grant get and list on nodes in API group metrics.k8s.io, as "
        "deploy/kubernetes/rbac.yaml does)";
  }
  return fmt::format("node usage is not reported: {}{}; read again until it answers",
                     std::string(status.message()), advice);
}

}  // namespace tessera::agent::k8s

// Feeds arbitrary bytes to the Kubernetes backend's parsers of node data from the API server:
// a NodeList answer (ParseNodeList), a watch line (ParseWatchEvent, then NodeFromJson on its
// object), a metrics API NodeMetricsList (NodeMetricsFromJson) and an error answer (ApiError). Checks: no crash or undefined behaviour; rejections
// are InvalidArgument naming the node or the part that is malformed, with a bounded message;
// converted nodes are consistent (a name, the cluster and its labels, 1000 milli-GPU per
// device, devices indexed 0..n-1 with the allocatable ones healthy, allocatable GPUs within
// capacity, no negative quantity); node usage has a name, cpu and memory >= 0, names are
// unique, and a malformed entry's error names its item.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "agent/kubernetes/api_status.h"
#include "agent/kubernetes/node_conversion.h"
#include "agent/kubernetes/node_metrics.h"
#include "agent/kubernetes/watch_event.h"
#include "fuzz_check.h"

namespace tessera::agent::k8s {
namespace {

using ::tessera::fuzz::Require;

constexpr size_t kMaxMessage = 1200;

const NodeConversion& Conversion() {
  static const NodeConversion* const kConversion =
      new NodeConversion{.cluster = "fuzz", .cluster_labels = {{"tessera.io/cluster", "fuzz"}}};
  return *kConversion;
}

void CheckError(const absl::Status& status, std::string_view input) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "error is InvalidArgument", input);
  const std::string message(status.message());
  Require(message.starts_with("node") || message.starts_with("watch event") ||
              message.starts_with("nodes list"),
          "error names the node or the part", input, message);
  Require(message.size() <= kMaxMessage, "error message is bounded", input, message);
}

void CheckNode(const Node& node, std::string_view input) {
  Require(!node.name.empty(), "node has a name", input);
  Require(node.cluster == "fuzz", "node carries the cluster", input);
  Require(
      node.labels.contains("tessera.io/cluster") && node.labels.at("tessera.io/cluster") == "fuzz",
      "cluster labels are merged over the node's", input);
  Require(node.capacity.gpu == kMilliGpuPerDevice * static_cast<int64_t>(node.gpus.size()),
          "capacity.gpu is 1000 per device", input);
  Require(node.allocatable.gpu <= node.capacity.gpu, "allocatable GPUs within capacity", input);
  int64_t healthy = 0;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    Require(node.gpus[i].index == static_cast<int32_t>(i), "devices are indexed 0..n-1", input);
    Require(node.gpus[i].memory >= 0, "device memory >= 0", input);
    healthy += node.gpus[i].healthy ? 1 : 0;
  }
  Require(healthy * kMilliGpuPerDevice == node.allocatable.gpu,
          "the allocatable devices are the healthy ones", input);
  Require(node.capacity.cpu >= 0 && node.capacity.memory >= 0 && node.allocatable.cpu >= 0 &&
              node.allocatable.memory >= 0 && node.capacity.gpu_memory >= 0,
          "quantities are >= 0", input);
  for (const auto& [name, count] : node.allocatable.extended) {
    Require(count > 0, "extended resources kept are > 0", input);
  }
}

void FuzzNodeList(std::string_view input) {
  absl::StatusOr<NodeList> list = ParseNodeList(input, Conversion());
  if (!list.ok()) return CheckError(list.status(), input);
  for (const Node& node : list->nodes) CheckNode(node, input);
  for (const std::string& error : list->errors) {
    Require(error.starts_with("node"), "list errors name the node", input, error);
  }
}

void FuzzWatchLine(std::string_view input) {
  absl::StatusOr<WatchEvent> event = ParseWatchEvent(input);
  if (!event.ok()) return CheckError(event.status(), input);
  Require(event->object.is_object(), "an event's object is an object", input);
  absl::StatusOr<Node> node = NodeFromJson(event->object, Conversion());
  if (!node.ok()) return CheckError(node.status(), input);
  CheckNode(*node, input);
}

void FuzzNodeMetrics(std::string_view input) {
  const Json json = Json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return;
  absl::StatusOr<NodeMetricsList> list = NodeMetricsFromJson(json);
  if (!list.ok()) {
    Require(list.status().code() == absl::StatusCode::kInvalidArgument, "error is InvalidArgument",
            input);
    Require(std::string(list.status().message()).starts_with("node metrics list: "),
            "error names the list", input);
    return;
  }
  std::set<std::string> names;
  for (const NodeUsage& usage : list->usage) {
    Require(!usage.node.empty(), "usage names its node", input);
    Require(names.insert(usage.node).second, "a node's usage is listed once", input);
    Require(usage.cpu.value_or(-1) >= 0 && usage.memory.value_or(-1) >= 0,
            "cpu and memory are given and >= 0", input);
  }
  for (const std::string& error : list->errors) {
    Require(error.starts_with("items["), "entry errors name the item", input, error);
    Require(error.size() <= kMaxMessage, "error message is bounded", input, error);
  }
}

void FuzzErrorAnswer(std::string_view input) {
  const absl::Status status =
      ApiError("GET /api/v1/nodes", 400 + static_cast<int>(input.size() % 200), input);
  Require(!status.ok(), "an error answer is an error", input);
  Require(std::string(status.message()).size() <= kMaxMessage, "error message is bounded", input);
}

}  // namespace
}  // namespace tessera::agent::k8s

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  tessera::agent::k8s::FuzzNodeList(input);
  tessera::agent::k8s::FuzzWatchLine(input);
  tessera::agent::k8s::FuzzNodeMetrics(input);
  tessera::agent::k8s::FuzzErrorAnswer(input);
  return 0;
}

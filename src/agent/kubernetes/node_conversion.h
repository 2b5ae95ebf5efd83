// NodeFromJson: a Kubernetes Node object (GET /api/v1/nodes) as a core Node.
//
//   Kubernetes                                   core Node
//   metadata.name                                name
//   metadata.labels                              labels, with the cluster's labels merged over
//                                                them (tessera.io/cluster among them)
//   label tessera.io/pool, else                  pool ("" when neither is set)
//     node.kubernetes.io/instance-type
//   spec.taints[] {key, value, effect}           taints (effects NoSchedule, PreferNoSchedule,
//                                                NoExecute)
//   spec.unschedulable (kubectl cordon)          unschedulable
//   status.conditions[type=Ready].status         "True" -> kReady; anything else or missing
//                                                -> kDown
//   status.capacity / status.allocatable         capacity / allocatable (allocatable defaults
//     cpu "8", "500m"                              to capacity): cpu in millicores,
//     memory "64Gi", "1000Ki"                      memory in bytes,
//     nvidia.com/gpu "4"                           gpu = 1000 x count,
//     any other resource but pods                  extended[name] = count
//   nvidia.com/gpu capacity count                gpus[0..n-1]; the first <allocatable count>
//                                                are healthy, the rest (the device plugin's
//                                                unhealthy ones) are not
//   label nvidia.com/gpu.product                 each GpuDevice's model ("GPU" when missing)
//   label nvidia.com/gpu.memory (MiB)            each GpuDevice's memory in bytes (0 when
//                                                missing); capacity.gpu_memory is their sum
// Quantities use Kubernetes notation (core/quantity.h); a number instead of a string is read
// as its decimal text.
//
// Errors: InvalidArgument naming the node and the field ("node \"n1\":
// status.allocatable.cpu: ..."); a malformed object is refused whole, never half-read.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/kubernetes/internal/json_fields.h"
#include "core/node.h"

namespace tessera::agent::k8s {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr std::string_view kGpuMemoryLabel = "nvidia.com/gpu.memory";
inline constexpr std::string_view kPoolLabel = "tessera.io/pool";
inline constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";

struct NodeConversion {
  std::string cluster;    // Node::cluster
  Labels cluster_labels;  // merged over each node's labels
  std::string pool_label = std::string(kPoolLabel);
};

absl::StatusOr<Node> NodeFromJson(const Json& object, const NodeConversion& conversion);

// A NodeList answer: the nodes that converted, one error per object that did not, and the
// list's metadata.resourceVersion. Error only when `body` is not a list at all.
struct NodeList {
  std::vector<Node> nodes;
  std::vector<std::string> errors;
  std::string resource_version;
};
absl::StatusOr<NodeList> ParseNodeList(std::string_view body, const NodeConversion& conversion);

}  // namespace tessera::agent::k8s

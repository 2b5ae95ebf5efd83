// NodeMetricsFromJson: what the nodes use now, read from the Kubernetes metrics API
// (metrics.k8s.io, served by metrics-server: the numbers `kubectl top nodes` shows).
//
//   GET /apis/metrics.k8s.io/v1beta1/nodes      a NodeMetricsList
//   items[i].metadata.name                      NodeUsage::node
//   items[i].usage.cpu                          cpu in millicores: "250m", "2", or
//                                               metrics-server's nanocores "123456789n" (and
//                                               microcores "1500u"), a fraction of a millicore
//                                               rounded up as kubectl top does
//   items[i].usage.memory                       memory in bytes: "123456Ki", "1Gi", "512M"
// The metrics API has no GPU utilisation or power: those are left empty. metrics-server
// refreshes its numbers every 15 s by default (its --metric-resolution).
//
// Errors: a body that is not a list is InvalidArgument ("node metrics list: ..."). A malformed
// entry (not a map, no name, a name listed twice, a missing or unreadable cpu or memory) is left
// out, with an error naming its field ("items[2].usage.cpu: \"x\" is not a quantity"); the other
// entries are kept. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/kubernetes/internal/json_fields.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent::k8s {

inline constexpr std::string_view kNodeMetricsPath = "/apis/metrics.k8s.io/v1beta1/nodes";

struct NodeMetricsList {
  std::vector<NodeUsage> usage;  // one per well-formed entry, in the list's order
  std::vector<std::string> errors;       // one per malformed entry
};

absl::StatusOr<NodeMetricsList> NodeMetricsFromJson(const Json& list);

// The log line for a failed GET of kNodeMetricsPath ("node usage is not reported: <error>
// (<what to do>); ..."). Not served (404 NotFound; 503 from an API server whose metrics-server
// is registered but not running): install metrics-server or check that it runs; forbidden
// (403): grant get and list on nodes in API group metrics.k8s.io.
std::string NodeMetricsUnavailable(const absl::Status& status);

}  // namespace tessera::agent::k8s

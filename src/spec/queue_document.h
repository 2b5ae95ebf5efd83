// Queue documents: the queue tree as the server configuration, the REST and gRPC APIs, the CLI
// and the store write it — YAML or JSON, nested by `children`, quantities at the edge:
//
//   queues:
//     - name: org
//       children:
//         - name: team-a
//           guaranteed: {gpu: 16, cpu: "64", memory: 512Gi}   # gpu in GPUs (0.5 allowed)
//           borrowingLimit: {gpu: 8, "gpu:H100-80GB": 4}       # per GPU model: "gpu:<MODEL>"
//           lendingLimit: {gpu: 4}
//           weight: 1                    # fair-share weight, >= 1
//           priority: 0                  # higher is served first among siblings
//           ordering: bestEffortFifo     # strictFifo | bestEffortFifo
//
// A tree becomes a flat list of QueueSpec (sched/queue/queue_spec.h) in tree order: every
// parent before its children, siblings in document order. Resource keys: "cpu" (Kubernetes
// quantity, stored in millicores), "memory" (bytes), "gpu" and "gpu:<MODEL>" (GPUs, stored in
// milli-GPU). One queue alone (PUT /api/v1/queues/{name}) has the same keys plus `parent`
// and no `children`.
//
// Scenario files write the same tree in snake_case (shared/SCENARIOS.md: borrowing_limit,
// lending_limit, ordering: best_effort_fifo); DecodeQueueTree reads either style with one
// table of keys and rules (spec/key_style.h).
//
// Parsing checks the shape: unknown keys, bad quantities and choices, a name missing, invalid
// or given twice, a resource given twice, weight < 1; errors are InvalidArgument "FIELD: what"
// with the path in the document ("queues[0].children[1].guaranteed.gpu: ...") and, read by
// QueueErrorLine, the line of the node at fault. What the tree means (limits that contradict
// each other, jobs in a queue that would vanish) is the Scheduler's to check
// (Scheduler::SetQueues). Rendering gives back a document that parses to the same specs.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sched/queue/queue_spec.h"
#include "spec/key_style.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace tessera::spec {

// The deepest nesting of flow brackets ('[' and '{') in `text`. yaml-cpp parses flow
// collections recursively, so documents are refused above a limit before they are parsed.
int FlowDepth(std::string_view text);

// The most queues one tree may have.
inline constexpr size_t kMaxQueues = 100'000;

// A `queues:` list (YAML node) at `field` ("queues") → specs in tree order.
absl::StatusOr<std::vector<QueueSpec>> ParseQueueTree(const YAML::Node& list,
                                                      const std::string& field);

// Upper bounds on one quota entry, beyond the quantity parsers' own ("must be at most …").
struct QuotaBounds {
  int64_t max_cpu_millis = std::numeric_limits<int64_t>::max();
  int64_t max_bytes = std::numeric_limits<int64_t>::max();
  int64_t max_milli_gpu = std::numeric_limits<int64_t>::max();  // gpu and gpu:<MODEL>
};

struct QueueTreeOptions {
  KeyStyle style = KeyStyle::kCamelCase;  // of the keys and of the ordering's values
  QuotaBounds bounds;
  int32_t max_weight = std::numeric_limits<int32_t>::max();
};

struct DecodedQueueTree {
  std::vector<QueueSpec> queues;  // in tree order
  std::vector<int> lines;         // where each queue starts, 1-based (0: unknown)
};

// ParseQueueTree in the style and bounds of `options`, with the line of each queue.
absl::StatusOr<DecodedQueueTree> DecodeQueueTree(const YAML::Node& list, const std::string& field,
                                                 const QueueTreeOptions& options);

// The 1-based line of the node an error of DecodeQueueTree points at; nullopt when unknown.
std::optional<int> QueueErrorLine(const absl::Status& status);

// A whole document {"queues": [...]} in YAML or JSON (the body of PUT /api/v1/queues, the file
// of `tessera queue apply`, the stored tree). Errors name the field; a text that is not YAML
// names line and column.
absl::StatusOr<std::vector<QueueSpec>> ParseQueueDocument(std::string_view text);

// One queue named `name` (the body of PUT /api/v1/queues/{name}): the keys of a tree's queue
// with `parent` instead of `children`; a `name` in the body must equal `name`. An empty body
// is a root queue with defaults.
absl::StatusOr<QueueSpec> ParseQueueObject(std::string_view text, std::string_view name);

// {"cpu": "64", "memory": "512Gi", "gpu": 16, "gpu:T4": 0.5}.
nlohmann::ordered_json ResourceListToJson(const ResourceList& resources);
// One queue, flat: name, parent, guaranteed, borrowingLimit, lendingLimit, weight, priority,
// ordering. Limits that are not set are left out.
nlohmann::ordered_json QueueSpecToJson(const QueueSpec& queue);
// {"queues": [...]} nested by children. REQUIRES: `queues` in tree order.
nlohmann::ordered_json QueueTreeToJson(std::span<const QueueSpec> queues);

std::string_view QueueOrderingName(QueueOrdering ordering);

// Where `name` stands in `queues`: nullopt when absent; otherwise whether it is a leaf.
// Linear in the tree; LeafIndex answers many lookups.
std::optional<bool> IsLeafQueue(std::span<const QueueSpec> queues, std::string_view name);
// Every queue of `queues` → whether it is a leaf.
using QueueLeafIndex = std::map<std::string, bool, std::less<>>;
QueueLeafIndex LeafIndex(std::span<const QueueSpec> queues);

// `tree` (in tree order) with `queue` added, or replacing the queue of its name (which keeps
// its children), back in tree order. InvalidArgument naming "parent" when the parent does not
// exist, lies inside the queue itself, or the tree would nest deeper than a document may.
absl::StatusOr<std::vector<QueueSpec>> UpsertQueue(std::vector<QueueSpec> tree, QueueSpec queue);
// `tree` without the queue `name`. NotFound when absent; FailedPrecondition for a queue with
// children or the last queue.
absl::StatusOr<std::vector<QueueSpec>> RemoveQueue(std::vector<QueueSpec> tree,
                                                   std::string_view name);

}  // namespace tessera::spec

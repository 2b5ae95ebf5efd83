// A node's administrative state: whether the control plane itself has taken it out of service
// (kubectl cordon/drain, scontrol update state=drain), kept apart from what its backend reports
// (its condition, its own cordon) so that both survive each other's changes.
//
//   Ready ──cordon──> Cordoned        no new placements; running tasks stay
//   Ready | Cordoned ──drain──> Draining   no new placements; every job with a task there is
//                                          evicted (its whole gang, requeued once)
//   Draining ──(nothing of ours left on it)──> Drained
//   any ──uncordon──> Ready
// A cordon of a Draining or Drained node and a drain of a Draining or Drained node keep its
// state (they are idempotent); a reason given with one of them replaces the stored reason.
//
// Store layout: /tessera/nodes/<cluster>/<node> holds one record (EncodeNodeAdmin, JSON), written
// at every change; a node without a record is Ready. Records outlive the nodes they name: a
// node that leaves the inventory and comes back keeps its state.
// Value types and pure functions; thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tessera/common/clock.h"

namespace tessera::server {

enum class NodeAdminState { kReady, kCordoned, kDraining, kDrained };
// "Ready", "Cordoned", "Draining", "Drained".
std::string_view NodeAdminStateName(NodeAdminState state);
// Whether the state forbids new placements (every state but Ready).
inline bool OutOfService(NodeAdminState state) { return state != NodeAdminState::kReady; }

enum class NodeAction { kCordon, kUncordon, kDrain };
// "cordon", "uncordon", "drain".
std::string_view NodeActionName(NodeAction action);
std::optional<NodeAction> ParseNodeAction(std::string_view name);

// One node's administrative record.
struct NodeAdmin {
  std::string cluster;
  std::string node;
  NodeAdminState state = NodeAdminState::kReady;
  std::string reason;  // the operator's words ("replacing GPU 3"); "" when none was given
  std::string by;      // the tenant of the admin token that made the last change
  TimePoint since{};   // when the node entered `state`
  // Draining: the grace given to the evicted tasks instead of each job's
  // terminationGracePeriod; nullopt: each job's own.
  std::optional<Duration> grace;
};

// The longest reason a change may carry, in bytes.
inline constexpr size_t kMaxNodeReasonBytes = 1024;

// The state `action` takes a node in `state` to (before any Draining → Drained).
NodeAdminState NextAdminState(NodeAdminState state, NodeAction action);

// Applies `action` to `record` at `now` by `by`: the new state (entered at `now` when it
// changed), its reason (replaced when `reason` is not empty or the state changed) and grace (a
// drain's; cleared on leaving Draining). Returns whether the state changed.
bool ApplyNodeAction(NodeAdmin& record, NodeAction action, std::string reason,
                     std::optional<Duration> grace, std::string by, TimePoint now);

inline constexpr std::string_view kNodeAdminPrefix = "/tessera/nodes/";
std::string NodeAdminKey(std::string_view cluster, std::string_view node);
std::string EncodeNodeAdmin(const NodeAdmin& record);
// DataLoss naming `key` for a value that does not decode.
absl::StatusOr<NodeAdmin> DecodeNodeAdmin(std::string_view key, std::string_view value);

}  // namespace tessera::server

// ClusterState: the scheduler's cache of every node, mutated incrementally.
//
// Owned by the scheduling thread; nothing else mutates it, so the hot path takes no locks.
// Each node carries a version number that changes whenever the node changes (a task assumed
// or forgotten, a label, taint, condition or device health changed), and every change is
// appended to a change log; the framework caches filter and score results per task
// equivalence class and node version, so a placement costs work only on the nodes that changed
// since the class was last evaluated.
// Node indices are stable for the lifetime of the state: removed nodes stay, marked `removed`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/job.h"
#include "core/node.h"
#include "core/placement.h"

namespace tessera {

class ClusterState {
 public:
  ClusterState();

  // Adds a node; InvalidArgument when its name is taken or a quantity is negative.
  absl::StatusOr<int32_t> AddNode(Node node);

  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  std::span<const Node> nodes() const { return nodes_; }
  const Node& node(int32_t index) const { return nodes_[index]; }
  std::optional<int32_t> FindNode(std::string_view name) const;

  // The node's version, counting its changes modulo 2^32: equal values mean the node did not
  // change in between, provided fewer than 2^32 changes (change_count()) happened meanwhile.
  uint32_t version(int32_t index) const { return versions_[index]; }
  // Unique per ClusterState instance; lets caches notice they are given another state.
  uint64_t uid() const { return uid_; }
  // Counts the changes to the inventory — nodes added, and nodes given out by MutableNode
  // (labels, taints, capacity, devices) — but not the tasks assumed or forgotten: equal values
  // mean what could ever run where has not changed (satisfiability caches key on it).
  uint64_t inventory_version() const { return inventory_version_; }

  // The number of node changes so far (each MutableNode, Assume, Forget, AddNode is one).
  uint64_t change_count() const { return change_base_ + change_log_.size(); }
  // The indices of the nodes changed after the first `since` changes, oldest first (a node may
  // appear more than once); nullopt when the log no longer reaches back that far (it is trimmed
  // as it grows): the caller must then look at every node. The span is valid until the next
  // change.
  std::optional<std::span<const int32_t>> ChangesSince(uint64_t since) const {
    if (since < change_base_) return std::nullopt;
    return std::span<const int32_t>(change_log_).subspan(since - change_base_);
  }

  // Gives the caller a node to change (labels, taints, condition, device health, cordon) and
  // bumps its version. Do not change allocations through it: use Assume/Forget.
  Node& MutableNode(int32_t index);

  // Adds the task's request to the node and its devices. FailedPrecondition (and no change)
  // when it would push cpu, memory, a device's milli-GPU or memory above capacity, or uses an
  // unhealthy device: the state never overcommits.
  absl::Status Assume(const TaskRequest& task, const Placement& placement);
  // Removes what Assume added. REQUIRES: the same (task, placement) was assumed.
  void Forget(const TaskRequest& task, const Placement& placement);
  // Adds back, without Assume's checks, a task that Forget removed: for dry runs (backfill
  // planning, victim search) that forget running tasks and must restore the state exactly even
  // when a device turned unhealthy or allocatable shrank under them meanwhile.
  // REQUIRES: the same (task, placement) was assumed and then forgotten.
  void Reassume(const TaskRequest& task, const Placement& placement);

 private:
  std::vector<Node> nodes_;
  std::vector<uint32_t> versions_;
  std::unordered_map<std::string, int32_t> by_name_;
  uint64_t uid_;
  uint64_t inventory_version_ = 0;
  // Indices of changed nodes, oldest first; entry i is change number change_base_ + i.
  std::vector<int32_t> change_log_;
  uint64_t change_base_ = 0;

  void RecordChange(int32_t index);
};

// The node as satisfiability judges it ("could a task ever run here?", MatchMode::
// kSatisfiability): nothing placed, every device healthy and free, the node up and not cordoned.
// Labels, taints, allocatable and devices stay as they are; a removed node stays removed.
Node EmptiedNode(const Node& node);
// A new state holding every node of `state`, in the same order (same indices), as EmptiedNode
// gives it. O(nodes).
ClusterState EmptiedState(const ClusterState& state);

}  // namespace tessera

#include "sched/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "core/hosted_gpu_classes.h"
#include "fmt/format.h"

namespace tessera {
namespace {

uint64_t NextStateUid() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool HasNegative(const Resources& r) {
  if (r.cpu < 0 || r.memory < 0 || r.gpu < 0 || r.gpu_memory < 0) return true;
  for (const auto& [name, value] : r.extended) {
    if (value < 0) return true;
  }
  return false;
}

// Applies `sign` (+1 or -1) times the task's holdings to the node.
void Apply(Node& node, const TaskRequest& task, const Placement& placement, int64_t sign) {
  node.allocated.cpu += sign * task.cpu;
  node.allocated.memory += sign * task.memory;
  const auto devices = static_cast<int64_t>(placement.gpus.size());
  node.allocated.gpu += sign * devices * placement.gpu_milli;
  node.allocated.gpu_memory += sign * devices * placement.gpu_memory;
  for (const auto& [name, value] : task.extended) {
    // Entries that return to zero are dropped, as Resources arithmetic does, so that Forget
    // after Assume restores the node exactly.
    auto it = node.allocated.extended.try_emplace(name, 0).first;
    it->second += sign * value;
    if (it->second == 0) node.allocated.extended.erase(it);
  }
  RecordHostedClass(node, task, static_cast<int32_t>(sign));
  for (int32_t index : placement.gpus) {
    GpuDevice& d = node.gpus[index];
    d.used_milli += sign * placement.gpu_milli;
    d.used_memory += sign * placement.gpu_memory;
  }
}

absl::Status CheckFits(const Node& node, const TaskRequest& task, const Placement& placement) {
  auto over = [&](std::string_view what) {
    return absl::FailedPreconditionError(
        fmt::format("node {}: assuming the task would overcommit {}", node.name, what));
  };
  if (node.allocated.cpu + task.cpu > node.allocatable.cpu) return over("cpu");
  if (node.allocated.memory + task.memory > node.allocatable.memory) return over("memory");
  for (const auto& [name, value] : task.extended) {
    auto cap = node.allocatable.extended.find(name);
    auto used = node.allocated.extended.find(name);
    const int64_t capacity = cap == node.allocatable.extended.end() ? 0 : cap->second;
    const int64_t in_use = used == node.allocated.extended.end() ? 0 : used->second;
    if (in_use + value > capacity) return over(name);
  }
  if (static_cast<int32_t>(placement.gpus.size()) != task.gpu_count) {
    return absl::FailedPreconditionError(
        fmt::format("node {}: placement lists {} devices, task needs {}", node.name,
                    placement.gpus.size(), task.gpu_count));
  }
  for (size_t i = 0; i < placement.gpus.size(); ++i) {
    const int32_t index = placement.gpus[i];
    if (index < 0 || index >= static_cast<int32_t>(node.gpus.size())) return over("a GPU index");
    for (size_t j = 0; j < i; ++j) {
      if (placement.gpus[j] == index) return over("a GPU listed twice");
    }
    const GpuDevice& d = node.gpus[index];
    if (!d.healthy) return over(fmt::format("unhealthy GPU {}", index));
    if (d.used_milli + placement.gpu_milli > kMilliGpuPerDevice) {
      return over(fmt::format("GPU {}", index));
    }
    if (d.used_memory + placement.gpu_memory > d.memory && placement.gpu_memory > 0) {
      return over(fmt::format("memory of GPU {}", index));
    }
  }
  return absl::OkStatus();
}

}  // namespace

ClusterState::ClusterState() : uid_(NextStateUid()) {}

absl::StatusOr<int32_t> ClusterState::AddNode(Node node) {
  if (node.name.empty()) return absl::InvalidArgumentError("node: name must not be empty");
  if (by_name_.contains(node.name)) {
    return absl::InvalidArgumentError(fmt::format("node {}: duplicate name", node.name));
  }
  if (HasNegative(node.capacity) || HasNegative(node.allocatable) || HasNegative(node.allocated)) {
    return absl::InvalidArgumentError(fmt::format("node {}: quantities must be >= 0", node.name));
  }
  for (size_t i = 0; i < node.gpus.size(); ++i) node.gpus[i].index = static_cast<int32_t>(i);
  const auto index = static_cast<int32_t>(nodes_.size());
  by_name_.emplace(node.name, index);
  nodes_.push_back(std::move(node));
  versions_.push_back(0);
  ++inventory_version_;
  RecordChange(index);
  return index;
}

std::optional<int32_t> ClusterState::FindNode(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void ClusterState::RecordChange(int32_t index) {
  ++versions_[index];
  change_log_.push_back(index);
  // Trim the older half once the log is much longer than the node array; readers that were
  // further behind fall back to a full scan, which costs no more than replaying the log.
  const size_t limit = std::max<size_t>(size_t{1} << 16, 8 * nodes_.size());
  if (change_log_.size() > limit) {
    const size_t drop = change_log_.size() / 2;
    change_log_.erase(change_log_.begin(), change_log_.begin() + static_cast<ptrdiff_t>(drop));
    change_base_ += drop;
  }
}

Node& ClusterState::MutableNode(int32_t index) {
  ++inventory_version_;
  RecordChange(index);
  return nodes_[index];
}

absl::Status ClusterState::Assume(const TaskRequest& task, const Placement& placement) {
  Node& node = nodes_[placement.node_index];
  absl::Status fits = CheckFits(node, task, placement);
  if (!fits.ok()) return fits;
  Apply(node, task, placement, +1);
  RecordChange(placement.node_index);
  return absl::OkStatus();
}

void ClusterState::Forget(const TaskRequest& task, const Placement& placement) {
  Apply(nodes_[placement.node_index], task, placement, -1);
  RecordChange(placement.node_index);
}

void ClusterState::Reassume(const TaskRequest& task, const Placement& placement) {
  Apply(nodes_[placement.node_index], task, placement, +1);
  RecordChange(placement.node_index);
}

Node EmptiedNode(const Node& node) {
  Node empty = node;
  empty.allocated = Resources{};
  empty.hosted_gpu_classes.clear();
  empty.condition = NodeCondition::kReady;
  empty.unschedulable = false;
  for (GpuDevice& d : empty.gpus) {
    d.used_milli = 0;
    d.used_memory = 0;
    d.healthy = true;
  }
  return empty;
}

ClusterState EmptiedState(const ClusterState& state) {
  ClusterState empty;
  for (const Node& node : state.nodes()) {
    // The names are unique and the quantities valid: the state accepted them.
    empty.AddNode(EmptiedNode(node)).IgnoreError();
  }
  return empty;
}

}  // namespace tessera

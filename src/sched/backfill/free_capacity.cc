#include "sched/backfill/free_capacity.h"

#include <optional>
#include <span>

namespace tessera {

bool FreeCapacity::Sync(const ClusterState& state, absl::FunctionRef<void(int32_t)> reread) {
  std::optional<std::span<const int32_t>> changed;
  if (state.uid() == uid_) changed = state.ChangesSince(synced_at_);
  // A log longer than the node array costs more to replay than reading every node once.
  if (!changed.has_value() || state.size() != size() ||
      changed->size() > static_cast<size_t>(state.size())) {
    ReadAll(state);
    return false;
  }
  for (int32_t node : *changed) {
    if (!Reread(state.node(node), node)) {
      ReadAll(state);
      return false;
    }
    reread(node);
  }
  synced_at_ = state.change_count();
  return true;
}

void FreeCapacity::ReadAll(const ClusterState& state) {
  uid_ = state.uid();
  synced_at_ = state.change_count();
  nodes_.assign(static_cast<size_t>(state.size()), NodeFree{});
  used_milli_.clear();
  extended_.clear();
  for (int32_t n = 0; n < state.size(); ++n) {
    const Node& node = state.node(n);
    NodeFree& free = nodes_[n];
    free.first_device = static_cast<int32_t>(used_milli_.size());
    free.devices = static_cast<int32_t>(node.gpus.size());
    used_milli_.resize(used_milli_.size() + node.gpus.size());
    free.first_extended = static_cast<int32_t>(extended_.size());
    free.extended = static_cast<int32_t>(node.allocatable.extended.size());
    for (const auto& [name, value] : node.allocatable.extended) {
      int32_t id = ExtendedId(name);
      if (id < 0) {
        id = static_cast<int32_t>(names_.size());
        names_.push_back(name);
      }
      extended_.push_back(ExtendedFree{id, 0});
    }
    Reread(node, n);
  }
}

bool FreeCapacity::Reread(const Node& node, int32_t index) {
  NodeFree& free = nodes_[index];
  if (static_cast<int32_t>(node.gpus.size()) != free.devices ||
      static_cast<int32_t>(node.allocatable.extended.size()) != free.extended) {
    return false;
  }
  free.cpu = node.FreeCpu();
  free.memory = node.FreeMemory();
  for (int32_t d = 0; d < free.devices; ++d) {
    used_milli_[static_cast<size_t>(free.first_device + d)] = node.gpus[d].used_milli;
  }
  int32_t e = free.first_extended;
  for (const auto& [name, capacity] : node.allocatable.extended) {
    ExtendedFree& entry = extended_[static_cast<size_t>(e++)];
    if (names_[entry.id] != name) return false;
    auto used = node.allocated.extended.find(name);
    entry.free = capacity - (used == node.allocated.extended.end() ? 0 : used->second);
  }
  return true;
}

int32_t FreeCapacity::ExtendedId(std::string_view name) const {
  for (size_t id = 0; id < names_.size(); ++id) {
    if (names_[id] == name) return static_cast<int32_t>(id);
  }
  return -1;
}

int64_t FreeCapacity::extended(int32_t node, int32_t id) const {
  const NodeFree& free = nodes_[node];
  for (int32_t e = free.first_extended; e < free.first_extended + free.extended; ++e) {
    if (extended_[static_cast<size_t>(e)].id == id) return extended_[static_cast<size_t>(e)].free;
  }
  return 0;
}

}  // namespace tessera

#include "sched/preemption/victim_index.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace tessera {
namespace {

// What the candidate holds on each node it runs on, in the order of its first task there.
absl::InlinedVector<std::pair<int32_t, RoomTotals>, 4> PerNode(const VictimCandidate& c) {
  absl::InlinedVector<std::pair<int32_t, RoomTotals>, 4> out;
  for (size_t t = 0; t < c.tasks.size(); ++t) {
    const int32_t node = c.placements[t].node_index;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == node; });
    if (it == out.end()) it = out.insert(out.end(), {node, RoomTotals{}});
    it->second.Apply(c.tasks[t], c.placements[t], +1);
  }
  return out;
}

VictimIndex::NodeFree FreeOfNode(const Node& node) {
  return {.cpu = node.FreeCpu(),
          .memory = node.FreeMemory(),
          .gpu_milli =
              static_cast<int64_t>(node.gpus.size()) * kMilliGpuPerDevice - node.allocated.gpu};
}

VictimIndex::Young YoungOf(const VictimCandidate& c, int32_t slot) {
  VictimIndex::Young young{
      .start = c.start_time.time_since_epoch().count(), .job = c.job, .slot = slot};
  for (const Placement& p : c.placements) {
    young.gpu_milli += static_cast<int64_t>(p.gpus.size()) * p.gpu_milli;
  }
  return young;
}

}  // namespace

VictimIndex::VictimIndex() = default;
VictimIndex::~VictimIndex() = default;
VictimIndex::VictimIndex(VictimIndex&&) noexcept = default;
VictimIndex& VictimIndex::operator=(VictimIndex&&) noexcept = default;

void VictimIndex::Add(const VictimCandidate& candidate) {
  Remove(candidate.job);
  VictimCandidate stored{
      .job = candidate.job, .priority = candidate.priority, .start_time = candidate.start_time};
  for (size_t t = 0; t < candidate.tasks.size(); ++t) {
    if (candidate.placements[t].node_index < 0) continue;
    stored.tasks.push_back(candidate.tasks[t]);
    stored.placements.push_back(candidate.placements[t]);
  }
  if (stored.tasks.empty()) return;
  int32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<int32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Level& level = levels_[stored.priority];
  level.priority = stored.priority;
  const Young young = YoungOf(stored, slot);
  level.youngest.insert(young);
  ++level.gpu_milli_counts[young.gpu_milli];
  for (const auto& [node, totals] : PerNode(stored)) {
    const auto n = static_cast<size_t>(node);
    if (level.nodes.size() <= n) level.nodes.resize(n + 1);
    level.nodes[n].totals.Add(totals, +1);
    ++level.nodes[n].holders;
    if (holders_.size() <= n) holders_.resize(n + 1);
    holders_[n].push_back(slot);
  }
  slot_of_.emplace(stored.job, slot);
  slots_[slot] = std::move(stored);
}

void VictimIndex::Remove(int64_t job) {
  auto found = slot_of_.find(job);
  if (found == slot_of_.end()) return;
  const int32_t slot = found->second;
  slot_of_.erase(found);
  VictimCandidate& c = slots_[slot];
  auto level = levels_.find(c.priority);
  const Young young = YoungOf(c, slot);
  level->second.youngest.erase(young);
  if (--level->second.gpu_milli_counts[young.gpu_milli] == 0) {
    level->second.gpu_milli_counts.erase(young.gpu_milli);
  }
  for (const auto& [node, totals] : PerNode(c)) {
    NodeHolding& holding = level->second.nodes[static_cast<size_t>(node)];
    holding.totals.Add(totals, -1);
    --holding.holders;
    std::vector<int32_t>& on = holders_[static_cast<size_t>(node)];
    *std::find(on.begin(), on.end(), slot) = on.back();
    on.pop_back();
  }
  if (level->second.youngest.empty()) levels_.erase(level);
  c = VictimCandidate{};
  free_slots_.push_back(slot);
}

void VictimIndex::Clear() { *this = VictimIndex(); }

std::span<const VictimIndex::NodeFree> VictimIndex::FreeOf(const ClusterState& state) const {
  const std::optional<std::span<const int32_t>> changes = state.ChangesSince(free_seen_);
  if (free_uid_ != state.uid() || free_.size() != static_cast<size_t>(state.size()) ||
      !changes.has_value()) {
    free_.resize(static_cast<size_t>(state.size()));
    for (int32_t i = 0; i < state.size(); ++i) free_[i] = FreeOfNode(state.node(i));
  } else {
    for (int32_t i : *changes) free_[i] = FreeOfNode(state.node(i));
  }
  free_uid_ = state.uid();
  free_seen_ = state.change_count();
  return free_;
}

std::span<const int32_t> VictimIndex::holders(int32_t node) const {
  const auto n = static_cast<size_t>(node);
  if (n >= holders_.size()) return {};
  return holders_[n];
}

}  // namespace tessera

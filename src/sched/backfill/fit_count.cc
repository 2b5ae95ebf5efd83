#include "sched/backfill/fit_count.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace tessera {
namespace {

constexpr int64_t kMany = int64_t{1} << 20;  // more than any gang has tasks

// How many `ask`s fit in `free` (kMany when nothing is asked).
int64_t Share(int64_t free, int64_t ask) {
  if (ask <= 0) return kMany;
  return free <= 0 ? 0 : std::min(free / ask, kMany);
}

int64_t FreeExtended(const Node& node, const std::string& name, const NodeLoad* extra) {
  auto cap = node.allocatable.extended.find(name);
  auto used = node.allocated.extended.find(name);
  int64_t free = (cap == node.allocatable.extended.end() ? 0 : cap->second) -
                 (used == node.allocated.extended.end() ? 0 : used->second);
  if (extra != nullptr) {
    auto more = extra->extended.find(name);
    if (more != extra->extended.end()) free -= more->second;
  }
  return free;
}

}  // namespace

SmallestTask::SmallestTask(std::span<const TaskRequest> tasks) {
  const TaskRequest& first = tasks.front();
  cpu = first.cpu;
  memory = first.memory;
  gpu_count = first.gpu_count;
  gpu_milli = first.gpu_milli;
  extended = first.extended;
  for (const TaskRequest& t : tasks.subspan(1)) {
    cpu = std::min(cpu, t.cpu);
    memory = std::min(memory, t.memory);
    gpu_count = std::min(gpu_count, t.gpu_count);
    gpu_milli = std::min(gpu_milli, t.gpu_milli);
    for (auto it = extended.begin(); it != extended.end();) {
      auto theirs = t.extended.find(it->first);
      if (theirs == t.extended.end()) {
        it = extended.erase(it);
      } else {
        it->second = std::min(it->second, theirs->second);
        ++it;
      }
    }
  }
  if (gpu_count <= 0 || gpu_milli <= 0) gpu_count = 0;
}

FitCount::FitCount(const ClusterState& state, SmallestTask task) : task_(std::move(task)) {
  CountAll(state);
}

void FitCount::Sync(const ClusterState& state) {
  std::optional<std::span<const int32_t>> changed;
  if (state.uid() == uid_) changed = state.ChangesSince(synced_at_);
  if (!changed.has_value() || static_cast<int32_t>(per_node_.size()) > state.size()) {
    CountAll(state);
    return;
  }
  per_node_.resize(static_cast<size_t>(state.size()), 0);  // nodes added: in the log too
  for (int32_t node : *changed) Update(state, node);
  synced_at_ = state.change_count();
}

int64_t FitCount::TotalWith(const ClusterState& state, std::span<const NodePeak> peaks) const {
  int64_t total = total_;
  for (const NodePeak& peak : peaks) {
    total += CountWith(state.node(peak.node), &peak.load) - per_node_[peak.node];
  }
  return total;
}

void FitCount::Update(const ClusterState& state, int32_t node) {
  const int64_t count = CountWith(state.node(node), nullptr);
  total_ += count - per_node_[node];
  per_node_[node] = count;
}

int64_t FitCount::CountWith(const Node& node, const NodeLoad* extra) const {
  int64_t count = std::min(Share(node.FreeCpu() - (extra ? extra->cpu : 0), task_.cpu),
                           Share(node.FreeMemory() - (extra ? extra->memory : 0), task_.memory));
  for (const auto& [name, ask] : task_.extended) {
    count = std::min(count, Share(FreeExtended(node, name, extra), ask));
  }
  if (task_.gpu_count > 0 && count > 0) {
    int64_t slots = 0;  // device slots: whole free devices, or shares of the devices
    for (size_t d = 0; d < node.gpus.size(); ++d) {
      const int64_t used = node.gpus[d].used_milli + (extra ? extra->milli[d] : 0);
      if (task_.gpu_milli >= kMilliGpuPerDevice) {
        slots += used == 0 ? 1 : 0;
      } else {
        slots += Share(kMilliGpuPerDevice - used, task_.gpu_milli);
      }
    }
    count = std::min(count, slots / task_.gpu_count);
  }
  return count;
}

void FitCount::CountAll(const ClusterState& state) {
  uid_ = state.uid();
  synced_at_ = state.change_count();
  per_node_.assign(static_cast<size_t>(state.size()), 0);
  total_ = 0;
  for (int32_t n = 0; n < state.size(); ++n) {
    per_node_[n] = CountWith(state.node(n), nullptr);
    total_ += per_node_[n];
  }
}

}  // namespace tessera

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

FitCount::FitCount(const FreeCapacity& free, SmallestTask task) : task_(std::move(task)) {
  for (const auto& [name, ask] : task_.extended) {
    extended_.push_back(Extended{free.ExtendedId(name), ask, name});
  }
  per_node_.assign(static_cast<size_t>(free.size()), 0);
  for (int32_t n = 0; n < free.size(); ++n) {
    per_node_[n] = CountWith(free, n, nullptr);
    total_ += per_node_[n];
  }
}

int64_t FitCount::TotalWith(const FreeCapacity& free, std::span<const NodePeak> peaks) const {
  int64_t total = total_;
  for (const NodePeak& peak : peaks) {
    total += CountWith(free, peak.node, &peak.load) - per_node_[peak.node];
  }
  return total;
}

void FitCount::Update(const FreeCapacity& free, int32_t node) {
  const int64_t count = CountWith(free, node, nullptr);
  total_ += count - per_node_[node];
  per_node_[node] = count;
}

int64_t FitCount::CountWith(const FreeCapacity& free, int32_t node, const NodeLoad* extra) const {
  int64_t count = std::min(Share(free.cpu(node) - (extra ? extra->cpu : 0), task_.cpu),
                           Share(free.memory(node) - (extra ? extra->memory : 0), task_.memory));
  for (const Extended& e : extended_) {
    int64_t left = e.id < 0 ? 0 : free.extended(node, e.id);
    if (extra != nullptr) {
      auto more = extra->extended.find(e.name);
      if (more != extra->extended.end()) left -= more->second;
    }
    count = std::min(count, Share(left, e.ask));
  }
  if (task_.gpu_count > 0 && count > 0) {
    int64_t slots = 0;  // device slots: whole free devices, or shares of the devices
    for (int32_t d = 0; d < free.devices(node); ++d) {
      const int64_t used = free.used_milli(node, d) + (extra ? extra->milli[d] : 0);
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

}  // namespace tessera

#include "sched/plugins/basic/node_resources_fit.h"

#include <algorithm>
#include <concepts>

#include "core/device_selection.h"
#include "sched/plugins/basic/plugin_args.h"

namespace tessera {

static_assert(std::derived_from<NodeResourcesFit, PreFilterPlugin>);
static_assert(std::derived_from<NodeResourcesFit, FilterPlugin>);

namespace {

int64_t Lookup(const std::map<std::string, int64_t, std::less<>>& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

// True when a request of `want` cannot be served from `available`. Zero requests always fit.
bool Short(int64_t want, int64_t available) { return want > 0 && want > available; }

template <typename Pred>
int32_t CountDevices(const Node& node, Pred pred) {
  return static_cast<int32_t>(std::count_if(node.gpus.begin(), node.gpus.end(), pred));
}

// Device predicates, from the loosest to DeviceFits itself.
bool Allowed(const GpuDevice& d, const TaskRequest& t) { return t.AllowsModel(d.model); }
bool UsableWhenEmpty(const GpuDevice& d, const TaskRequest& t) {
  return d.healthy && Allowed(d, t);
}
bool MemoryWhenEmpty(const GpuDevice& d, const TaskRequest& t) {
  return UsableWhenEmpty(d, t) && d.memory >= t.gpu_memory;
}
// DeviceFits without the memory check: tells "insufficient gpu" from "insufficient gpu memory".
bool MilliFitsNow(const GpuDevice& d, const TaskRequest& t) {
  if (!UsableWhenEmpty(d, t)) return false;
  return t.gpu_milli >= kMilliGpuPerDevice ? d.IsFullyFree() : d.FreeMilli() >= t.gpu_milli;
}

// The reason the task could never run on the node, even empty; nullptr when it could.
const Reason* NeverFits(const TaskRequest& task, const Node& node) {
  const Resources& alloc = node.allocatable;
  if (Short(task.cpu, alloc.cpu)) return &NodeResourcesFit::kInsufficientCpu;
  if (Short(task.memory, alloc.memory)) return &NodeResourcesFit::kInsufficientMemory;
  for (const auto& [name, want] : task.extended) {
    if (Short(want, Lookup(alloc.extended, name))) return &NodeResourcesFit::kInsufficientExtended;
  }
  if (!task.NeedsGpu()) return nullptr;
  if (node.gpus.empty()) return &NodeResourcesFit::kInsufficientGpu;
  auto count = [&](auto pred) {
    return CountDevices(node, [&](const GpuDevice& d) { return pred(d, task); });
  };
  if (count(Allowed) == 0) return &NodeResourcesFit::kGpuModelMismatch;
  if (count(UsableWhenEmpty) < task.gpu_count) return &NodeResourcesFit::kInsufficientGpu;
  if (count(MemoryWhenEmpty) < task.gpu_count) return &NodeResourcesFit::kInsufficientGpuMemory;
  return nullptr;
}

// The reason the task does not fit what the node has left now; nullptr when it fits.
const Reason* DoesNotFitNow(const TaskRequest& task, const Node& node) {
  if (Short(task.cpu, node.FreeCpu())) return &NodeResourcesFit::kInsufficientCpu;
  if (Short(task.memory, node.FreeMemory())) return &NodeResourcesFit::kInsufficientMemory;
  for (const auto& [name, want] : task.extended) {
    const int64_t free =
        Lookup(node.allocatable.extended, name) - Lookup(node.allocated.extended, name);
    if (Short(want, free)) return &NodeResourcesFit::kInsufficientExtended;
  }
  if (!task.NeedsGpu()) return nullptr;
  int32_t fitting = 0;
  for (const GpuDevice& d : node.gpus) {
    if (DeviceFits(d, task) && ++fitting == task.gpu_count) return nullptr;  // enough: stop
  }
  auto count = [&](auto pred) {
    return CountDevices(node, [&](const GpuDevice& d) { return pred(d, task); });
  };
  return count(MilliFitsNow) >= task.gpu_count ? &NodeResourcesFit::kInsufficientGpuMemory
                                               : &NodeResourcesFit::kInsufficientGpu;
}

bool RequestsNothing(const TaskRequest& task) {
  return task.cpu <= 0 && task.memory <= 0 && !task.NeedsGpu() &&
         std::all_of(task.extended.begin(), task.extended.end(),
                     [](const auto& e) { return e.second <= 0; });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NodeResourcesFit::New(const PluginArgs& args,
                                                              const Handle& handle) {
  if (absl::Status s = CheckKnownArgs(kName, args, {}); !s.ok()) return s;
  return std::make_unique<NodeResourcesFit>();
}

SchedStatus NodeResourcesFit::PreFilter(CycleState& state, const TaskRequest& task) {
  return RequestsNothing(task) ? SchedStatus::Skip() : SchedStatus();
}

SchedStatus NodeResourcesFit::Filter(const CycleState& state, const TaskRequest& task,
                                     const Node& node) const {
  // The common case first: a task that fits now needs no further look.
  const Reason* now = DoesNotFitNow(task, node);
  if (now == nullptr) return {};
  if (const Reason* never = NeverFits(task, node)) return SchedStatus::Unresolvable(*never);
  return SchedStatus::Unschedulable(*now);
}

}  // namespace tessera

#include "sim/scenario/expectation_checker.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/duration.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "sched/queue/queue_tree.h"

namespace tessera::sim {
namespace {

std::string Describe(const JobRun& job) {
  std::string out = fmt::format("phase is {}", job.Phase());
  if (!job.reason.empty()) out += fmt::format(" ({}: {})", job.reason, job.message);
  return out;
}

std::string FormatMillis(int64_t ms) { return FormatTime(TimePoint{} + Duration(ms)); }

std::string FormatBounds(const Bounds& b, bool times) {
  auto f = [&](int64_t v) { return times ? FormatMillis(v) : std::to_string(v); };
  if (b.min && b.max)
    return *b.min == *b.max ? f(*b.min) : fmt::format("{}..{}", f(*b.min), f(*b.max));
  return b.min ? fmt::format(">= {}", f(*b.min)) : fmt::format("<= {}", f(*b.max));
}

// The placements of the tasks placed now: those holding resources at this instant, including
// tasks in the termination grace of an eviction. A task that ended, was lost or was evicted is
// not placed any more.
std::vector<const Placement*> Placed(const JobRun& job) {
  std::vector<const Placement*> out;
  for (const std::optional<Placement>& p : job.held) {
    if (p.has_value()) out.push_back(&*p);
  }
  return out;
}

// The GPU model a placed task runs on: its devices' model, or the node's for a CPU task.
const std::string& ModelOf(const Node& node, const Placement& p) {
  return p.gpus.empty() ? node.GpuModel() : node.gpus[p.gpus.front()].model;
}

std::optional<std::string> CheckPlacements(const Check& check, const JobRun& job,
                                           const SimState& state) {
  const std::vector<const Placement*> placed = Placed(job);
  if (placed.empty()) {
    if (check.kind == CheckKind::kNodesIn) return std::nullopt;
    return fmt::format("no task is placed now ({})", Describe(job));
  }
  for (const Placement* p : placed) {
    const Node& node = state.cluster.node(p->node_index);
    std::string seen;
    switch (check.kind) {
      case CheckKind::kNodesIn:
        if (std::find(check.names.begin(), check.names.end(), node.name) == check.names.end()) {
          seen = fmt::format("a task is on node {}", node.name);
        }
        break;
      case CheckKind::kNodeModel:
        if (ModelOf(node, *p) != check.text) {
          seen =
              fmt::format("a task is on node {} with GPU model '{}'", node.name, ModelOf(node, *p));
        }
        break;
      case CheckKind::kCluster:
        if (node.cluster != check.text) {
          seen = fmt::format("a task is on node {} of cluster {}", node.name, node.cluster);
        }
        break;
      default:  // kPool
        if (node.pool != check.text) {
          seen = fmt::format("a task is on node {} of pool {}", node.name, node.pool);
        }
        break;
    }
    if (!seen.empty()) return seen;
  }
  return std::nullopt;
}

std::optional<std::string> CheckStartOrder(const Check& check, const JobRun& job,
                                           const JobRun& other) {
  if (!job.first_start) return fmt::format("{} never started", job.name());
  const TimePoint start = *job.first_start;
  if (check.kind == CheckKind::kStartedAfterEndOf) {
    if (!other.end) return fmt::format("{} has not ended", other.name());
    if (start >= *other.end) return std::nullopt;
    return fmt::format("{} started at {}, before {} ended at {}", job.name(), FormatTime(start),
                       other.name(), FormatTime(*other.end));
  }
  if (!other.first_start) return fmt::format("{} never started", other.name());
  const TimePoint other_start = *other.first_start;
  const bool after = check.kind == CheckKind::kStartedAfter;
  if (after ? start > other_start : start < other_start) return std::nullopt;
  return fmt::format("{} started at {}, {} at {}", job.name(), FormatTime(start), other.name(),
                     FormatTime(other_start));
}

std::optional<std::string> CheckJob(const Check& check, const JobRun& job, const SimState& state) {
  switch (check.kind) {
    case CheckKind::kPhase:
      if (job.Phase() == check.text) return std::nullopt;
      return Describe(job);
    case CheckKind::kReason:
      if (job.reason == check.text) return std::nullopt;
      return job.reason.empty() ? fmt::format("no reason; {}", Describe(job)) : Describe(job);
    case CheckKind::kReasonContains:
      if (absl::StrContains(job.message, check.text) || absl::StrContains(job.reason, check.text)) {
        return std::nullopt;
      }
      return job.reason.empty() ? fmt::format("no reason; {}", Describe(job)) : Describe(job);
    case CheckKind::kRunningTasks:
      if (check.bounds.Contains(job.HeldTasks())) return std::nullopt;
      return fmt::format("{} running tasks", job.HeldTasks());
    case CheckKind::kRunningTasksIn:
      if (std::find(check.counts.begin(), check.counts.end(), job.HeldTasks()) !=
          check.counts.end()) {
        return std::nullopt;
      }
      return fmt::format("{} running tasks", job.HeldTasks());
    case CheckKind::kNodesIn:
    case CheckKind::kNodeModel:
    case CheckKind::kCluster:
    case CheckKind::kPool:
      return CheckPlacements(check, job, state);
    case CheckKind::kPreemptions:
    case CheckKind::kRestarts: {
      const int64_t n = check.kind == CheckKind::kPreemptions ? job.preemptions : job.restarts;
      if (check.bounds.Contains(n)) return std::nullopt;
      return fmt::format("{} {} (expected {})", n, check.key, FormatBounds(check.bounds, false));
    }
    case CheckKind::kStartTime:
    case CheckKind::kEndTime: {
      const bool start = check.kind == CheckKind::kStartTime;
      const std::optional<TimePoint>& t = start ? job.first_start : job.end;
      if (!t) return fmt::format("{} has not {}", job.name(), start ? "started" : "ended");
      if (check.bounds.Contains(t->time_since_epoch().count())) return std::nullopt;
      return fmt::format("{} at {} (expected {})", start ? "started" : "ended", FormatTime(*t),
                         FormatBounds(check.bounds, true));
    }
    case CheckKind::kStartedAfter:
    case CheckKind::kStartedBefore:
    case CheckKind::kStartedAfterEndOf:
      return CheckStartOrder(check, job, state.job(check.text));
    case CheckKind::kAllocated:
    case CheckKind::kInvariant:
      break;
  }
  return std::string("not a job check");
}

int64_t Quantity(const Resources& r, std::string_view key) {
  if (key == "cpu") return r.cpu;
  if (key == "memory") return r.memory;
  if (key == "gpu") return r.gpu;
  if (key == "gpu_memory") return r.gpu_memory;
  auto it = r.extended.find(key);
  return it == r.extended.end() ? 0 : it->second;
}

std::string FormatQuantity(std::string_view key, int64_t v) {
  if (key == "cpu") return FormatCpuMillis(v);
  if (key == "gpu") return FormatMilliGpu(v);
  if (key == "memory" || key == "gpu_memory") return FormatBytes(v);
  return std::to_string(v);
}

std::optional<std::string> CheckAllocated(const Check& check, std::string_view queue,
                                          const SimState& state) {
  const std::set<std::string>& leaves = state.queue_leaves.find(queue)->second;
  Resources used;
  for (const JobRun& job : state.jobs) {
    if (leaves.contains(job.def->spec.queue)) used += job.AdmittedResources();
  }
  for (const auto& [key, min] : check.resources.min) {
    if (Quantity(used, key) < min) {
      return fmt::format("allocated {} is {} (min {})", key,
                         FormatQuantity(key, Quantity(used, key)), FormatQuantity(key, min));
    }
  }
  for (const auto& [key, max] : check.resources.max) {
    if (Quantity(used, key) > max) {
      return fmt::format("allocated {} is {} (max {})", key,
                         FormatQuantity(key, Quantity(used, key)), FormatQuantity(key, max));
    }
  }
  return std::nullopt;
}

std::optional<std::string> NoOvercommit(const SimState& state) {
  const auto n = static_cast<size_t>(state.cluster.size());
  std::vector<Resources> used(n);
  std::vector<std::vector<int64_t>> device_milli(n);
  std::vector<std::vector<int64_t>> device_memory(n);
  for (size_t i = 0; i < n; ++i) {
    device_milli[i].assign(state.cluster.node(static_cast<int32_t>(i)).gpus.size(), 0);
    device_memory[i] = device_milli[i];
  }
  for (const JobRun& job : state.jobs) {
    for (size_t t = 0; t < job.held.size(); ++t) {
      if (!job.held[t]) continue;
      const Placement& p = *job.held[t];
      used[p.node_index].cpu += job.tasks[t].cpu;
      used[p.node_index].memory += job.tasks[t].memory;
      for (int32_t d : p.gpus) {
        device_milli[p.node_index][d] += job.tasks[t].gpu_milli;
        device_memory[p.node_index][d] += job.tasks[t].gpu_memory;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Node& node = state.cluster.node(static_cast<int32_t>(i));
    if (used[i].cpu > node.allocatable.cpu || node.allocated.cpu > node.allocatable.cpu) {
      return fmt::format("node {}: cpu {} held of {}", node.name,
                         FormatCpuMillis(std::max(used[i].cpu, node.allocated.cpu)),
                         FormatCpuMillis(node.allocatable.cpu));
    }
    if (used[i].memory > node.allocatable.memory ||
        node.allocated.memory > node.allocatable.memory) {
      return fmt::format("node {}: memory {} held of {}", node.name,
                         FormatBytes(std::max(used[i].memory, node.allocated.memory)),
                         FormatBytes(node.allocatable.memory));
    }
    for (size_t d = 0; d < node.gpus.size(); ++d) {
      const GpuDevice& dev = node.gpus[d];
      if (device_milli[i][d] > kMilliGpuPerDevice || dev.used_milli > kMilliGpuPerDevice) {
        return fmt::format("node {} GPU {}: {} GPU held", node.name, d,
                           FormatMilliGpu(std::max(device_milli[i][d], dev.used_milli)));
      }
      if (device_memory[i][d] > dev.memory || dev.used_memory > dev.memory) {
        return fmt::format("node {} GPU {}: memory {} held of {}", node.name, d,
                           FormatBytes(std::max(device_memory[i][d], dev.used_memory)),
                           FormatBytes(dev.memory));
      }
      if (device_milli[i][d] > 0 && !dev.healthy) {
        return fmt::format("node {} GPU {}: unhealthy but in use", node.name, d);
      }
    }
  }
  return std::nullopt;
}

// No queue's admitted use above its guaranteed quota plus its borrowing limit, for every
// resource the queue limits.
std::optional<std::string> QuotaRespected(const SimState& state) {
  std::vector<QueueSpec> specs;
  for (const ScenarioQueue& q : state.scenario->queues) specs.push_back(q.spec);
  absl::StatusOr<QueueTree> tree = QueueTree::Create(specs);
  if (!tree.ok()) return std::string(tree.status().message());
  for (const JobRun& job : state.jobs) {
    if (!job.charged) continue;
    tree->Admit(tree->Find(job.def->spec.queue), JobCharge(job.tasks));
  }
  for (int32_t q = 0; q < tree->size(); ++q) {
    const ResourceList guaranteed = tree->Guaranteed(q);
    for (const auto& [resource, limit] : tree->spec(q).borrowing_limit) {
      auto g = guaranteed.find(resource);
      const int64_t cap = (g == guaranteed.end() ? 0 : g->second) + limit;
      auto u = tree->Usage(q).find(resource);
      const int64_t used = u == tree->Usage(q).end() ? 0 : u->second;
      if (used > cap) {
        return fmt::format("queue {}: admitted {} {} above guaranteed + borrowing limit {}",
                           tree->spec(q).name, resource, used, cap);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string FormatTime(TimePoint t) {
  // Integer arithmetic: a double loses the milliseconds of large times ("766.s").
  const int64_t ms = t.time_since_epoch().count();
  const uint64_t abs = ms < 0 ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms);
  const std::string_view sign = ms < 0 ? "-" : "";
  if (abs % 1000 == 0) return fmt::format("{}{}s", sign, abs / 1000);
  std::string fraction = fmt::format("{:03}", abs % 1000);
  while (fraction.back() == '0') fraction.pop_back();
  return fmt::format("{}{}.{}s", sign, abs / 1000, fraction);
}

std::optional<std::string> EvaluateInvariant(Invariant invariant, const SimState& state) {
  switch (invariant) {
    case Invariant::kNoOvercommit:
      return NoOvercommit(state);
    case Invariant::kGangAtomic:
      for (const JobRun& job : state.jobs) {
        const int32_t held = job.HeldTasks();
        if (held > 0 && held < job.def->spec.GangSize()) {
          return fmt::format("job {} runs {} of its gang of {}", job.name(), held,
                             job.def->spec.GangSize());
        }
      }
      return std::nullopt;
    case Invariant::kQuotaRespected:
      return QuotaRespected(state);
    case Invariant::kPendingHasReason:
      for (const JobRun& job : state.jobs) {
        if (job.phase == JobPhase::kPending && job.reason.empty()) {
          return fmt::format("job {} is pending without a reason", job.name());
        }
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> EvaluateCheck(const Check& check, const Expectation& expectation,
                                         const SimState& state) {
  if (check.kind == CheckKind::kInvariant) return EvaluateInvariant(check.invariant, state);
  if (check.kind == CheckKind::kAllocated) return CheckAllocated(check, expectation.queue, state);
  return CheckJob(check, state.job(expectation.job), state);
}

}  // namespace tessera::sim

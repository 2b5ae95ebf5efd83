#include "sim/alibaba/paper_runner.h"

#include <chrono>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sim/alibaba/cluster_metrics.h"
#include "sim/alibaba/inflation.h"
#include "sim/alibaba/sim_wiring.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {
namespace {

// The per-x curves of one run, fed one sample per arrival.
struct CurveSet {
  CurveBuilder gpu, frag, frag_ratio, cpu, memory;

  void Add(const ArrivalSample& s) {
    gpu.Add(s.arrived_pct, s.gpu_alloc_pct);
    frag.Add(s.arrived_pct, s.frag_pct);
    frag_ratio.Add(s.arrived_pct, s.frag_ratio_pct);
    cpu.Add(s.arrived_pct, s.cpu_alloc_pct);
    memory.Add(s.arrived_pct, s.memory_alloc_pct);
  }
  void BuildInto(PaperRunResult& r) const {
    r.gpu_allocation = gpu.Build();
    r.frag_amount = frag.Build();
    r.frag_ratio = frag_ratio.Build();
    r.cpu_allocation = cpu.Build();
    r.memory_allocation = memory.Build();
  }
};

ArrivalSample Observe(int32_t arrival, bool placed, int64_t arrived_milli, int64_t failed,
                      const ClusterMetrics& m) {
  ArrivalSample s;
  s.arrival = arrival;
  s.placed = placed;
  s.arrived_pct = m.capacity().gpu == 0 ? 0.0
                                        : 100.0 * static_cast<double>(arrived_milli) /
                                              static_cast<double>(m.capacity().gpu);
  s.gpu_alloc_pct = m.GpuAllocationPct();
  s.cpu_alloc_pct = m.CpuAllocationPct();
  s.memory_alloc_pct = m.MemoryAllocationPct();
  s.frag_milli = m.FragmentMilli();
  s.frag_pct = m.FragmentPctOfCapacity();
  s.frag_ratio_pct = m.FragmentRatioPct();
  s.failed_tasks = failed;
  return s;
}

}  // namespace

std::string TaskKind(const TaskRequest& request) {
  if (!request.NeedsGpu()) return "cpu-only";
  if (request.IsSharing()) return "sharing";
  return fmt::format("{}-gpu", request.gpu_count);
}

absl::StatusOr<PaperRunResult> RunPaperExperiment(const TraceInput& input,
                                                  const PaperRunOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  PaperRunResult result;
  result.workload = input.workload_name;
  result.policy = options.policy;
  result.seed = options.seed;
  result.inflate = options.inflate;

  auto rng = std::make_unique<Rng>(options.seed);
  const ArrivalOrder order =
      BuildArrivalOrder(input.pods.tasks, input.nodes.total_gpu_milli, options.inflate, *rng);
  result.clones = order.clones;
  result.removed = order.removed;
  std::vector<int32_t> node_order(input.nodes.nodes.size());
  std::iota(node_order.begin(), node_order.end(), 0);
  if (options.shuffle_nodes) PermuteNodes(node_order, *rng);

  TESSERA_ASSIGN_OR_RETURN(SimWiring wiring,
                           SimWiring::Create(input.nodes.nodes, node_order, options.policy,
                                             input.target, std::move(rng)));
  ClusterState& state = *wiring.state;
  ClusterMetrics metrics(state, *input.prepared);
  CurveSet curves;
  if (options.keep_samples) result.samples.reserve(order.arrivals.size());

  int32_t index = 0;
  for (const Arrival& arrival : order.arrivals) {
    const TraceTask& task = input.pods.tasks[arrival.task];
    const TaskRequest& request = task.request;
    result.arrived_gpu_milli += request.TotalGpuMilli();
    const TaskAttempt attempt = wiring.framework->PlaceTask(state, request);
    if (attempt.status.code() == SchedStatus::Code::kError) {
      return absl::InternalError(fmt::format("task {}: plugin {}: {}", task.name,
                                             attempt.status.plugin(), attempt.status.message()));
    }
    const bool placed = attempt.status.ok();
    if (placed) {
      const absl::Status assumed = state.Assume(request, *attempt.placement);
      if (!assumed.ok()) {
        return absl::InternalError(
            fmt::format("task {}: the state refused node {} chosen by the framework: {}", task.name,
                        attempt.placement->node, std::string(assumed.message())));
      }
      metrics.NodeChanged(attempt.placement->node_index);
    } else {
      ++result.failed_tasks;
      result.failed_gpu_milli += request.TotalGpuMilli();
      ++result.failed_by_kind[TaskKind(request)];
      const Reason* reason = attempt.status.reason();
      ++result.failed_by_reason[reason != nullptr ? std::string(reason->code) : "Unknown"];
    }
    const ArrivalSample sample =
        Observe(index++, placed, result.arrived_gpu_milli, result.failed_tasks, metrics);
    curves.Add(sample);
    if (options.keep_samples) result.samples.push_back(sample);
    if (options.progress != nullptr) options.progress->fetch_add(1, std::memory_order_relaxed);
  }

  result.arrived_tasks = static_cast<int64_t>(order.arrivals.size());
  curves.BuildInto(result);
  result.final_gpu_alloc_pct = metrics.GpuAllocationPct();
  result.final_cpu_alloc_pct = metrics.CpuAllocationPct();
  result.final_memory_alloc_pct = metrics.MemoryAllocationPct();
  result.final_frag_pct = metrics.FragmentPctOfCapacity();
  result.final_frag_ratio_pct = metrics.FragmentRatioPct();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera::sim::alibaba

// Placement throughput of the scheduler core on clusters shaped like the Alibaba openb fleet.
//
// Nodes are replicated from the openb GPU node list (1k, 10k, 100k nodes); tasks are drawn with
// a seeded Rng from the openb default pod list. Each iteration is one arrival (PlaceTask, then
// Assume) in a steady state: once the cluster holds 80% of its GPUs, the oldest task departs
// (Forget) in the same iteration, as on a busy server. One thread. Reported: placements/s.
// Every task class is evaluated once on every node before timing starts (a warm cache).
//
// Reads the trace from $TESSERA_TRACE_DIR or ../shared/traces (see scripts/fetch-traces.sh).
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "sched/plugins/builtin.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/alibaba/target_workload_builder.h"

namespace tessera {
namespace {

std::string TraceDir() {
  if (const char* env = std::getenv("TESSERA_TRACE_DIR")) return env;
  return "../shared/traces";
}

struct Trace {
  sim::alibaba::NodeList nodes;
  sim::alibaba::PodList pods;
  TargetWorkload workload;
};

const Trace* LoadTrace() {
  static const Trace* trace = [] {
    const std::string dir = TraceDir() + "/alibaba-gpu-v2023/";
    auto nodes = sim::alibaba::LoadNodeList(dir + "openb_node_list_gpu_node.csv");
    if (!nodes.ok()) return static_cast<Trace*>(nullptr);
    auto pods = sim::alibaba::LoadPodList(dir + "openb_pod_list_default.csv", nodes->models);
    if (!pods.ok()) return static_cast<Trace*>(nullptr);
    auto* t = new Trace{*std::move(nodes), *std::move(pods), {}};
    t->workload = sim::alibaba::BuildTargetWorkload(t->pods.tasks);
    return t;
  }();
  return trace;
}

class NoopSink : public DecisionSink {
 public:
  absl::Status Bind(std::string_view, int32_t, const Placement&) override {
    return absl::OkStatus();
  }
};

void BM_Placement(benchmark::State& bench, const std::string& policy) {
  const Trace* trace = LoadTrace();
  if (trace == nullptr) {
    bench.SkipWithError("trace not found: set TESSERA_TRACE_DIR");
    return;
  }
  const int64_t node_count = bench.range(0);
  ClusterState state;
  int64_t gpu_capacity = 0;
  for (int64_t i = 0; i < node_count; ++i) {
    Node node = trace->nodes.nodes[i % trace->nodes.nodes.size()];
    node.name = "node-" + std::to_string(i);
    gpu_capacity += node.capacity.gpu;
    if (!state.AddNode(std::move(node)).ok()) std::abort();
  }
  Rng rng(42);
  ManualClock clock;
  NoopSink sink;
  Handle handle{&rng, &clock, &trace->workload, &sink};
  auto framework = Framework::Create(*BuiltinProfile(policy), BuiltinPlugins(), handle);
  if (!framework.ok()) {
    bench.SkipWithError(std::string(framework.status().message()).c_str());
    return;
  }
  // Warm up: every task class of the trace is evaluated once on every node before timing, as
  // on a server that has been running for a while.
  for (const sim::alibaba::TraceTask& t : trace->pods.tasks)
    (*framework)->PlaceTask(state, t.request);
  Rng draw(7);
  std::deque<std::pair<const TaskRequest*, Placement>> running;
  int64_t gpu_in_use = 0;
  int64_t placed = 0;
  for (auto _ : bench) {
    const TaskRequest& task = trace->pods.tasks[draw.Uniform(trace->pods.tasks.size())].request;
    TaskAttempt attempt = (*framework)->PlaceTask(state, task);
    if (attempt.placement.has_value()) {
      if (!state.Assume(task, *attempt.placement).ok()) std::abort();
      running.emplace_back(&task, *std::move(attempt.placement));
      gpu_in_use += task.TotalGpuMilli();
      ++placed;
    }
    const bool full = gpu_in_use * 10 > gpu_capacity * 8 || !attempt.placement.has_value();
    if (full && !running.empty()) {
      const auto& [old_task, old_placement] = running.front();
      state.Forget(*old_task, old_placement);
      gpu_in_use -= old_task->TotalGpuMilli();
      running.pop_front();
    }
  }
  bench.counters["placements/s"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kIsRate);
  bench.counters["placed_fraction"] =
      static_cast<double>(placed) / static_cast<double>(bench.iterations());
}

BENCHMARK_CAPTURE(BM_Placement, LeastAllocated, std::string("default"))
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Placement, FGD, std::string("fgd"))
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Placement, FGD_CPU, std::string("fgdcpu"))
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();

// Cost of the fragmentation measure and of FGD's per-node evaluation, the hot path of the FGD
// policy: one node of 8 devices in a random partly used state, against a 35-class workload of
// the openb shape (CPU-only, sharing and whole-GPU classes, a few with a model constraint).
// Reported: time per node evaluation.
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "sched/plugins/gpushare/fgd.h"
#include "sched/plugins/gpushare/fragmentation.h"
#include "sched/plugins/gpushare/test_util.h"
#include "tessera/common/rng.h"

namespace tessera::gpushare {
namespace {

using testing::CpuTask;
using testing::GpuTask;
using testing::MakeNode;

TargetWorkload OpenbLikeWorkload() {
  Rng rng(2023);
  const std::vector<int64_t> shares = {160, 230, 320, 460, 470, 590, 650, 810, 1000, 1000, 1000};
  TargetWorkload w;
  for (int i = 0; i < 35; ++i) {
    TaskRequest r = i % 8 == 0 ? CpuTask(1000 * static_cast<int64_t>(1 + rng.Uniform(32)))
                               : GpuTask(1000 * static_cast<int64_t>(1 + rng.Uniform(24)), 1,
                                         shares[rng.Uniform(shares.size())]);
    if (r.gpu_milli == 1000 && rng.Uniform(4) == 0) r.gpu_count = 2;
    if (i % 11 == 5) r.gpu_models = {"V100M32"};
    w.classes.push_back({r, 1.0 / 35});
  }
  return w;
}

std::vector<Node> RandomNodes(int count) {
  Rng rng(7);
  std::vector<Node> nodes;
  for (int n = 0; n < count; ++n) {
    std::vector<int64_t> free;
    for (int d = 0; d < 8; ++d) {
      free.push_back(rng.Uniform(3) == 0 ? 1000 : 10 * static_cast<int64_t>(rng.Uniform(101)));
    }
    nodes.push_back(MakeNode(1000 * static_cast<int64_t>(8 + rng.Uniform(88)), free));
  }
  return nodes;
}

void BM_NodeFragmentation(benchmark::State& state) {
  const PreparedWorkload workload(OpenbLikeWorkload());
  const std::vector<Node> nodes = RandomNodes(1024);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(NodeFragmentation(nodes[i++ & 1023], workload));
  }
}
BENCHMARK(BM_NodeFragmentation);

void BM_FgdEvaluate(benchmark::State& state, TaskRequest task) {
  const PreparedWorkload workload(OpenbLikeWorkload());
  const std::vector<Node> nodes = RandomNodes(1024);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(EvaluateFgd(task, nodes[i++ & 1023], workload));
  }
}
BENCHMARK_CAPTURE(BM_FgdEvaluate, sharing, GpuTask(4000, 1, 300));
BENCHMARK_CAPTURE(BM_FgdEvaluate, whole_gpu, GpuTask(8000, 1, 1000));
BENCHMARK_CAPTURE(BM_FgdEvaluate, cpu_only, CpuTask(4000));

}  // namespace
}  // namespace tessera::gpushare

BENCHMARK_MAIN();

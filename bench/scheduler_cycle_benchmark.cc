// A whole scheduling cycle of the job-level Scheduler at scale: 10,000 nodes (8 GPUs, 64 cores,
// 512 GiB each), filled to about 90% of their GPUs by running jobs, 100 leaf queues under 10
// parents with guarantees, and 100,000 pending jobs (1-GPU, 8-GPU and 2 x 8-GPU gang jobs with
// time limits) waiting behind them. Reported: the wall time of the first cycle that tries every
// pending job (admission in fair-share order, gang placement, the EASY reservation and the
// backfill check of every job that fits) and of the cycles after it, for each backfill mode.
//
// Usage: scheduler_cycle_benchmark [NODES] [PENDING] [CYCLES]   (defaults 10000 100000 3)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sched/cluster_state.h"
#include "sched/plugins/builtin.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "tessera/common/clock.h"
#include "tessera/common/rng.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

class CountingSink final : public SchedulerSink {
 public:
  void OnPlaced(std::string_view, bool gang, std::span<const TaskBinding>) override {
    placed += gang;
  }
  void OnRefused(std::string_view, const PendingReason&) override { ++refused; }
  void OnPending(std::string_view, const PendingReason&) override { ++pending; }
  int64_t placed = 0;
  int64_t refused = 0;
  int64_t pending = 0;
};

Node MakeNode(int64_t i) {
  Node node;
  node.name = fmt::format("node-{}", i);
  node.capacity = Resources{.cpu = 64'000, .memory = 512 * kGi, .gpu = 8'000};
  node.allocatable = node.capacity;
  for (int32_t d = 0; d < 8; ++d) {
    node.gpus.push_back(GpuDevice{.index = d, .model = "A100", .memory = 80 * kGi});
  }
  return node;
}

JobSpec MakeJob(std::string queue, int32_t replicas, int32_t gpus, Duration limit, int32_t priority) {
  JobSpec spec;
  spec.queue = std::move(queue);
  spec.priority = priority;
  spec.time_limit = limit;
  TaskGroup group;
  group.name = "w";
  group.replicas = replicas;
  group.request.cpu = 4'000 * gpus;
  group.request.memory = 32 * kGi * gpus;
  group.request.gpu_count = gpus;
  group.request.gpu_milli = kMilliGpuPerDevice;
  spec.tasks.push_back(group);
  return spec;
}

std::vector<QueueSpec> Queues() {
  std::vector<QueueSpec> queues;
  for (int p = 0; p < 10; ++p) {
    queues.push_back(QueueSpec{.name = fmt::format("org-{}", p)});
    for (int l = 0; l < 10; ++l) {
      queues.push_back(QueueSpec{.name = fmt::format("team-{}-{}", p, l),
                                 .parent = fmt::format("org-{}", p),
                                 .guaranteed = {{"gpu", 800'000}},
                                 .weight = 1 + l % 3});
    }
  }
  return queues;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

int Run(int64_t nodes, int64_t pending, int cycles, BackfillMode mode, const char* label) {
  ClusterState state;
  for (int64_t i = 0; i < nodes; ++i) {
    if (!state.AddNode(MakeNode(i)).ok()) return 1;
  }
  Rng rng(7);
  ManualClock clock;
  SchedulingPolicy policy;
  policy.backfill = mode;
  auto scheduler = Scheduler::Create(*BuiltinProfile("default"), BuiltinPlugins(),
                                     SchedulerEnv{.rng = &rng, .clock = &clock}, policy);
  if (!scheduler.ok()) return 1;
  if (!(*scheduler)->SetQueues(Queues()).ok()) return 1;
  CountingSink sink;
  // Fill about 90% of the GPUs with running 1- and 8-GPU jobs of varied time limits.
  const int64_t fill = nodes * 8 * 9 / 10;
  int64_t gpus = 0;
  for (int64_t j = 0; gpus < fill; ++j) {
    const int32_t size = j % 4 == 0 ? 8 : 1;
    const std::string queue = fmt::format("team-{}-{}", j % 10, (j / 10) % 10);
    const Duration limit = std::chrono::minutes(10 + static_cast<int64_t>(rng.Uniform(600)));
    if (!(*scheduler)->Submit(fmt::format("run-{}", j), MakeJob(queue, 1, size, limit, 0)).ok()) {
      return 1;
    }
    gpus += size;
  }
  (*scheduler)->RunCycle(state, sink);
  const int64_t running = sink.placed;
  for (int64_t j = 0; j < pending; ++j) {
    const int kind = static_cast<int>(j % 10);
    const int32_t replicas = kind == 0 ? 2 : 1;
    const int32_t size = kind <= 2 ? 8 : 1;
    const std::string queue = fmt::format("team-{}-{}", j % 10, (j / 7) % 10);
    const Duration limit = std::chrono::minutes(5 + static_cast<int64_t>(rng.Uniform(240)));
    if (!(*scheduler)
             ->Submit(fmt::format("wait-{}", j),
                      MakeJob(queue, replicas, size, limit, static_cast<int32_t>(j % 3)))
             .ok()) {
      return 1;
    }
  }
  std::printf("%s: %lld nodes, %lld running jobs, %lld pending jobs\n", label,
              static_cast<long long>(nodes), static_cast<long long>(running),
              static_cast<long long>(pending));
  for (int c = 0; c < cycles; ++c) {
    clock.Set(clock.Now() + std::chrono::seconds(1));
    const int64_t placed_before = sink.placed;
    const auto start = std::chrono::steady_clock::now();
    (*scheduler)->RunCycle(state, sink);
    const double seconds = Seconds(std::chrono::steady_clock::now() - start);
    std::printf("  cycle %d: %.3f s, %lld jobs started, %.0f pending jobs tried per second\n",
                c + 1, seconds, static_cast<long long>(sink.placed - placed_before),
                static_cast<double>(pending) / seconds);
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  const int64_t nodes = argc > 1 ? std::atoll(argv[1]) : 10'000;
  const int64_t pending = argc > 2 ? std::atoll(argv[2]) : 100'000;
  const int cycles = argc > 3 ? std::atoi(argv[3]) : 3;
  using tessera::BackfillMode;
  if (tessera::Run(nodes, pending, cycles, BackfillMode::kNone, "backfill none") != 0) return 1;
  if (tessera::Run(nodes, pending, cycles, BackfillMode::kEasy, "backfill easy") != 0) return 1;
  return tessera::Run(nodes, pending, cycles, BackfillMode::kConservative,
                      "backfill conservative (16)");
}

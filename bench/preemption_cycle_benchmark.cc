// Preemption through the Scheduler's own path at fleet scale: the fleet of
// victim_search_benchmark (10,000 nodes of 8 GPUs, every node full: 1-GPU jobs, 2-node gangs
// of 4-GPU tasks or 4-node gangs of 8-GPU tasks, plus 10-task CPU-only jobs; priorities 0..3,
// starts over ten days, seeded) restored into one queue, and preemptors of priority 2 that
// must evict to fit. Each cycle tries a batch of new preemptors; each finds its victims (every
// lower-priority job of the queue is a candidate) and is then stopped by a preemption rate
// limit of zero, so that nothing is evicted and every preemptor searches the same state. A
// preemptor's time is the time between its pending reason and the previous one's (admission,
// the failed gang attempt, the victim search), in wall-clock and in the thread's CPU time; the
// first cycle warms the framework's caches and is not counted.
//
// In the second fleet only the 1-GPU and CPU-only jobs are preemptible: no single job frees
// room for an 8-GPU task, so every node must be ranked.
//
//   build/bench/preemption_cycle_benchmark [preemptors per cycle, default 50] [cycles, default 10]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
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
constexpr int32_t kNodes = 10'000;
constexpr int32_t kGpusPerNode = 8;
constexpr int32_t kCpuTasksPerNode = 25;
constexpr int32_t kCpuJobWidth = 10;

double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double WallMicros() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records when each preemptor heard its pending reason.
class TimingSink final : public SchedulerSink {
 public:
  void OnPlaced(std::string_view, bool, std::span<const TaskBinding>) override { ++placed; }
  void OnRefused(std::string_view, const PendingReason&) override { ++refused; }
  void OnPending(std::string_view, const PendingReason& reason) override {
    wall.push_back(WallMicros());
    cpu.push_back(ThreadCpuMicros());
    preempting += reason.message.find("rate limit") != std::string::npos;
  }
  std::vector<double> wall;
  std::vector<double> cpu;
  int64_t placed = 0;
  int64_t refused = 0;
  int64_t preempting = 0;  // preemptors that found victims (stopped by the rate limit)
};

TaskRequest Gpus(int32_t count) {
  TaskRequest t;
  t.cpu = 4000 * count;
  t.memory = 32 * kGi * count;
  t.gpu_count = count;
  t.gpu_milli = kMilliGpuPerDevice;
  return t;
}

TaskRequest CpuOnly() {
  TaskRequest t;
  t.cpu = 2000;
  t.memory = 8 * kGi;
  return t;
}

JobSpec SpecOf(const TaskRequest& task, int32_t replicas, int32_t priority, bool preemptible) {
  JobSpec spec;
  spec.queue = "default";
  spec.priority = priority;
  spec.preemptible = preemptible;
  spec.tasks.push_back(TaskGroup{.name = "w", .replicas = replicas, .request = task});
  return spec;
}

struct Fleet {
  ClusterState state;
  std::unique_ptr<Scheduler> scheduler;
  ManualClock clock;
  Rng rng{7};
  int64_t jobs = 0;
  int64_t tasks = 0;
  int64_t candidates = 0;
};

class FleetBuilder {
 public:
  FleetBuilder(Fleet& fleet, bool small_only)
      : fleet_(fleet), small_only_(small_only), rng_(42), next_gpu_(kNodes, 0) {}

  bool Build() {
    for (int32_t i = 0; i < kNodes; ++i) {
      Node node;
      node.name = fmt::format("node-{:05d}", i);
      node.capacity.cpu = 128'000;
      node.capacity.memory = 1024 * kGi;
      node.capacity.gpu = kGpusPerNode * kMilliGpuPerDevice;
      for (int32_t g = 0; g < kGpusPerNode; ++g) {
        node.gpus.push_back(GpuDevice{.index = g, .model = "A100", .memory = 80 * kGi});
      }
      node.capacity.gpu_memory = kGpusPerNode * 80 * kGi;
      node.allocatable = node.capacity;
      if (!fleet_.state.AddNode(std::move(node)).ok()) return false;
    }
    for (int32_t block = 0; block < kNodes / 4; ++block) {
      const int32_t first = block * 4;
      switch (rng_.Uniform(4)) {
        case 0:
          if (!Job(Gpus(8), {first, first + 1, first + 2, first + 3})) return false;
          break;
        case 1:
          for (int32_t k = 0; k < 2; ++k) {
            if (!Job(Gpus(4), {first, first + 1})) return false;
          }
          for (int32_t k = 0; k < 2; ++k) {
            if (!Job(Gpus(4), {first + 2, first + 3})) return false;
          }
          break;
        default:
          for (int32_t n = first; n < first + 4; ++n) {
            for (int32_t g = 0; g < kGpusPerNode; ++g) {
              if (!Job(Gpus(1), {n})) return false;
            }
          }
      }
    }
    for (int32_t round = 0; round < kCpuTasksPerNode; ++round) {
      for (int32_t start = round % kCpuJobWidth; start < kNodes + round % kCpuJobWidth;
           start += kCpuJobWidth) {
        std::vector<int32_t> nodes;
        for (int32_t k = 0; k < kCpuJobWidth; ++k) nodes.push_back((start + k) % kNodes);
        if (!Job(CpuOnly(), nodes)) return false;
      }
    }
    return true;
  }

 private:
  bool Job(const TaskRequest& task, const std::vector<int32_t>& nodes) {
    const auto priority = static_cast<int32_t>(rng_.Uniform(4));
    const TimePoint start = TimePoint{} + std::chrono::seconds(1'000'000 + rng_.Uniform(864'000));
    const bool preemptible = !small_only_ || task.gpu_count <= 1;
    std::vector<TaskBinding> placed;
    for (size_t k = 0; k < nodes.size(); ++k) {
      Placement p;
      p.node_index = nodes[k];
      p.node = fleet_.state.node(nodes[k]).name;
      for (int32_t g = 0; g < task.gpu_count; ++g) p.gpus.push_back(next_gpu_[nodes[k]]++);
      p.gpu_milli = task.gpu_count > 0 ? task.gpu_milli : 0;
      if (!fleet_.state.Assume(task, p).ok()) return false;
      placed.push_back(TaskBinding{.task = static_cast<int32_t>(k), .placement = std::move(p)});
    }
    const JobSpec spec = SpecOf(task, static_cast<int32_t>(nodes.size()), priority, preemptible);
    if (!fleet_.scheduler->Restore(fmt::format("run-{}", fleet_.jobs), spec, placed, start).ok()) {
      return false;
    }
    ++fleet_.jobs;
    fleet_.tasks += static_cast<int64_t>(nodes.size());
    fleet_.candidates += priority < 2 && preemptible;
    return true;
  }

  Fleet& fleet_;
  bool small_only_;
  Rng rng_;
  std::vector<int32_t> next_gpu_;
};

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[i];
}

void RunCase(const char* name, Fleet& fleet, const TaskRequest& task, int32_t replicas,
             int32_t per_cycle, int32_t cycles) {
  std::vector<double> wall;
  std::vector<double> cpu;
  int64_t preempting = 0;
  int64_t tried = 0;
  static int64_t next = 0;
  for (int32_t c = 0; c <= cycles; ++c) {
    std::vector<std::string> names;
    for (int32_t k = 0; k < per_cycle; ++k) {
      names.push_back(fmt::format("preemptor-{}", next++));
      if (!fleet.scheduler->Submit(names.back(), SpecOf(task, replicas, 2, true)).ok()) {
        std::abort();
      }
    }
    TimingSink sink;
    fleet.clock.Set(fleet.clock.Now() + std::chrono::seconds(1));
    fleet.scheduler->RunCycle(fleet.state, sink);
    for (const std::string& n : names) fleet.scheduler->Remove(n);
    if (sink.placed != 0 || sink.refused != 0) std::abort();
    if (c == 0) continue;  // warm-up
    for (size_t k = 1; k < sink.wall.size(); ++k) {
      wall.push_back(sink.wall[k] - sink.wall[k - 1]);
      cpu.push_back(sink.cpu[k] - sink.cpu[k - 1]);
    }
    preempting += sink.preempting;
    tried += static_cast<int64_t>(sink.wall.size());
  }
  std::printf(
      "%-22s wall p50 %7.1f us p99 %7.1f us max %7.1f us | cpu p50 %7.1f us p99 %7.1f us | "
      "%lld of %lld found victims\n",
      name, Percentile(wall, 0.5), Percentile(wall, 0.99),
      *std::max_element(wall.begin(), wall.end()), Percentile(cpu, 0.5), Percentile(cpu, 0.99),
      static_cast<long long>(preempting), static_cast<long long>(tried));
}

int MakeFleet(Fleet& fleet, bool small_only) {
  SchedulingPolicy policy;
  policy.preemption = true;
  policy.preemption_rate_max = 0;  // every search is refused: the state stays as built
  auto scheduler =
      Scheduler::Create(*BuiltinProfile("default"), BuiltinPlugins(),
                        SchedulerEnv{.rng = &fleet.rng, .clock = &fleet.clock}, policy);
  if (!scheduler.ok()) return 1;
  fleet.scheduler = *std::move(scheduler);
  if (!FleetBuilder(fleet, small_only).Build()) return 1;
  fleet.clock.Set(TimePoint{} + std::chrono::seconds(2'000'000));  // every job past its start
  std::printf("%d nodes, %lld running tasks in %lld jobs; %lld candidates (priority 0 or 1%s)\n",
              kNodes, static_cast<long long>(fleet.tasks), static_cast<long long>(fleet.jobs),
              static_cast<long long>(fleet.candidates),
              small_only ? ", 1-GPU and CPU-only jobs only" : "");
  return 0;
}

int Main(int argc, char** argv) {
  const int32_t per_cycle = argc > 1 ? std::atoi(argv[1]) : 50;
  const int32_t cycles = argc > 2 ? std::atoi(argv[2]) : 10;
  {
    Fleet fleet;
    if (MakeFleet(fleet, /*small_only=*/false) != 0) return 1;
    RunCase("1 task x 1 GPU", fleet, Gpus(1), 1, per_cycle, cycles);
    RunCase("1 task x 8 GPUs", fleet, Gpus(8), 1, per_cycle, cycles);
    RunCase("gang 4 tasks x 8 GPUs", fleet, Gpus(8), 4, per_cycle, cycles);
  }
  Fleet fleet;
  if (MakeFleet(fleet, /*small_only=*/true) != 0) return 1;
  RunCase("1 task x 8 GPUs", fleet, Gpus(8), 1, per_cycle, cycles);
  RunCase("gang 4 tasks x 8 GPUs", fleet, Gpus(8), 4, per_cycle, cycles);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }

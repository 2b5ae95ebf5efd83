// Backfill planning at fleet scale: 10,000 nodes of 8 GPUs, about 100,000 running tasks.
//
// Each block of 4 nodes runs one 4-node gang of 8-GPU tasks, two 2-node gangs of 4-GPU tasks
// per node pair, or 1-GPU jobs (one of its nodes keeps 4 GPUs free); 8 CPU-only tasks of
// 10-node jobs share every node. Every job ends at a random second of the next 24 hours (1 in 20
// has no time limit), so there are tens of thousands of distinct release instants. Blocked jobs
// are gangs of 8 to 64 whole-node tasks with time limits of 1 to 12 hours.
//
// Figures, each in wall-clock and in this thread's CPU time (the one to read on a shared
// machine):
//   Plan, 1 blocked job (EASY)           per call
//   Plan, 16 blocked jobs (conservative) per call
//   Delays, per candidate: 1-GPU jobs placed now by the Framework, ending at a random time
//     (mostly the fast path), and CPU-only jobs put on a reserved node (the slow path)
//
//   build/src/sched/backfill/backfill_benchmark [plan calls, default 10] [candidates, default 2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sched/backfill/backfill_planner.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "sched/plugins/builtin.h"
#include "sched/profile.h"
#include "tessera/common/rng.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int32_t kNodes = 10'000;
constexpr int32_t kGpusPerNode = 8;
constexpr int32_t kCpuTasksPerNode = 8;
constexpr int32_t kCpuJobWidth = 10;
constexpr int64_t kHorizonSeconds = 24 * 3600;

class NoSink final : public DecisionSink {
 public:
  absl::Status Bind(std::string_view, int32_t, const Placement&) override {
    return absl::OkStatus();
  }
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

struct Fleet {
  ClusterState state;
  std::vector<PlannedRelease> running;
  int64_t tasks = 0;
};

class FleetBuilder {
 public:
  explicit FleetBuilder(Fleet& fleet) : fleet_(fleet), rng_(42), next_gpu_(kNodes, 0) {}

  void Build() {
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
      if (!fleet_.state.AddNode(std::move(node)).ok()) std::abort();
    }
    for (int32_t block = 0; block < kNodes / 4; ++block) {
      const int32_t first = block * 4;
      switch (rng_.Uniform(3)) {
        case 0:
          Job({{first, Gpus(8)}, {first + 1, Gpus(8)}, {first + 2, Gpus(8)}, {first + 3, Gpus(8)}});
          break;
        case 1:
          for (int32_t k = 0; k < 2; ++k) Job({{first, Gpus(4)}, {first + 1, Gpus(4)}});
          for (int32_t k = 0; k < 2; ++k) Job({{first + 2, Gpus(4)}, {first + 3, Gpus(4)}});
          break;
        default:  // 1-GPU jobs; the block's last node keeps 4 GPUs free
          for (int32_t n = first; n < first + 4; ++n) {
            const int32_t gpus = n == first + 3 ? kGpusPerNode / 2 : kGpusPerNode;
            for (int32_t g = 0; g < gpus; ++g) Job({{n, Gpus(1)}});
          }
      }
    }
    for (int32_t round = 0; round < kCpuTasksPerNode; ++round) {
      for (int32_t start = round % kCpuJobWidth; start < kNodes + round % kCpuJobWidth;
           start += kCpuJobWidth) {
        std::vector<std::pair<int32_t, TaskRequest>> tasks;
        for (int32_t k = 0; k < kCpuJobWidth; ++k) {
          tasks.emplace_back((start + k) % kNodes, CpuOnly());
        }
        Job(tasks);
      }
    }
  }

 private:
  void Job(const std::vector<std::pair<int32_t, TaskRequest>>& tasks) {
    PlannedRelease r;
    r.job = static_cast<int64_t>(fleet_.running.size());
    r.end = rng_.Uniform(20) == 0
                ? TimePoint::max()
                : TimePoint{} + std::chrono::seconds(1 + rng_.Uniform(kHorizonSeconds));
    for (const auto& [node, task] : tasks) {
      Placement p;
      p.node_index = node;
      p.node = fleet_.state.node(node).name;
      for (int32_t g = 0; g < task.gpu_count; ++g) p.gpus.push_back(next_gpu_[node]++);
      p.gpu_milli = task.gpu_count > 0 ? task.gpu_milli : 0;
      if (!fleet_.state.Assume(task, p).ok()) std::abort();
      ++fleet_.tasks;
      r.tasks.push_back(task);
      r.placements.push_back(std::move(p));
    }
    fleet_.running.push_back(std::move(r));
  }

  Fleet& fleet_;
  Rng rng_;
  std::vector<int32_t> next_gpu_;
};

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

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[i];
}

void Report(const std::string& what, const std::vector<double>& wall,
            const std::vector<double>& cpu, const char* unit, double scale) {
  std::printf("%-40s wall p50 %9.1f p99 %9.1f %s | cpu p50 %9.1f p99 %9.1f %s (%zu calls)\n",
              what.c_str(), Percentile(wall, 0.5) / scale, Percentile(wall, 0.99) / scale, unit,
              Percentile(cpu, 0.5) / scale, Percentile(cpu, 0.99) / scale, unit, wall.size());
}

std::vector<BlockedJob> BlockedJobs(Rng& rng, int32_t count) {
  std::vector<BlockedJob> blocked;
  for (int32_t i = 0; i < count; ++i) {
    BlockedJob job;
    job.job = 1'000'000 + i;
    job.tasks.assign(8 + rng.Uniform(57), Gpus(kGpusPerNode));
    job.min_available = static_cast<int32_t>(job.tasks.size());
    job.time_limit = std::chrono::hours(1 + rng.Uniform(12));
    blocked.push_back(std::move(job));
  }
  return blocked;
}

int Main(int argc, char** argv) {
  const int plan_calls = argc > 1 ? std::atoi(argv[1]) : 10;
  const int candidates = argc > 2 ? std::atoi(argv[2]) : 2000;
  Fleet fleet;
  FleetBuilder(fleet).Build();
  std::printf("fleet: %d nodes, %lld running tasks in %zu jobs\n", kNodes,
              static_cast<long long>(fleet.tasks), fleet.running.size());

  Rng rng(7);
  NoSink sink;
  Handle handle{.rng = &rng, .sink = &sink};
  absl::StatusOr<Profile> profile = BuiltinProfile("default");
  if (!profile.ok()) return 1;
  absl::StatusOr<std::unique_ptr<Framework>> framework =
      Framework::Create(*profile, BuiltinPlugins(), handle);
  if (!framework.ok()) return 1;
  BackfillPlanner planner(framework->get());
  const TimePoint now{};
  ReleaseSchedule releases;  // kept across plans, as the Scheduler keeps it
  for (const PlannedRelease& r : fleet.running) releases.Set(r);

  Rng jobs_rng(11);
  const std::vector<BlockedJob> blocked = BlockedJobs(jobs_rng, 16);
  std::vector<Reservation> plan;
  for (int32_t depth : {1, 16}) {
    std::vector<double> wall;
    std::vector<double> cpu;
    const std::span<const BlockedJob> jobs(blocked.data(), static_cast<size_t>(depth));
    plan = planner.Plan(fleet.state, now, releases, jobs);  // warm the class caches
    for (int i = 0; i < plan_calls; ++i) {
      const double w = WallMicros();
      const double c = ThreadCpuMicros();
      plan = planner.Plan(fleet.state, now, releases, jobs);
      cpu.push_back(ThreadCpuMicros() - c);
      wall.push_back(WallMicros() - w);
    }
    Report(fmt::format("Plan, {} blocked job(s)", depth), wall, cpu, "ms", 1000);
    for (const Reservation& r : plan) {
      std::printf("  job %lld: %zu tasks, start %+.1f h\n", static_cast<long long>(r.job),
                  r.placements.size(),
                  r.start == TimePoint::max()
                      ? -1.0
                      : std::chrono::duration<double, std::ratio<3600>>(r.start - now).count());
    }
  }

  // Delays against the 16-job plan, for 1-GPU candidates placed now.
  const std::vector<TaskRequest> one{Gpus(1)};
  std::vector<double> wall;
  std::vector<double> cpu;
  int64_t delayed = 0;
  Rng end_rng(5);
  for (int i = 0; i < candidates; ++i) {
    GangAttempt g =
        (*framework)->ScheduleGang(fleet.state, "candidate", one, 1, MatchMode::kWithoutAllocating);
    if (!g.status.ok()) return 1;
    const TimePoint end = now + std::chrono::seconds(1 + end_rng.Uniform(kHorizonSeconds));
    const double w = WallMicros();
    const double c = ThreadCpuMicros();
    delayed += planner.Delays(fleet.state, now, releases, plan, one, g.placements, end);
    cpu.push_back(ThreadCpuMicros() - c);
    wall.push_back(WallMicros() - w);
  }
  Report("Delays, 1-GPU candidate placed now", wall, cpu, "us", 1);
  std::printf("  %lld of %d candidates would delay a reservation\n",
              static_cast<long long>(delayed), candidates);

  // Delays for candidates put on a node some reservation holds — a 1-GPU task when the node
  // has a free GPU now, else a CPU-only one: the slow path, which looks at what the running
  // jobs release there.
  wall.clear();
  cpu.clear();
  delayed = 0;
  int64_t gpu_candidates = 0;
  for (int i = 0; i < candidates; ++i) {
    const Reservation& r = plan[static_cast<size_t>(i) % plan.size()];
    if (r.placements.empty()) continue;
    Placement p;
    p.node_index = r.placements[end_rng.Uniform(r.placements.size())].node_index;
    p.node = fleet.state.node(p.node_index).name;
    std::vector<TaskRequest> task{CpuOnly()};
    for (const GpuDevice& d : fleet.state.node(p.node_index).gpus) {
      if (d.used_milli == 0) {
        task = {Gpus(1)};
        ++gpu_candidates;
        p.gpus = {d.index};
        p.gpu_milli = kMilliGpuPerDevice;
        break;
      }
    }
    const std::vector<Placement> where{p};
    const TimePoint end = now + std::chrono::seconds(1 + end_rng.Uniform(kHorizonSeconds));
    const double w = WallMicros();
    const double c = ThreadCpuMicros();
    delayed += planner.Delays(fleet.state, now, releases, plan, task, where, end);
    cpu.push_back(ThreadCpuMicros() - c);
    wall.push_back(WallMicros() - w);
  }
  Report("Delays, candidate on a reserved node", wall, cpu, "us", 1);
  std::printf("  %lld of %zu candidates (%lld with a GPU) would delay a reservation\n",
              static_cast<long long>(delayed), wall.size(), static_cast<long long>(gpu_candidates));
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }

// Victim search latency at fleet scale: 10,000 nodes of 8 GPUs, about 300,000 running tasks.
//
// Every node is full: its 8 GPUs are held by eight 1-GPU jobs, by two 4-GPU tasks of 2-node
// gangs, or by one 8-GPU task of a 4-node gang, and 25 CPU-only tasks of 10-task jobs spread
// over 10 nodes fill it to 30 tasks. Job priorities are drawn from 0..3 and start times from
// the last ten days (seeded). The preemptor has priority 2: the candidates are every job of
// priority 0 or 1 (tens of thousands). Each scenario calls FindVictims repeatedly on the same
// state (which it leaves as given) and prints the latency percentiles of one call, in wall-clock
// time and in the thread's CPU time: first over the candidate list, then over a VictimIndex of
// the same candidates built once (victim_index.h), which must choose the same victims.
//
//   build/src/sched/preemption/victim_search_benchmark [calls per scenario, default 500]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sched/cluster_state.h"
#include "sched/framework.h"
#include "sched/plugins/builtin.h"
#include "sched/preemption/victim_search.h"
#include "sched/profile.h"
#include "tessera/common/rng.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int32_t kNodes = 10'000;
constexpr int32_t kGpusPerNode = 8;
constexpr int32_t kCpuTasksPerNode = 25;
constexpr int32_t kCpuJobWidth = 10;
constexpr int32_t kPreemptorPriority = 2;

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
  std::vector<VictimCandidate> candidates;        // every job of priority below the preemptor's
  std::vector<VictimCandidate> small_candidates;  // of those, the 1-GPU and CPU-only jobs
  int64_t tasks = 0;
  int64_t jobs = 0;
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
    // GPUs: blocks of 4 nodes, each block one of three layouts.
    for (int32_t block = 0; block < kNodes / 4; ++block) {
      const int32_t first = block * 4;
      switch (rng_.Uniform(4)) {
        case 0:  // one 4x8 gang
          Job({{first, Gpus(8)}, {first + 1, Gpus(8)}, {first + 2, Gpus(8)}, {first + 3, Gpus(8)}});
          break;
        case 1:  // 2-node gangs of 4-GPU tasks
          for (int32_t k = 0; k < 2; ++k) Job({{first, Gpus(4)}, {first + 1, Gpus(4)}});
          for (int32_t k = 0; k < 2; ++k) Job({{first + 2, Gpus(4)}, {first + 3, Gpus(4)}});
          break;
        default:  // 1-GPU jobs
          for (int32_t n = first; n < first + 4; ++n) {
            for (int32_t g = 0; g < kGpusPerNode; ++g) Job({{n, Gpus(1)}});
          }
      }
    }
    // CPU-only jobs of 10 tasks on 10 consecutive nodes (wrapping), 22 tasks per node.
    for (int32_t round = 0; round < kCpuTasksPerNode; ++round) {
      for (int32_t start = round % kCpuJobWidth; start < kNodes + round % kCpuJobWidth;
           start += kCpuJobWidth) {
        std::vector<std::pair<int32_t, TaskRequest>> tasks;
        for (int32_t k = 0; k < kCpuJobWidth; ++k)
          tasks.emplace_back((start + k) % kNodes, CpuOnly());
        Job(tasks);
      }
    }
  }

 private:
  void Job(const std::vector<std::pair<int32_t, TaskRequest>>& tasks) {
    VictimCandidate c;
    c.job = fleet_.jobs++;
    c.priority = static_cast<int32_t>(rng_.Uniform(4));
    c.start_time = TimePoint{} + std::chrono::seconds(1'000'000 + rng_.Uniform(864'000));
    for (const auto& [node, task] : tasks) {
      Placement p;
      p.node_index = node;
      p.node = fleet_.state.node(node).name;
      for (int32_t g = 0; g < task.gpu_count; ++g) p.gpus.push_back(next_gpu_[node]++);
      p.gpu_milli = task.gpu_count > 0 ? task.gpu_milli : 0;
      if (!fleet_.state.Assume(task, p).ok()) std::abort();
      ++fleet_.tasks;
      c.tasks.push_back(task);
      c.placements.push_back(std::move(p));
    }
    if (c.priority >= kPreemptorPriority) return;
    const bool small = std::all_of(c.tasks.begin(), c.tasks.end(),
                                   [](const TaskRequest& t) { return t.gpu_count <= 1; });
    if (small) fleet_.small_candidates.push_back(c);
    fleet_.candidates.push_back(std::move(c));
  }

  Fleet& fleet_;
  Rng rng_;
  std::vector<int32_t> next_gpu_;
};

// This thread's CPU time: unlike the wall clock, it leaves out time the thread was not running
// (the figure to read on a shared machine).
double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[i];
}

// One search, over the candidate list or, when `index` is given, over the index.
std::optional<VictimChoice> Search(Fleet& fleet, Framework& framework,
                                   const std::vector<TaskRequest>& tasks, int32_t min_available,
                                   const std::vector<VictimCandidate>& candidates,
                                   const VictimIndex* index) {
  if (index != nullptr) {
    return FindVictims(fleet.state, framework, tasks, min_available, *index, kPreemptorPriority);
  }
  return FindVictims(fleet.state, framework, tasks, min_available, candidates);
}

// Returns the victims' handles of the last call.
std::vector<int64_t> RunScenario(const char* name, Fleet& fleet, Framework& framework,
                                 const std::vector<TaskRequest>& tasks, int32_t min_available,
                                 const std::vector<VictimCandidate>& candidates,
                                 const VictimIndex* index, int32_t calls) {
  std::vector<double> micros;
  std::vector<double> cpu_micros;
  size_t victims = 0;
  bool found = false;
  std::vector<int64_t> jobs;
  for (int32_t i = 0; i < calls + 5; ++i) {
    const double cpu_begin = ThreadCpuMicros();
    const auto begin = std::chrono::steady_clock::now();
    std::optional<VictimChoice> choice =
        Search(fleet, framework, tasks, min_available, candidates, index);
    const auto end = std::chrono::steady_clock::now();
    const double cpu_end = ThreadCpuMicros();
    if (i < 5) continue;  // warm-up: the framework's caches for the preemptor's class
    micros.push_back(std::chrono::duration<double, std::micro>(end - begin).count());
    cpu_micros.push_back(cpu_end - cpu_begin);
    found = choice.has_value();
    victims = found ? choice->jobs.size() : 0;
    jobs = found ? choice->jobs : std::vector<int64_t>{};
  }
  std::printf(
      "%-22s wall p50 %7.1f us p99 %7.1f us max %7.1f us | cpu p50 %7.1f us p99 %7.1f us | %s, "
      "%zu victims\n",
      name, Percentile(micros, 0.5), Percentile(micros, 0.99),
      *std::max_element(micros.begin(), micros.end()), Percentile(cpu_micros, 0.5),
      Percentile(cpu_micros, 0.99), found ? "found" : "none", victims);
  return jobs;
}

struct Case {
  const char* name;
  std::vector<TaskRequest> tasks;
  int32_t min_available;
  bool small;  // the small candidates only
};

int Main(int argc, char** argv) {
  const int32_t calls = argc > 1 ? std::atoi(argv[1]) : 500;
  Fleet fleet;
  FleetBuilder(fleet).Build();
  Rng rng(7);
  ManualClock clock;
  NoSink sink;
  absl::StatusOr<Profile> profile = BuiltinProfile("default");
  if (!profile.ok()) return 1;
  absl::StatusOr<std::unique_ptr<Framework>> framework = Framework::Create(
      *profile, BuiltinPlugins(), Handle{.rng = &rng, .clock = &clock, .sink = &sink});
  if (!framework.ok()) return 1;
  int64_t candidate_tasks = 0;
  for (const VictimCandidate& c : fleet.candidates)
    candidate_tasks += static_cast<int64_t>(c.tasks.size());
  std::printf("%d nodes, %lld running tasks in %lld jobs; %zu candidates holding %lld tasks\n",
              kNodes, static_cast<long long>(fleet.tasks), static_cast<long long>(fleet.jobs),
              fleet.candidates.size(), static_cast<long long>(candidate_tasks));
  const std::vector<TaskRequest> gang(4, Gpus(8));
  // In the small cases no single job holds 8 GPUs of a node: whole nodes are ranked by the
  // victims they need.
  const std::vector<Case> cases = {
      {"1 task x 1 GPU", {Gpus(1)}, 1, false},   {"1 task x 8 GPUs", {Gpus(8)}, 1, false},
      {"gang 4 tasks x 8 GPUs", gang, 4, false}, {"1 task x 8 GPUs", {Gpus(8)}, 1, true},
      {"gang 4 tasks x 8 GPUs", gang, 4, true},
  };
  VictimIndex all;
  for (const VictimCandidate& c : fleet.candidates) all.Add(c);
  VictimIndex small;
  for (const VictimCandidate& c : fleet.small_candidates) small.Add(c);
  std::vector<std::vector<int64_t>> plain_victims;
  for (const bool indexed : {false, true}) {
    std::printf("%s\n",
                indexed ? "over a VictimIndex of the same candidates" : "over the candidate list");
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      if (k == 0 || c.small != cases[k - 1].small) {
        if (c.small) {
          std::printf(" candidates: the 1-GPU and CPU-only jobs of priority 0 or 1 (%zu)\n",
                      fleet.small_candidates.size());
        } else {
          std::printf(" candidates: every job of priority 0 or 1\n");
        }
      }
      const std::vector<VictimCandidate>& list =
          c.small ? fleet.small_candidates : fleet.candidates;
      const VictimIndex* index = !indexed ? nullptr : c.small ? &small : &all;
      rng = Rng(7);  // the same tie-breaks for both
      std::vector<int64_t> victims =
          RunScenario(c.name, fleet, **framework, c.tasks, c.min_available, list, index, calls);
      if (!indexed) {
        plain_victims.push_back(std::move(victims));
      } else if (victims != plain_victims[k]) {
        std::printf("  the index chose other victims than the list\n");
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }

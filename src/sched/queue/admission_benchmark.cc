// Admissions per second with 10,000 queues and 1,000,000 pending jobs.
//
// One admission is what the Scheduler does per admitted job: Cycle::Next, QueueTree::CanAdmit,
// QueueTree::Admit, Cycle::Admitted. Each iteration runs one cycle of kAdmissionsPerCycle
// admissions out of the million pending jobs; between iterations (untimed) the admitted jobs are
// released and queued again. Trees: 100 parents x 100 leaves, and one root over 10,000 leaves.
//
//   build-queue/src/sched/queue/admission_benchmark --benchmark_counters_tabular=true
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "sched/queue/admission_queue.h"
#include "sched/queue/queue_tree.h"

namespace tessera {
namespace {

constexpr int kQueues = 10'000;
constexpr int64_t kJobs = 1'000'000;
constexpr int kAdmissionsPerCycle = 100'000;

std::vector<QueueSpec> Tree(int parents) {
  std::vector<QueueSpec> specs;
  const int leaves_per_parent = kQueues / parents;
  specs.push_back(QueueSpec{.name = "root"});
  for (int p = 0; p < parents; ++p) {
    const std::string parent = parents == 1 ? "root" : "org-" + std::to_string(p);
    if (parents > 1) specs.push_back(QueueSpec{.name = parent, .parent = "root"});
    for (int l = 0; l < leaves_per_parent; ++l) {
      specs.push_back(QueueSpec{
          .name = parent + "-team-" + std::to_string(l),
          .parent = parent,
          .guaranteed = {{"gpu", 64'000}, {"cpu", 512'000}, {"gpu:A100", 32'000}},
          .weight = 1 + l % 3,
          .priority = l % 2,
      });
    }
  }
  return specs;
}

void BM_Admission(benchmark::State& state) {
  const int parents = static_cast<int>(state.range(0));
  const FairShareMode mode = state.range(1) != 0 ? FairShareMode::kDrf : FairShareMode::kNone;
  QueueTree tree = *QueueTree::Create(Tree(parents));
  tree.SetCapacity({{"cpu", int64_t{1} << 40}, {"memory", int64_t{1} << 50}, {"gpu", 1 << 30}});
  tree.Configure(mode, std::chrono::hours(1));
  AdmissionQueue queue(&tree, std::chrono::minutes(1));
  std::vector<int32_t> leaves;
  for (int32_t q = 0; q < tree.size(); ++q) {
    if (tree.IsLeaf(q)) leaves.push_back(q);
  }
  // Job j: leaf j % leaves, a priority of 0..9, a charge of one of 4 shapes.
  const std::vector<ResourceList> shapes = {
      {{"cpu", 4000}, {"memory", int64_t{16} << 30}, {"gpu", 1000}, {"gpu:A100", 1000}},
      {{"cpu", 32'000}, {"memory", int64_t{256} << 30}, {"gpu", 8000}},
      {{"cpu", 1000}, {"memory", int64_t{2} << 30}},
      {{"cpu", 2000}, {"memory", int64_t{8} << 30}, {"gpu", 500}}};
  const auto leaf_of = [&](int64_t j) { return leaves[j % static_cast<int64_t>(leaves.size())]; };
  const auto add = [&](int64_t j, TimePoint now) {
    queue.Add(j, leaf_of(j), static_cast<int32_t>(j % 10), j, now);
  };
  for (int64_t j = 0; j < kJobs; ++j) add(j, TimePoint{} + std::chrono::milliseconds(j));
  TimePoint now = TimePoint{} + std::chrono::hours(1);
  std::vector<int64_t> admitted;
  admitted.reserve(kAdmissionsPerCycle);
  for (auto _ : state) {
    AdmissionQueue::Cycle cycle = queue.StartCycle(now);
    while (admitted.size() < kAdmissionsPerCycle) {
      const std::optional<int64_t> job = cycle.Next();
      if (!job) break;
      const ResourceList& charge = shapes[*job % shapes.size()];
      const int32_t leaf = leaf_of(*job);
      if (tree.CanAdmit(leaf, charge).fits) {
        tree.Admit(leaf, charge);
        cycle.Admitted();
        admitted.push_back(*job);
      } else {
        cycle.Blocked();
      }
    }
    state.PauseTiming();
    for (int64_t j : admitted) {
      tree.Release(leaf_of(j), shapes[j % shapes.size()]);
      add(j, now);
    }
    state.counters["admitted"] += static_cast<double>(admitted.size());
    admitted.clear();
    now += std::chrono::seconds(10);
    state.ResumeTiming();
  }
  state.counters["admissions_per_s"] =
      benchmark::Counter(state.counters["admitted"], benchmark::Counter::kIsRate);
  state.counters["admitted"] /= static_cast<double>(state.iterations());
  state.counters["pending"] = static_cast<double>(queue.size());
}

// {parents (1 = a flat root over 10,000 leaves), fair share (1 = drf, 0 = none)}
BENCHMARK(BM_Admission)
    ->ArgNames({"parents", "drf"})
    ->Args({100, 1})
    ->Args({1, 1})
    ->Args({100, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();

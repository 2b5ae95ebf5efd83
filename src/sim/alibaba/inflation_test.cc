#include "sim/alibaba/inflation.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::sim::alibaba {
namespace {

std::vector<TraceTask> Trace() {
  std::vector<TraceTask> tasks;
  const std::pair<int32_t, int64_t> shapes[] = {{1, 500}, {1, 1000}, {0, 0}, {2, 1000}, {1, 250}};
  for (int i = 0; i < 50; ++i) {
    TraceTask t;
    t.name = "pod-" + std::to_string(1000 + i);
    t.request.cpu = 1000;
    t.request.gpu_count = shapes[i % 5].first;
    t.request.gpu_milli = shapes[i % 5].second;
    tasks.push_back(t);
  }
  std::reverse(tasks.begin(), tasks.end());  // file order differs from name order
  return tasks;
}

int64_t Total(const std::vector<TraceTask>& tasks) {
  int64_t sum = 0;
  for (const auto& t : tasks) sum += t.request.TotalGpuMilli();
  return sum;
}

TEST(InflationTest, WithoutTuningEveryTaskArrivesOnceInShuffledOrder) {
  const auto tasks = Trace();
  Rng rng(42);
  const ArrivalOrder order = BuildArrivalOrder(tasks, 100000, 0, rng);
  ASSERT_EQ(order.arrivals.size(), tasks.size());
  std::set<int32_t> seen;
  for (const Arrival& a : order.arrivals) {
    EXPECT_EQ(a.clone, -1);
    seen.insert(a.task);
  }
  EXPECT_EQ(seen.size(), tasks.size());
  EXPECT_EQ(order.requested_gpu_milli, Total(tasks));
}

TEST(InflationTest, AppendsClonesAfterTheOriginalsUpToTheTarget) {
  const auto tasks = Trace();
  const int64_t total = Total(tasks);  // 50 tasks: 10 x (500 + 1000 + 0 + 2000 + 250) = 37500
  const int64_t capacity = total;      // ratio 1.3 -> target 48750
  Rng rng(7);
  const ArrivalOrder order = BuildArrivalOrder(tasks, capacity, 1.3, rng);
  ASSERT_GT(order.clones, 0);
  ASSERT_EQ(order.arrivals.size(), tasks.size() + order.clones);
  for (size_t i = 0; i < order.arrivals.size(); ++i) {
    EXPECT_EQ(order.arrivals[i].clone, i < tasks.size() ? -1 : static_cast<int32_t>(i - 50));
  }
  // Like the artifact, only the clone's per-device share is checked against the target, so a
  // 2-GPU clone may overshoot it by at most one device.
  EXPECT_LE(order.requested_gpu_milli, 48750 + 1000);
  EXPECT_GT(order.requested_gpu_milli, 48750 - 1000);
}

TEST(InflationTest, RemovesTasksWhenTheTraceIsAboveTheTarget) {
  const auto tasks = Trace();
  Rng rng(3);
  const ArrivalOrder order = BuildArrivalOrder(tasks, 10000, 1.3, rng);  // target 13000
  EXPECT_GT(order.removed, 0);
  EXPECT_LE(order.requested_gpu_milli, 13000);
  EXPECT_EQ(order.arrivals.size() + order.removed, tasks.size());
}

TEST(InflationTest, TheSameSeedGivesTheSameOrderAndOthersDiffer) {
  const auto tasks = Trace();
  auto order_of = [&](uint64_t seed) {
    Rng rng(seed);
    std::vector<std::pair<int32_t, int32_t>> out;
    for (const Arrival& a : BuildArrivalOrder(tasks, 30000, 1.3, rng).arrivals) {
      out.emplace_back(a.task, a.clone);
    }
    return out;
  };
  EXPECT_EQ(order_of(42), order_of(42));
  EXPECT_NE(order_of(42), order_of(43));
}

TEST(InflationTest, ShuffleStartsFromNameOrderSoFileOrderDoesNotMatter) {
  auto tasks = Trace();
  auto reversed = tasks;
  std::reverse(reversed.begin(), reversed.end());
  Rng a(5), b(5);
  const ArrivalOrder oa = BuildArrivalOrder(tasks, 30000, 1.3, a);
  const ArrivalOrder ob = BuildArrivalOrder(reversed, 30000, 1.3, b);
  ASSERT_EQ(oa.arrivals.size(), ob.arrivals.size());
  for (size_t i = 0; i < oa.arrivals.size(); ++i) {
    EXPECT_EQ(tasks[oa.arrivals[i].task].name, reversed[ob.arrivals[i].task].name);
  }
}

TEST(InflationTest, CpuOnlyTraceIsNotTuned) {
  std::vector<TraceTask> tasks(3);
  for (int i = 0; i < 3; ++i) tasks[i].name = std::to_string(i);
  Rng rng(1);
  const ArrivalOrder order = BuildArrivalOrder(tasks, 1000, 1.3, rng);
  EXPECT_EQ(order.arrivals.size(), 3u);
  EXPECT_EQ(order.clones, 0);
}

TEST(InflationTest, PermuteNodesIsASeededPermutation) {
  std::vector<int32_t> a = {0, 1, 2, 3, 4, 5, 6, 7}, b = a;
  Rng ra(9), rb(9);
  PermuteNodes(a, ra);
  PermuteNodes(b, rb);
  EXPECT_EQ(a, b);
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

}  // namespace
}  // namespace tessera::sim::alibaba

#include "sim/alibaba/inflation.h"

#include <algorithm>
#include <numeric>

namespace tessera::sim::alibaba {

ArrivalOrder BuildArrivalOrder(const std::vector<TraceTask>& tasks, int64_t cluster_gpu_milli,
                               double ratio, Rng& rng) {
  std::vector<int32_t> by_name(tasks.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(),
            [&](int32_t a, int32_t b) { return tasks[a].name < tasks[b].name; });

  ArrivalOrder order;
  std::vector<int32_t> shuffled = by_name;
  rng.Shuffle(shuffled);
  order.arrivals.reserve(tasks.size());
  for (int32_t i : shuffled) {
    order.arrivals.push_back({i, -1});
    order.requested_gpu_milli += tasks[i].request.TotalGpuMilli();
  }
  const bool any_gpu = std::any_of(tasks.begin(), tasks.end(),
                                   [](const TraceTask& t) { return t.request.gpu_milli > 0; });
  // Without GPU requests no clone could ever reach the target (the artifact refuses this case).
  if (ratio <= 0 || !any_gpu) return order;

  const double target = ratio * static_cast<double>(cluster_gpu_milli);
  if (static_cast<double>(order.requested_gpu_milli) > target) {
    while (static_cast<double>(order.requested_gpu_milli) > target && !order.arrivals.empty()) {
      const auto idx = static_cast<size_t>(rng.Uniform(order.arrivals.size()));
      order.requested_gpu_milli -= tasks[order.arrivals[idx].task].request.TotalGpuMilli();
      order.arrivals.erase(order.arrivals.begin() + static_cast<std::ptrdiff_t>(idx));
      ++order.removed;
    }
    return order;
  }
  while (true) {
    const int32_t pick = by_name[rng.Uniform(by_name.size())];
    const TaskRequest& r = tasks[pick].request;
    if (static_cast<double>(order.requested_gpu_milli + r.gpu_milli) > target) break;
    order.requested_gpu_milli += r.TotalGpuMilli();
    order.arrivals.push_back({pick, order.clones++});
  }
  return order;
}

}  // namespace tessera::sim::alibaba

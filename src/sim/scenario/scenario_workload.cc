#include "sim/scenario/scenario_workload.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace tessera::sim {

TargetWorkload ScenarioWorkload(const Scenario& scenario) {
  std::map<std::string, std::pair<TaskRequest, int64_t>> classes;
  int64_t total = 0;
  for (const ScenarioJob& job : scenario.jobs) {
    for (const TaskGroup& group : job.spec.tasks) {
      auto [it, added] = classes.try_emplace(group.request.EquivalenceKey(), group.request, 0);
      it->second.second += group.replicas;
      total += group.replicas;
    }
  }
  TargetWorkload workload;
  for (auto& [key, entry] : classes) {
    if (entry.second == 0) continue;
    workload.classes.push_back(
        {entry.first, static_cast<double>(entry.second) / static_cast<double>(total)});
  }
  if (workload.classes.empty()) workload.classes.push_back({TaskRequest{}, 1.0});
  return workload;
}

}  // namespace tessera::sim

// Builders of nodes, tasks and workloads for the gpushare tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/node.h"
#include "core/target_workload.h"

namespace tessera::gpushare::testing {

// A node with `cpu_free` of 128 cores free and one device of `model` per entry of `free_milli`,
// holding 1000 - free milli-GPU.
inline Node MakeNode(int64_t cpu_free, std::vector<int64_t> free_milli, std::string model = "G2",
                     std::string name = "n") {
  Node node;
  node.name = std::move(name);
  node.allocatable.cpu = 128000;
  node.allocated.cpu = 128000 - cpu_free;
  for (size_t i = 0; i < free_milli.size(); ++i) {
    GpuDevice d;
    d.index = static_cast<int32_t>(i);
    d.model = model;
    d.used_milli = kMilliGpuPerDevice - free_milli[i];
    node.gpus.push_back(d);
    node.capacity.gpu += kMilliGpuPerDevice;
    node.allocated.gpu += d.used_milli;
  }
  node.allocatable.gpu = node.capacity.gpu;
  node.capacity.cpu = node.allocatable.cpu;
  return node;
}

inline TaskRequest CpuTask(int64_t cpu) {
  TaskRequest t;
  t.cpu = cpu;
  return t;
}

inline TaskRequest GpuTask(int64_t cpu, int32_t count, int64_t milli,
                           std::vector<std::string> models = {}) {
  TaskRequest t;
  t.cpu = cpu;
  t.gpu_count = count;
  t.gpu_milli = milli;
  t.gpu_models = std::move(models);
  return t;
}

inline TargetWorkload Workload(std::vector<std::pair<TaskRequest, double>> classes) {
  TargetWorkload w;
  for (auto& [request, p] : classes) w.classes.push_back({std::move(request), p});
  return w;
}

}  // namespace tessera::gpushare::testing

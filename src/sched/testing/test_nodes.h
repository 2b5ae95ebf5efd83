// Node and task builders for the scheduler's tests (plugins, victim search, backfill, the
// job-level scheduler, the server's job manager). Test-only.
#pragma once

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/node.h"

namespace tessera::testing {

inline constexpr int64_t kGi = int64_t{1} << 30;

inline GpuDevice Device(int32_t index, std::string model, int64_t memory) {
  GpuDevice d;
  d.index = index;
  d.model = std::move(model);
  d.memory = memory;
  return d;
}

// A toleration: Exists when `exists` (the value is ignored), else Equal.
inline Toleration Tolerate(std::string key, std::string value, bool exists,
                           std::optional<TaintEffect> effect = std::nullopt) {
  Toleration t;
  t.key = std::move(key);
  t.value = std::move(value);
  t.exists = exists;
  t.effect = effect;
  return t;
}

// A ready node with `cpu` millicores and `memory` bytes allocatable, nothing allocated, no GPUs.
inline Node CpuNode(int64_t cpu = 32000, int64_t memory = 256 * kGi) {
  Node node;
  node.name = "n";
  node.capacity.cpu = node.allocatable.cpu = cpu;
  node.capacity.memory = node.allocatable.memory = memory;
  return node;
}

// CpuNode plus `devices` healthy, idle GPUs of `model` with `device_memory` bytes each.
inline Node GpuNode(int devices, std::string model = "A100", int64_t device_memory = 80 * kGi) {
  Node node = CpuNode();
  for (int i = 0; i < devices; ++i) {
    node.gpus.push_back(Device(i, model, device_memory));
  }
  node.capacity.gpu = node.allocatable.gpu = devices * kMilliGpuPerDevice;
  node.capacity.gpu_memory = node.allocatable.gpu_memory = devices * device_memory;
  return node;
}

// A ready node named `name` with `cpu` millicores, `memory` bytes and `devices` idle A100 GPUs
// of 80 GiB each.
inline Node NamedGpuNode(std::string name, int devices, int64_t cpu = 64'000,
                         int64_t memory = 512 * kGi) {
  Node node = GpuNode(devices);
  node.name = std::move(name);
  node.capacity.cpu = node.allocatable.cpu = cpu;
  node.capacity.memory = node.allocatable.memory = memory;
  return node;
}

// Marks `milli` milli-GPU (and `memory` bytes) of device `index` as used, keeping the node-level
// allocated sums consistent.
inline void UseGpu(Node& node, int index, int64_t milli, int64_t memory = 0) {
  node.gpus[index].used_milli += milli;
  node.gpus[index].used_memory += memory;
  node.allocated.gpu += milli;
  node.allocated.gpu_memory += memory;
}

inline TaskRequest CpuTask(int64_t cpu, int64_t memory = 0) {
  TaskRequest task;
  task.cpu = cpu;
  task.memory = memory;
  return task;
}

// `count` devices of `milli` each (1000 = whole GPUs), limited to `models` when not empty.
inline TaskRequest GpuTask(int32_t count, int64_t milli = kMilliGpuPerDevice,
                           std::vector<std::string> models = {}, int64_t gpu_memory = 0) {
  TaskRequest task = CpuTask(1000, kGi);
  task.gpu_count = count;
  task.gpu_milli = milli;
  task.gpu_models = std::move(models);
  task.gpu_memory = gpu_memory;
  return task;
}

// A gtest parameter name from a case description: "cpu fits" -> "cpu_fits".
inline std::string TestName(std::string description) {
  for (char& ch : description) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return description;
}

}  // namespace tessera::testing

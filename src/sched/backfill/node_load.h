// NodeLoad: what some tasks hold on one node, in every quantity the ClusterState tracks there —
// the backfill planner's arithmetic for reservations and releases over time.
//
// Units: cpu in millicores, memory and GPU memory in bytes, milli-GPU per device (indexed as
// Node::gpus). Values may be negative (a difference between two instants). A value type; not
// thread-safe for concurrent mutation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/container/inlined_vector.h"
#include "core/job.h"
#include "core/placement.h"

namespace tessera {

struct NodeLoad {
  int64_t cpu = 0;
  int64_t memory = 0;
  std::map<std::string, int64_t, std::less<>> extended;
  absl::InlinedVector<int64_t, 8> milli;       // per device index
  absl::InlinedVector<int64_t, 8> gpu_memory;  // per device index

  explicit NodeLoad(size_t devices) : milli(devices, 0), gpu_memory(devices, 0) {}

  // Adds `sign` (+1 or -1) times what the task holds at the placement.
  // REQUIRES: the placement's devices are below the `devices` given at construction.
  void Add(const TaskRequest& task, const Placement& placement, int64_t sign) {
    AddHost(task, sign);
    for (int32_t d : placement.gpus) {
      milli[d] += sign * placement.gpu_milli;
      gpu_memory[d] += sign * placement.gpu_memory;
    }
  }

  // Adds what the task holds outside its devices.
  void AddHost(const TaskRequest& task, int64_t sign) {
    cpu += sign * task.cpu;
    memory += sign * task.memory;
    for (const auto& [name, value] : task.extended) extended[name] += sign * value;
  }

  // Raises every quantity to at least `other`'s (a missing extended entry counts as zero).
  // REQUIRES: both were built for the same number of devices.
  void RaiseTo(const NodeLoad& other) {
    cpu = std::max(cpu, other.cpu);
    memory = std::max(memory, other.memory);
    for (const auto& [name, value] : other.extended) {
      int64_t& mine = extended[name];
      mine = std::max(mine, value);
    }
    for (size_t d = 0; d < milli.size(); ++d) {
      milli[d] = std::max(milli[d], other.milli[d]);
      gpu_memory[d] = std::max(gpu_memory[d], other.gpu_memory[d]);
    }
  }
};

// The fullest load of one node over a window of time, per quantity.
struct NodePeak {
  int32_t node;  // index into the ClusterState
  NodeLoad load;
};

}  // namespace tessera

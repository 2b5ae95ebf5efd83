// NodeRoom: resource arithmetic for "would this task fit on the node if these tasks were gone".
//
// Victim search ranks nodes by the victims each would need, without touching the cluster state:
// a NodeRoom sums what some placed tasks hold on one node (cpu, memory, extended resources, and
// per device milli-GPU and GPU memory), and FitsWithRoom answers whether a task would pass the
// NodeResourcesFit filter on the node with those holdings released. It mirrors NodeResourcesFit
// and core DeviceFits exactly (whole-GPU tasks need fully free devices, sharing tasks enough
// free milli-GPU on one device, device health, allowed models, GPU memory per device); the
// other filters (taints, affinity, cordons) do not depend on what is placed, so the Framework
// judges them when the victims are actually forgotten.
//
// A value type; not thread-safe for concurrent mutation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/container/inlined_vector.h"
#include "core/job.h"
#include "core/node.h"
#include "core/placement.h"

namespace tessera {

struct NodeRoom {
  int64_t cpu = 0;                             // millicores released
  int64_t memory = 0;                          // bytes released
  absl::InlinedVector<int64_t, 8> gpu_milli;   // per device index; shorter = zero beyond
  absl::InlinedVector<int64_t, 8> gpu_memory;  // per device index; shorter = zero beyond
  std::map<std::string, int64_t, std::less<>> extended;

  // Adds (`sign` = +1) or removes (-1) what `task`, placed at `placement`, holds.
  void Apply(const TaskRequest& task, const Placement& placement, int64_t sign);
};

// True when `task` passes NodeResourcesFit on `node` with `room` released.
bool FitsWithRoom(const TaskRequest& task, const Node& node, const NodeRoom& room);

// The node-wide sums of a NodeRoom (cpu, memory, milli-GPU over every device): cheap to keep
// per node, and enough for a quick necessary test before the exact one.
struct RoomTotals {
  int64_t cpu = 0;
  int64_t memory = 0;
  int64_t gpu_milli = 0;

  void Apply(const TaskRequest& task, const Placement& placement, int64_t sign) {
    cpu += sign * task.cpu;
    memory += sign * task.memory;
    gpu_milli += sign * static_cast<int64_t>(placement.gpus.size()) * placement.gpu_milli;
  }
  void Add(const RoomTotals& other, int64_t sign) {
    cpu += sign * other.cpu;
    memory += sign * other.memory;
    gpu_milli += sign * other.gpu_milli;
  }
};

// False when `task` cannot fit `node` with `totals` released, whatever the devices they are
// on: FitsWithRoom implies MayFitWithRoom. Reads only the node's sums and device count.
bool MayFitWithRoom(const TaskRequest& task, const Node& node, const RoomTotals& totals);
// The GPU part of MayFitWithRoom alone, with `gpu_milli` released.
bool MayFitGpusWithRoom(const TaskRequest& task, const Node& node, int64_t gpu_milli);

// At most how many copies of `task` the node could take as it is (resource arithmetic only);
// nullopt for a GPU-sharing task, whose copies depend on how they would be packed.
std::optional<int64_t> MaxCopies(const TaskRequest& task, const Node& node);

}  // namespace tessera

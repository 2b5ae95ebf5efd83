// Hosted GPU-request classes: which kinds of GPU task a node already runs.
//
// The GpuClustering policy groups tasks by GPU-request class, as the FGD paper's artifact does
// ("share-gpu", "1-gpu", "2-gpu", ...): a node that hosts only tasks of a task's own class is
// preferred. The device state alone cannot tell a device filled by one whole-GPU task from one
// filled by several sharing tasks, so the node keeps a count per class
// (Node::hosted_gpu_classes), kept current by ClusterState::Assume (+1) and Forget (-1) through
// RecordHostedClass.
//
// Part of the resource model: the cluster state keeps the count, policies read it.
// Not thread-safe for a node being mutated (the scheduling thread owns the cluster state).
#pragma once

#include <cstdint>

#include "core/job.h"
#include "core/node.h"

namespace tessera {

inline constexpr int32_t kNoGpuClass = -1;
inline constexpr int32_t kSharingClass = 0;

// kSharingClass for a task sharing one device, n for a task of n whole devices, kNoGpuClass for
// a CPU-only task.
inline int32_t GpuRequestClass(const TaskRequest& task) {
  if (!task.NeedsGpu() || task.gpu_milli == 0) return kNoGpuClass;
  return task.IsSharing() ? kSharingClass : task.gpu_count;
}

// Adds `delta` (+1 when the task is assumed onto the node, -1 when it is forgotten) to the
// node's count of the task's class; drops the class when its count reaches zero. No-op for a
// CPU-only task.
inline void RecordHostedClass(Node& node, const TaskRequest& task, int32_t delta) {
  const int32_t cls = GpuRequestClass(task);
  if (cls == kNoGpuClass) return;
  auto it = node.hosted_gpu_classes.try_emplace(cls, 0).first;
  it->second += delta;
  if (it->second <= 0) node.hosted_gpu_classes.erase(it);
}

}  // namespace tessera

// Node: one machine of a cluster as the scheduler sees it, with its GPU devices.
//
// Quantities use the standard units of resources.h. A node belongs to exactly one cluster and
// one node pool. `allocatable` is what may be handed out (capacity less system reserves);
// `allocated` is what placed tasks hold. GPU sharing is tracked per device in milli-GPU: a
// device has 1000 milli-GPU; a whole-GPU task takes all of a fully free device, a sharing task
// takes its share of one device. An unhealthy device takes no new work and counts as not free.
//
// A value type owned by ClusterState (sched/cluster_state.h), which is mutated only by the
// scheduler thread; plugins read nodes through `const Node&`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/resources.h"

namespace tessera {

using Labels = std::map<std::string, std::string, std::less<>>;

inline constexpr int64_t kMilliGpuPerDevice = 1000;
// The most GPU devices one node may have. Today's largest nodes have 8 to 16; an inventory that
// reports more (an agent, a Slurm GRES, a Kubernetes capacity) is refused as malformed, so that
// a hostile or broken count can neither allocate without end nor outgrow the node's stored
// record.
inline constexpr int32_t kMaxGpusPerNode = 128;

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

// "NoSchedule", "PreferNoSchedule", "NoExecute": the names documents and the API use.
std::string_view TaintEffectName(TaintEffect effect);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct GpuDevice {
  int32_t index = 0;          // position on the node: 0..n-1 (CUDA_VISIBLE_DEVICES order)
  std::string model;          // "A100-80GB", "G2", "V100M32"
  int64_t memory = 0;         // bytes of device memory
  int64_t used_milli = 0;     // milli-GPU held by placed tasks, 0..1000
  int64_t used_memory = 0;    // bytes of device memory held by placed tasks
  bool healthy = true;

  // Milli-GPU this device can still hand out (0 when unhealthy).
  int64_t FreeMilli() const { return healthy ? kMilliGpuPerDevice - used_milli : 0; }
  int64_t FreeMemory() const { return healthy ? memory - used_memory : 0; }
  bool IsFullyFree() const { return healthy && used_milli == 0; }
};

enum class NodeCondition { kReady, kDown };

struct Node {
  std::string name;
  std::string cluster = "default";
  std::string pool;
  Labels labels;
  std::vector<Taint> taints;

  Resources capacity;     // gpu = 1000 x number of devices
  Resources allocatable;  // <= capacity
  Resources allocated;    // sum of placed tasks' requests (gpu = sum of shares)

  absl::InlinedVector<GpuDevice, 8> gpus;

  // Placed GPU tasks per GPU-request class: key 0 counts sharing tasks (part of one device),
  // key n >= 1 tasks holding n whole devices; only positive counts are kept; CPU-only tasks are
  // not counted. Maintained by ClusterState::Assume/Forget through RecordHostedClass
  // (core/hosted_gpu_classes.h); read by the GpuClustering policy.
  std::map<int32_t, int32_t> hosted_gpu_classes;

  NodeCondition condition = NodeCondition::kReady;
  bool unschedulable = false;  // cordoned: no new tasks
  bool removed = false;        // left the inventory; kept so node indices stay stable

  // Free quantities (allocatable - allocated).
  int64_t FreeCpu() const { return allocatable.cpu - allocated.cpu; }
  int64_t FreeMemory() const { return allocatable.memory - allocated.memory; }
  // Sum of FreeMilli() over devices.
  int64_t FreeGpuMilli() const;
  // The model of the node's GPUs ("" when it has none). Nodes with mixed models report the first.
  const std::string& GpuModel() const;
};

}  // namespace tessera

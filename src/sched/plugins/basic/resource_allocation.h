// Resource allocation scoring: the shared core of the LeastAllocated and MostAllocated scorers.
//
// A scorer looks at a weighted list of resources. For each one it takes the node's allocatable
// quantity and what would be allocated after placing the task (allocated + the task's request),
// turns the pair into a 0..100 score with a strategy function, and returns the weighted mean of
// those scores (integer arithmetic, rounded down). As in kube-scheduler, a resource whose
// allocatable is zero on the node is skipped — both its score and its weight — so a node without
// GPUs is judged on cpu and memory alone; a node where every listed resource is zero scores 0.
//
// Resource names: "cpu" (millicores), "memory" (bytes), "gpu" (milli-GPU: node-level allocatable
// and allocated, the task's gpu_count x gpu_milli), "gpu_memory" (bytes: the task's
// gpu_count x gpu_memory), or any other name, read as an extended resource. Weights are integers
// in [1, 100]. The argument form is "cpu=1,memory=1,gpu=1" (the default).
//
// Unlike kube-scheduler, a zero request stays zero (no default 100m cpu / 200Mi memory for tasks
// that ask for nothing). Pure functions; thread-safe.
// Source: kube-scheduler's NodeResourcesFit scoring strategies (resource_allocation.go).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/job.h"
#include "core/node.h"

namespace tessera {

struct WeightedResource {
  enum class Kind { kCpu, kMemory, kGpu, kGpuMemory, kExtended };
  Kind kind = Kind::kCpu;
  std::string name;  // as written in the arguments; the extended resource's name for kExtended
  int64_t weight = 1;
};

using ResourceWeights = std::vector<WeightedResource>;

// The argument key that holds the weights.
inline constexpr std::string_view kResourcesArg = "resources";

// cpu=1, memory=1, gpu=1.
ResourceWeights DefaultResourceWeights();

// Parses "cpu=1,memory=2,rdma/hca=1" (spaces around items allowed). InvalidArgument naming
// `plugin` and the item for an empty list, an item without '=', an empty name, a duplicate name
// or a weight that is not an integer in [1, 100].
absl::StatusOr<ResourceWeights> ParseResourceWeights(std::string_view plugin,
                                                     std::string_view text);

// Maps (requested after placing, allocatable) to a score in [0, 100]. REQUIRES: allocatable > 0.
using AllocationStrategy = int64_t (*)(int64_t requested, int64_t allocatable);

// (allocatable - requested) * 100 / allocatable; 0 when requested > allocatable.
int64_t LeastRequestedScore(int64_t requested, int64_t allocatable);
// requested * 100 / allocatable, with requested capped at allocatable.
int64_t MostRequestedScore(int64_t requested, int64_t allocatable);

// The weighted mean described above, in [0, 100].
int64_t AllocationScore(const ResourceWeights& weights, AllocationStrategy strategy,
                        const TaskRequest& task, const Node& node);

}  // namespace tessera

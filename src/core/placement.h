// Placement: where one task runs — a node and, for GPU tasks, the devices it holds.
//
// `gpu_milli` is taken from each listed device (1000 for whole-GPU tasks, the share for a
// sharing task); `gpu_memory` bytes from each listed device. A value type.
#pragma once

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"

namespace tessera {

struct Placement {
  int32_t node_index = -1;  // index into ClusterState's node array
  std::string node;         // the node's name
  absl::InlinedVector<int32_t, 8> gpus;  // device indices on the node, ascending
  int64_t gpu_milli = 0;                 // milli-GPU held on each listed device
  int64_t gpu_memory = 0;                // bytes held on each listed device
};

}  // namespace tessera

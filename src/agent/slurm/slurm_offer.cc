#include "agent/slurm/slurm_offer.h"

#include <algorithm>

namespace tessera::agent {
namespace {

// What remains of `capacity` once others hold `allocated - own` of it (never below 0).
int64_t Remaining(int64_t capacity, int64_t allocated, int64_t own) {
  const int64_t foreign = std::max<int64_t>(0, allocated - own);
  return std::max<int64_t>(0, capacity - foreign);
}

// Marks `count` devices unhealthy: those `held` does not name first, highest index first.
void TakeDevices(Node& node, int64_t count, const std::set<int32_t>& held) {
  for (const bool free_only : {true, false}) {
    for (auto d = node.gpus.rbegin(); d != node.gpus.rend() && count > 0; ++d) {
      if (!d->healthy || (free_only && held.contains(d->index))) continue;
      d->healthy = false;
      --count;
    }
  }
}

}  // namespace

Node OfferedNode(const SlurmNode& slurm, const TesseraOnNode& tessera) {
  Node node = slurm.node;
  node.allocatable.cpu = Remaining(node.capacity.cpu, slurm.allocated.cpu, tessera.held.cpu);
  node.allocatable.memory =
      Remaining(node.capacity.memory, slurm.allocated.memory, tessera.held.memory);
  const int64_t devices = static_cast<int64_t>(node.gpus.size());
  const int64_t foreign = devices - Remaining(devices, slurm.allocated.gpus, tessera.held.gpus);
  TakeDevices(node, foreign, tessera.devices);
  node.allocatable.gpu = node.capacity.gpu - kMilliGpuPerDevice * foreign;
  return node;
}

}  // namespace tessera::agent

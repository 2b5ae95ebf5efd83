// SlurmOffer: what a Slurm node offers Tessera — its capacity less what Slurm's other
// ("foreign") jobs hold on it: other users' sbatch jobs, or anything not submitted by Tessera.
//
// Slurm reports what it has allocated on each node to all jobs (SlurmNode::allocated, from
// alloc_cpus, alloc_memory and gres_used). Tessera's scheduler counts its own tasks itself
// (Node::allocated), so only the rest is taken out of what the node offers:
//
//   foreign                 allocated - the requests of Tessera's jobs on the node that were not
//                           seen ending when the node list was read, per resource, at least 0
//
// Tessera's jobs count whether or not Slurm has started them: Slurm starts a submitted job at
// its next scheduling pass, long before the agent's next read of the jobs would show it running,
// and counting only the jobs seen running took each new one for a foreign job until then,
// offering its slot short twice over. The price: a Tessera job that Slurm has NOT started
// (it waits in Slurm, PENDING) is not in `allocated` but is counted, so while foreign jobs hold
// resources on the node the offer is too large by at most that job's request, until it starts
// or ends. Without foreign jobs, or once Tessera's jobs run, the offer is exact.
//
//   allocatable.cpu/.memory capacity - foreign (millicores, bytes), at least 0
//   GPU devices             `foreign.gpus` devices are marked unhealthy — an unhealthy device
//                           takes no new work (core/node.h) — and allocatable.gpu = capacity.gpu
//                           - 1000 x their number. The devices none of Tessera's tasks on the node
//                           holds go first, from the highest index down, then the others. Slurm
//                           chooses the real devices of every job (gres_used's IDX), Tessera's
//                           included, so only the count is meaningful.
//
// What Slurm allocates beyond a task's request (a whole CPU for 500 millicores, DefMemPerCPU for
// a task that asks for no memory) counts as foreign: it is really taken.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <set>

#include "agent/slurm/slurm_inventory.h"
#include "core/node.h"

namespace tessera::agent {

// Tessera's own tasks on one node, as the agent follows them.
struct TesseraOnNode {
  SlurmHeld held;             // the requests of those not seen ending (millicores, bytes, devices)
  std::set<int32_t> devices;  // the device indices any of them holds in Tessera's placement
};

// What the Slurm node offers Tessera: `slurm.node` with allocatable and device health as above.
Node OfferedNode(const SlurmNode& slurm, const TesseraOnNode& tessera);

}  // namespace tessera::agent

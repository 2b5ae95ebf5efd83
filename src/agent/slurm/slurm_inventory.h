// SlurmInventory: slurmrestd's node list (GET /slurm/<version>/nodes) as Tessera nodes.
//
// One Slurm node becomes one core Node (core/node.h):
//
//   Slurm field            Node
//   name                   name
//   cpus                   capacity.cpu = allocatable.cpu, millicores (cpus x 1000)
//   real_memory (MiB)      capacity.memory = allocatable.memory, bytes (SlurmCluster then
//                          takes what Slurm's other jobs hold out of allocatable: slurm_offer.h)
//   gres "gpu:<type>:<n>"  n GpuDevices (index 0..n-1) of model GpuModelFromGresType(type) —
//                          or the model and memory declared for that type in `gpu_types` —
//                          memory 0 when unknown; capacity.gpu = 1000 x n. Socket suffixes
//                          ("gpu:h100:8(S:0-1)") are ignored; other GRES (mps, shard) too.
//   partitions             pool = the first partition; label tessera.io/partitions =
//                          the partitions joined with ","
//   state, state_flags     DOWN, FAIL, FUTURE or NOT_RESPONDING → condition kDown;
//                          DRAIN, DRAINING or DRAINED → unschedulable (cordoned)
//   cpu_load (x100)        usage cpu, millicores (a load of 1.00 = 1000)
//   alloc_memory (MiB)     usage memory, bytes; and allocated.memory, bytes
//   alloc_cpus             allocated.cpu, millicores (x 1000): the CPUs Slurm gave all jobs
//   gres_used              allocated.gpus: the sum of the "gpu" items' counts
//                          ("gpu:h100:2(IDX:0-1)" → 2; the IDX list is not read)
//   address                `address` (for peers' endpoints), the name when missing
// Every node gets `cluster` and the given labels (tessera.io/cluster among them, added by the
// caller), tessera.io/gpu-model when it has GPUs and tessera.io/slurm-node = its Slurm name.
// With a partition filter, nodes outside that partition are left out.
//
// The reply is untrusted input. A document that is not JSON or has no "nodes" list is an error
// (InvalidArgument); a node entry with a wrong type, a missing name/cpus/real_memory, a negative
// or oversized number or a bad gres or gres_used string is skipped and its error listed
// ("slurm node n1: gres \"gpu:x:y\": count \"y\" is not a number",
// "slurm node n1: alloc_cpus: must be a non-negative integer, got -3"), the others are kept.
// Missing alloc_cpus, alloc_memory and gres_used read as nothing allocated.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/node.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent {

inline constexpr std::string_view kPartitionsLabel = "tessera.io/partitions";
inline constexpr std::string_view kSlurmNodeLabel = "tessera.io/slurm-node";
inline constexpr std::string_view kGpuModelLabel = "tessera.io/gpu-model";
// What a GRES type stands for, when its name alone does not say (memory in bytes per device).
struct SlurmGpuType {
  std::string model;
  int64_t memory = 0;
};

struct SlurmInventoryOptions {
  std::string cluster;    // Node::cluster
  Labels labels;          // merged into every node's labels
  std::string partition;  // "" = every node; else only the nodes of this partition
  std::map<std::string, SlurmGpuType, std::less<>> gpu_types;  // by GRES type, "h100"
};

// What jobs hold on one node: CPUs in millicores, memory in bytes, whole GPU devices.
struct SlurmHeld {
  int64_t cpu = 0;
  int64_t memory = 0;
  int32_t gpus = 0;
  friend bool operator==(const SlurmHeld&, const SlurmHeld&) = default;
};

struct SlurmNode {
  Node node;  // allocatable = capacity
  NodeUsage usage;
  std::string address;  // where the node's peers reach it
  SlurmHeld allocated;  // what Slurm has allocated on the node, to all jobs (Tessera's too)
};

struct SlurmNodeList {
  std::vector<SlurmNode> nodes;
  std::vector<std::string> errors;  // one line per node entry left out as malformed
};

// InvalidArgument when `json` is not a JSON object with a "nodes" list, or when the reply
// carries Slurm errors and no nodes.
absl::StatusOr<SlurmNodeList> ParseSlurmNodes(std::string_view json,
                                              const SlurmInventoryOptions& options);

// The GPUs of a gres string, one entry per "gpu" item in order: "gpu:h100:8(S:0-1),gpu:2"
// gives {h100, 8}, {"", 2}. A "gpu" item without a count counts 1; "(null)" and "" hold none.
struct GresGpus {
  std::string type;  // "" when the item names none
  int32_t count = 0;
};
absl::StatusOr<std::vector<GresGpus>> ParseGpuGres(std::string_view gres);

// A GRES type as a GPU model name: upper case, '_' as '-', a leading "nvidia" dropped:
// "h100" → "H100", "a100-80gb" → "A100-80GB", "nvidia_h100_80gb_hbm3" → "H100-80GB-HBM3".
std::string GpuModelFromGresType(std::string_view type);

}  // namespace tessera::agent

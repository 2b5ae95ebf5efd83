// LocalInventory: this machine as one core Node (core/node.h) of the local cluster.
//
//   capacity.cpu     millicores, from the affinity mask and cgroup CPU quotas (host_limits.h)
//   capacity.memory  bytes, MemTotal or a lower cgroup memory limit
//   gpus             from configuration when `declared_gpus` is set (testing, or a machine whose
//                    GPUs NVML cannot see), else from NVML (nvml.h); no driver or no library
//                    means zero GPUs and a log line saying why, never a failure
//   capacity.gpu     1000 x devices;  capacity.gpu_memory  the devices' memory, summed
//   allocatable      capacity less `reserved` (what the machine keeps for itself and the
//                    control plane), never below zero
//   labels           `labels`, plus tessera.io/hostname and, with GPUs, tessera.io/gpu-model
//                    (device 0's model, as the simulator labels nodes) and
//                    tessera.io/gpu-product (NVML's product name of device 0)
// The node is Ready and has no allocations; the cluster manager owns it from there.
//
// Thread-safe (no shared state). Errors: what ReadHostLimits returns for unreadable /proc
// files, InvalidArgument naming the field for a bad declaration.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/local/host_limits.h"
#include "agent/local/nvml.h"
#include "core/node.h"
#include "core/resources.h"

namespace tessera::agent {

// GPUs declared by configuration instead of discovered.
struct DeclaredGpus {
  std::string model;   // "H100-80GB"
  int64_t memory = 0;  // bytes per device
  int32_t count = 0;
};

struct LocalInventoryOptions {
  std::string node_name;  // "" = the host name
  std::string cluster = "local";
  std::string pool = "local";
  Labels labels;
  Resources reserved;  // cpu and memory kept back from allocatable
  std::optional<DeclaredGpus> declared_gpus;
  std::string nvml_library = "libnvidia-ml.so.1";
  HostPaths paths;
  // Receives one line per notable finding (GPU source, cgroup limits); nullptr = stderr.
  std::function<void(std::string_view)> log;
};

absl::StatusOr<Node> DiscoverLocalNode(const LocalInventoryOptions& options);

// The node for given measurements; the part of DiscoverLocalNode that does no I/O.
Node BuildLocalNode(const LocalInventoryOptions& options, const HostLimits& limits,
                    const std::vector<GpuDevice>& gpus, std::string_view hostname,
                    std::string_view gpu_product);

// GpuDevices from NVML's answer: indices, models and memory as discovered; unhealthy devices
// stay in place.
std::vector<GpuDevice> ToGpuDevices(const std::vector<DiscoveredGpu>& gpus);

}  // namespace tessera::agent

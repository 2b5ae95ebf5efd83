#include "agent/local/local_inventory.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

absl::Status ValidateDeclared(const DeclaredGpus& declared) {
  if (declared.count < 0) return absl::InvalidArgumentError("declared_gpus.count: negative");
  if (declared.count > 0 && declared.model.empty()) {
    return absl::InvalidArgumentError("declared_gpus.model: empty");
  }
  if (declared.memory < 0) return absl::InvalidArgumentError("declared_gpus.memory: negative");
  return absl::OkStatus();
}

struct FoundGpus {
  std::vector<GpuDevice> devices;
  std::string product;
};

FoundGpus FromNvml(const LocalInventoryOptions& options,
                   const std::function<void(std::string_view)>& log) {
  absl::StatusOr<std::unique_ptr<NvmlLibrary>> library = NvmlLibrary::Open(options.nvml_library);
  if (!library.ok()) {
    log(fmt::format("no GPUs: NVML is not available ({})",
                    std::string(library.status().message())));
    return {};
  }
  absl::StatusOr<std::vector<DiscoveredGpu>> discovered = DiscoverGpus((*library)->functions());
  if (!discovered.ok()) {
    log(fmt::format("no GPUs: {}", std::string(discovered.status().message())));
    return {};
  }
  for (const DiscoveredGpu& gpu : *discovered) {
    if (gpu.healthy) {
      log(fmt::format("GPU {}: {} ({}, {} bytes, {})", gpu.index, gpu.model, gpu.product,
                      gpu.memory, gpu.uuid));
    } else {
      log(fmt::format("GPU {}: unhealthy: {}", gpu.index, gpu.problem));
    }
  }
  if (discovered->empty()) log("no GPUs: NVML reports no devices");
  return {.devices = ToGpuDevices(*discovered),
          .product = discovered->empty() ? "" : discovered->front().product};
}

}  // namespace

std::vector<GpuDevice> ToGpuDevices(const std::vector<DiscoveredGpu>& gpus) {
  std::vector<GpuDevice> devices;
  devices.reserve(gpus.size());
  for (const DiscoveredGpu& gpu : gpus) {
    devices.push_back(
        {.index = gpu.index, .model = gpu.model, .memory = gpu.memory, .healthy = gpu.healthy});
  }
  return devices;
}

Node BuildLocalNode(const LocalInventoryOptions& options, const HostLimits& limits,
                    const std::vector<GpuDevice>& gpus, std::string_view hostname,
                    std::string_view gpu_product) {
  Node node;
  node.name = options.node_name.empty() ? std::string(hostname) : options.node_name;
  node.cluster = options.cluster;
  node.pool = options.pool;
  node.labels = options.labels;
  node.labels["tessera.io/hostname"] = std::string(hostname);
  if (!gpus.empty()) node.labels["tessera.io/gpu-model"] = gpus.front().model;
  if (!gpus.empty() && !gpu_product.empty()) {
    node.labels["tessera.io/gpu-product"] = std::string(gpu_product);
  }
  node.capacity.cpu = limits.cpu;
  node.capacity.memory = limits.memory;
  for (const GpuDevice& gpu : gpus) {
    node.gpus.push_back(gpu);
    node.capacity.gpu += kMilliGpuPerDevice;
    node.capacity.gpu_memory += gpu.memory;
  }
  node.allocatable = node.capacity;
  node.allocatable.cpu = std::max<int64_t>(0, node.capacity.cpu - options.reserved.cpu);
  node.allocatable.memory = std::max<int64_t>(0, node.capacity.memory - options.reserved.memory);
  return node;
}

absl::StatusOr<Node> DiscoverLocalNode(const LocalInventoryOptions& options) {
  const std::function<void(std::string_view)> log =
      options.log ? options.log : [](std::string_view line) {
        std::cerr << "tessera local inventory: " << line << "\n";
      };
  absl::StatusOr<HostLimits> limits = ReadHostLimits(options.paths, AffinityCpuCount());
  if (!limits.ok()) return limits.status();
  for (const std::string& note : limits->notes) log(note);

  FoundGpus found;
  if (options.declared_gpus.has_value()) {
    const DeclaredGpus& declared = *options.declared_gpus;
    if (absl::Status status = ValidateDeclared(declared); !status.ok()) return status;
    for (int32_t i = 0; i < declared.count; ++i) {
      found.devices.push_back({.index = i, .model = declared.model, .memory = declared.memory});
    }
    found.product = declared.model;
    log(fmt::format("{} GPUs declared by configuration: {}", declared.count, declared.model));
  } else {
    found = FromNvml(options, log);
  }
  return BuildLocalNode(options, *limits, found.devices, HostName(), found.product);
}

}  // namespace tessera::agent

// NVML GPU discovery: the GPUs of this machine as the NVIDIA driver reports them.
//
// NVML (libnvidia-ml.so.1) ships with the driver, not with Tessera, so it is opened at run time
// with dlopen: a machine without the driver has no library, and that means zero GPUs, not a
// failure. The few entry points used are gathered in NvmlFunctions, a table with the C
// signatures of nvml.h (return code 0 = NVML_SUCCESS), so tests can fill it with fakes:
//   nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
//   nvmlDeviceGetName, nvmlDeviceGetUUID, nvmlDeviceGetMemoryInfo, nvmlErrorString.
//
// Devices are listed in NVML's order (PCI bus order), which is the order of the indices in
// CUDA_VISIBLE_DEVICES under CUDA_DEVICE_ORDER=PCI_BUS_ID (task_env.h). A device whose queries
// fail keeps its index and is reported unhealthy, so later indices do not shift.
//
// Model names. Tessera names models "<family>-<memory>GB" ("H100-80GB", "A100-40GB"), the form
// job specs use in gpuModel. NormalizeGpuModel derives it from NVML's product name
// ("NVIDIA H100 80GB HBM3"): the family is the first word with a digit (with the words before
// it: "RTX-A6000"), after "NVIDIA"/"Tesla"/"GeForce"/"Quadro"; the size is a "<n>GB" word of
// the name, or else the device memory rounded up to the next marketed size (NVML's total
// excludes reserved memory: an L40S shows 45 GiB for its 48 GB).
//
// Thread-safety: NVML itself is thread-safe; DiscoverGpus calls init and shutdown around its
// queries, so concurrent calls are fine. Errors: Unavailable when nvmlInit fails (no driver
// loaded, no permission), with NVML's message; NotFound when the library cannot be opened.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::agent {

using NvmlDevice = void*;  // nvmlDevice_t

struct NvmlMemory {  // nvmlMemory_t (v1): bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlFunctions {
  std::function<int()> init;
  std::function<int()> shutdown;
  std::function<int(unsigned int*)> device_get_count;
  std::function<int(unsigned int, NvmlDevice*)> device_get_handle_by_index;
  std::function<int(NvmlDevice, char*, unsigned int)> device_get_name;
  std::function<int(NvmlDevice, char*, unsigned int)> device_get_uuid;
  std::function<int(NvmlDevice, NvmlMemory*)> device_get_memory_info;
  std::function<const char*(int)> error_string;
};

struct DiscoveredGpu {
  int32_t index = 0;
  std::string product;  // NVML's name, "NVIDIA H100 80GB HBM3"
  std::string model;    // NormalizeGpuModel(product, memory)
  std::string uuid;     // "GPU-8f5c..."
  int64_t memory = 0;   // bytes, NVML's total
  bool healthy = true;
  std::string problem;  // why it is unhealthy: the failed query and NVML's message
};

absl::StatusOr<std::vector<DiscoveredGpu>> DiscoverGpus(const NvmlFunctions& nvml);

std::string NormalizeGpuModel(std::string_view product, int64_t memory_bytes);

// The NVML library opened with dlopen; closes it on destruction. Not copyable.
class NvmlLibrary {
 public:
  // NotFound (with dlerror's text) when the library is absent; FailedPrecondition when a
  // required symbol is missing.
  static absl::StatusOr<std::unique_ptr<NvmlLibrary>> Open(
      const std::string& path = "libnvidia-ml.so.1");
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& functions() const { return functions_; }

 private:
  NvmlLibrary(void* handle, NvmlFunctions functions)
      : handle_(handle), functions_(std::move(functions)) {}

  void* handle_;
  NvmlFunctions functions_;
};

}  // namespace tessera::agent

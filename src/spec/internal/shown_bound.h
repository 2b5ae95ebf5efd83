// How an error shows the bound a quantity went over: "1000000 cores", "4 TiB", "1024 GPUs".
// Not a public API. Thread-safe: pure function.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::spec::internal {

enum class QuantityKind {
  kCpuMillis,  // shown in cores
  kBytes,      // in TiB when whole, else Kubernetes notation
  kMilliGpu,   // in GPUs
  kCount,
};

std::string ShownBound(QuantityKind kind, int64_t max);

}  // namespace tessera::spec::internal

#include "spec/internal/shown_bound.h"

#include <cstdint>
#include <string>

#include "core/quantity.h"
#include "fmt/format.h"

namespace tessera::spec::internal {

std::string ShownBound(QuantityKind kind, int64_t max) {
  constexpr int64_t kTi = int64_t{1} << 40;
  switch (kind) {
    case QuantityKind::kCpuMillis:
      return max % 1000 == 0 ? fmt::format("{} cores", max / 1000) : FormatCpuMillis(max);
    case QuantityKind::kBytes:
      return max % kTi == 0 ? fmt::format("{} TiB", max / kTi) : FormatBytes(max);
    case QuantityKind::kMilliGpu:
      return fmt::format("{} GPUs", FormatMilliGpu(max));
    case QuantityKind::kCount:
      break;
  }
  return fmt::format("{}", max);
}

}  // namespace tessera::spec::internal

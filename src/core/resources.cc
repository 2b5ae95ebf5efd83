#include "core/resources.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/quantity.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tessera {
namespace {

// Sums saturate instead of overflowing: absurd inputs must not become undefined behaviour.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t difference = 0;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

template <typename Op>
void Combine(Resources& a, const Resources& b, Op op) {
  a.cpu = op(a.cpu, b.cpu);
  a.memory = op(a.memory, b.memory);
  a.gpu = op(a.gpu, b.gpu);
  a.gpu_memory = op(a.gpu_memory, b.gpu_memory);
  for (const auto& [name, value] : b.extended) {
    const int64_t result = op(a.extended[name], value);
    // Dropping zeros keeps `a += b; a -= b;` an exact round trip under operator==.
    if (result == 0) {
      a.extended.erase(name);
    } else {
      a.extended[name] = result;
    }
  }
}

int64_t ValueOr0(const std::map<std::string, int64_t, std::less<>>& m, std::string_view name) {
  const auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

Resources& Resources::operator+=(const Resources& o) {
  Combine(*this, o, SaturatingAdd);
  return *this;
}

Resources& Resources::operator-=(const Resources& o) {
  Combine(*this, o, SaturatingSub);
  return *this;
}

bool Resources::FitsIn(const Resources& limit) const {
  if (cpu > limit.cpu || memory > limit.memory || gpu > limit.gpu ||
      gpu_memory > limit.gpu_memory) {
    return false;
  }
  for (const auto& [name, value] : extended) {
    if (value > ValueOr0(limit.extended, name)) return false;
  }
  // A negative limit on a resource this does not name is exceeded by our implicit 0.
  for (const auto& [name, value] : limit.extended) {
    if (value < 0 && !extended.contains(name)) return false;
  }
  return true;
}

bool Resources::IsZero() const {
  if (cpu != 0 || memory != 0 || gpu != 0 || gpu_memory != 0) return false;
  for (const auto& [name, value] : extended) {
    if (value != 0) return false;
  }
  return true;
}

std::string Resources::ToString() const {
  std::vector<std::string> parts;
  if (cpu != 0) parts.push_back("cpu=" + FormatCpuMillis(cpu));
  if (memory != 0) parts.push_back("memory=" + FormatBytes(memory));
  if (gpu != 0) parts.push_back("gpu=" + FormatMilliGpu(gpu));
  if (gpu_memory != 0) parts.push_back("gpu_memory=" + FormatBytes(gpu_memory));
  for (const auto& [name, value] : extended) {
    if (value != 0) parts.push_back(fmt::format("{}={}", name, value));
  }
  if (parts.empty()) return "none";
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace tessera

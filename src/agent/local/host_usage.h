// HostUsage: what this machine uses now, for the local agent's heartbeats — CPU from the
// "cpu" line of /proc/stat (busy ticks between two readings, as millicores) and memory from
// /proc/meminfo (MemTotal − MemAvailable, bytes).
//
// `proc_root` is "/proc" except in tests. Errors: NotFound when a file cannot be read;
// DataLoss when it cannot be parsed. Thread-safety: HostCpuMeter is not thread-safe (one
// owner); the functions are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::agent {

// Jiffies of the aggregate "cpu" line: busy (user+nice+system+irq+softirq+steal) and total
// (busy + idle + iowait).
struct CpuTicks {
  uint64_t busy = 0;
  uint64_t total = 0;
};
absl::StatusOr<CpuTicks> ParseCpuTicks(std::string_view proc_stat);

// Bytes in use: MemTotal − MemAvailable.
absl::StatusOr<int64_t> ParseMemoryUsed(std::string_view meminfo);

// Turns successive /proc/stat readings into millicores used over the interval between them.
class HostCpuMeter {
 public:
  // `cpus`: logical CPUs of the host (1000 millicores each).
  HostCpuMeter(int32_t cpus, std::string proc_root = "/proc");
  // Millicores busy since the previous call; nullopt on the first call or when /proc/stat
  // cannot be read.
  std::optional<int64_t> Sample();

 private:
  const int32_t cpus_;
  const std::string proc_root_;
  std::optional<CpuTicks> last_;
};

absl::StatusOr<int64_t> ReadMemoryUsed(std::string_view proc_root = "/proc");

}  // namespace tessera::agent

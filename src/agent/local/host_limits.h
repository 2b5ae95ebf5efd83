// HostLimits: how much CPU and memory this machine gives the tasks the agent starts.
//
//   cpu     millicores: 1000 x the CPUs in the agent's affinity mask (sched_getaffinity), lowered
//           by a CFS quota on the agent's cgroup or any ancestor (v2 cpu.max "quota period",
//           v1 cpu.cfs_quota_us / cpu.cfs_period_us): quota / period x 1000
//   memory  bytes: MemTotal of /proc/meminfo, lowered by a limit on the agent's cgroup or any
//           ancestor (v2 memory.max, v1 memory.limit_in_bytes)
// The agent's cgroup comes from /proc/self/cgroup; a path that is not visible under the cgroup
// mount (a container with a private cgroup namespace) is read from the mount's root. Both cgroup
// v2 (unified) and v1 layouts are understood; absent files mean "no limit".
//
// The parsers are pure; ReadHostLimits reads files under the given roots ("/proc",
// "/sys/fs/cgroup" in production, a fake tree in tests). Thread-safe. Errors: DataLoss for a
// file that does not parse (naming it), NotFound when /proc/meminfo is missing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::agent {

struct HostLimits {
  int64_t cpu = 0;     // millicores
  int64_t memory = 0;  // bytes
  // What lowered the numbers, for the inventory's log line ("cpu: cgroup quota 1500m").
  std::vector<std::string> notes;
};

struct HostPaths {
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

// The CPUs this process may run on (sched_getaffinity), at least 1.
int AffinityCpuCount();

absl::StatusOr<HostLimits> ReadHostLimits(const HostPaths& paths, int affinity_cpus);

// --- Parsers, exposed for tests ---

// /proc/self/cgroup: the v2 path ("0::/a/b") and the v1 path per controller ("4:memory:/a").
struct ProcCgroup {
  std::optional<std::string> unified;
  std::map<std::string, std::string, std::less<>> v1;        // controller -> path
  std::map<std::string, std::string, std::less<>> v1_mount;  // controller -> "cpu,cpuacct"
};
ProcCgroup ParseProcCgroup(std::string_view text);

// v2 cpu.max: "max 100000" -> nullopt, "150000 100000" -> 1500.
absl::StatusOr<std::optional<int64_t>> ParseCpuMax(std::string_view text);
// v1: quota -1 -> nullopt, else quota / period in millicores.
absl::StatusOr<std::optional<int64_t>> ParseCfsQuota(std::string_view quota,
                                                     std::string_view period);
// memory.max / memory.limit_in_bytes: "max" -> nullopt, else bytes.
absl::StatusOr<std::optional<int64_t>> ParseMemoryLimit(std::string_view text);
// MemTotal of /proc/meminfo, in bytes.
absl::StatusOr<int64_t> ParseMemTotal(std::string_view meminfo);

}  // namespace tessera::agent

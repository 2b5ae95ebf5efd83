#include "agent/local/host_limits.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

bool ParseInt(std::string_view text, int64_t& out) {
  text = Trim(text);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(sep, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The directories from the agent's cgroup up to the mount's root, innermost first. When the
// path is not visible under `mount` (a private cgroup namespace), only the root is read.
std::vector<std::string> CgroupChain(const std::string& mount, std::string_view path) {
  std::string rel(Trim(path));
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  // "/../x" appears for a cgroup outside this namespace: only the root is visible.
  if (rel.empty() || rel.find("..") != std::string::npos ||
      !std::filesystem::is_directory(std::filesystem::path(mount) / rel)) {
    return {mount};
  }
  std::vector<std::string> chain;
  for (std::filesystem::path p(rel); !p.empty(); p = p.parent_path()) {
    chain.push_back((std::filesystem::path(mount) / p).string());
  }
  chain.push_back(mount);
  return chain;
}

// The directory a v1 controller is mounted on: "<root>/cpu,cpuacct" or "<root>/cpu".
std::optional<std::string> V1Mount(const HostPaths& paths, const ProcCgroup& cgroup,
                                   std::string_view controller) {
  const auto it = cgroup.v1_mount.find(controller);
  if (it == cgroup.v1_mount.end()) return std::nullopt;
  for (const std::string& name : {it->second, std::string(controller)}) {
    const std::string dir = fmt::format("{}/{}", paths.cgroup_root, name);
    if (std::filesystem::is_directory(dir)) return dir;
  }
  return std::nullopt;
}

// The v2 mount: the cgroup root itself, or "unified" in the hybrid layout.
std::optional<std::string> V2Mount(const HostPaths& paths) {
  for (const std::string& dir : {paths.cgroup_root, paths.cgroup_root + "/unified"}) {
    if (std::filesystem::exists(dir + "/cgroup.controllers")) return dir;
  }
  return std::nullopt;
}

// The smallest limit that `read` finds along the chain (nullopt: none).
template <typename ReadLimit>
absl::StatusOr<std::optional<int64_t>> SmallestAlongChain(const std::vector<std::string>& chain,
                                                          ReadLimit read) {
  std::optional<int64_t> smallest;
  for (const std::string& dir : chain) {
    absl::StatusOr<std::optional<int64_t>> limit = read(dir);
    if (!limit.ok()) return limit.status();
    if (limit->has_value() && (!smallest.has_value() || **limit < *smallest)) smallest = *limit;
  }
  return smallest;
}

absl::Status FileError(const std::string& path, const absl::Status& status) {
  return absl::DataLossError(fmt::format("{}: {}", path, std::string(status.message())));
}

absl::StatusOr<std::optional<int64_t>> ReadLimitFile(
    const std::string& path, absl::StatusOr<std::optional<int64_t>> (*parse)(std::string_view)) {
  std::optional<std::string> text = ReadSmallFile(path);
  if (!text.has_value()) return std::optional<int64_t>();
  absl::StatusOr<std::optional<int64_t>> limit = parse(*text);
  if (!limit.ok()) return FileError(path, limit.status());
  return limit;
}

absl::StatusOr<std::optional<int64_t>> CpuQuota(const HostPaths& paths, const ProcCgroup& cgroup) {
  if (std::optional<std::string> mount = V2Mount(paths); mount && cgroup.unified) {
    return SmallestAlongChain(CgroupChain(*mount, *cgroup.unified), [](const std::string& dir) {
      return ReadLimitFile(dir + "/cpu.max", &ParseCpuMax);
    });
  }
  std::optional<std::string> mount = V1Mount(paths, cgroup, "cpu");
  if (!mount.has_value()) return std::optional<int64_t>();
  return SmallestAlongChain(
      CgroupChain(*mount, cgroup.v1.at("cpu")),
      [](const std::string& dir) -> absl::StatusOr<std::optional<int64_t>> {
        std::optional<std::string> quota = ReadSmallFile(dir + "/cpu.cfs_quota_us");
        std::optional<std::string> period = ReadSmallFile(dir + "/cpu.cfs_period_us");
        if (!quota.has_value() || !period.has_value()) return std::optional<int64_t>();
        absl::StatusOr<std::optional<int64_t>> limit = ParseCfsQuota(*quota, *period);
        if (!limit.ok()) return FileError(dir + "/cpu.cfs_quota_us", limit.status());
        return limit;
      });
}

absl::StatusOr<std::optional<int64_t>> MemoryLimit(const HostPaths& paths,
                                                   const ProcCgroup& cgroup) {
  if (std::optional<std::string> mount = V2Mount(paths); mount && cgroup.unified) {
    return SmallestAlongChain(CgroupChain(*mount, *cgroup.unified), [](const std::string& dir) {
      return ReadLimitFile(dir + "/memory.max", &ParseMemoryLimit);
    });
  }
  std::optional<std::string> mount = V1Mount(paths, cgroup, "memory");
  if (!mount.has_value()) return std::optional<int64_t>();
  return SmallestAlongChain(
      CgroupChain(*mount, cgroup.v1.at("memory")), [](const std::string& dir) {
        return ReadLimitFile(dir + "/memory.limit_in_bytes", &ParseMemoryLimit);
      });
}

}  // namespace

ProcCgroup ParseProcCgroup(std::string_view text) {
  ProcCgroup out;
  for (std::string_view line : Split(text, '\n')) {
    const std::vector<std::string_view> fields = Split(line, ':');
    if (fields.size() < 3) continue;
    // The path may itself hold ':'; it is everything after the second one.
    const std::string_view path = line.substr(fields[0].size() + fields[1].size() + 2);
    if (fields[1].empty()) {
      if (fields[0] == "0") out.unified = std::string(path);
      continue;
    }
    for (std::string_view controller : Split(fields[1], ',')) {
      out.v1[std::string(controller)] = std::string(path);
      out.v1_mount[std::string(controller)] = std::string(fields[1]);
    }
  }
  return out;
}

absl::StatusOr<std::optional<int64_t>> ParseCpuMax(std::string_view text) {
  const std::vector<std::string_view> fields = Split(Trim(text), ' ');
  if (fields.size() != 2) return absl::DataLossError("cpu.max: want \"QUOTA PERIOD\"");
  if (fields[0] == "max") return std::optional<int64_t>();
  return ParseCfsQuota(fields[0], fields[1]);
}

absl::StatusOr<std::optional<int64_t>> ParseCfsQuota(std::string_view quota,
                                                     std::string_view period) {
  int64_t q = 0;
  int64_t p = 0;
  if (!ParseInt(quota, q) || !ParseInt(period, p) || p <= 0) {
    return absl::DataLossError("cpu quota: want integers with a positive period");
  }
  if (q < 0) return std::optional<int64_t>();
  return std::optional<int64_t>(q * 1000 / p);
}

absl::StatusOr<std::optional<int64_t>> ParseMemoryLimit(std::string_view text) {
  if (Trim(text) == "max") return std::optional<int64_t>();
  int64_t bytes = 0;
  if (!ParseInt(text, bytes) || bytes < 0) {
    return absl::DataLossError("memory limit: want \"max\" or a byte count");
  }
  return std::optional<int64_t>(bytes);
}

absl::StatusOr<int64_t> ParseMemTotal(std::string_view meminfo) {
  for (std::string_view line : Split(meminfo, '\n')) {
    if (!line.starts_with("MemTotal:")) continue;
    std::string_view value = Trim(line.substr(9));
    if (!value.ends_with(" kB")) break;
    int64_t kib = 0;
    if (!ParseInt(value.substr(0, value.size() - 3), kib)) break;
    return kib * 1024;
  }
  return absl::DataLossError("meminfo: no \"MemTotal: N kB\" line");
}

int AffinityCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

absl::StatusOr<HostLimits> ReadHostLimits(const HostPaths& paths, int affinity_cpus) {
  HostLimits limits;
  const std::string meminfo_path = paths.proc_root + "/meminfo";
  std::optional<std::string> meminfo = ReadSmallFile(meminfo_path);
  if (!meminfo.has_value()) return absl::NotFoundError(meminfo_path + ": cannot read");
  absl::StatusOr<int64_t> mem_total = ParseMemTotal(*meminfo);
  if (!mem_total.ok()) return FileError(meminfo_path, mem_total.status());
  limits.memory = *mem_total;
  limits.cpu = int64_t{std::max(affinity_cpus, 1)} * 1000;

  const ProcCgroup cgroup =
      ParseProcCgroup(ReadSmallFile(paths.proc_root + "/self/cgroup").value_or(""));
  absl::StatusOr<std::optional<int64_t>> quota = CpuQuota(paths, cgroup);
  if (!quota.ok()) return quota.status();
  if (quota->has_value() && **quota < limits.cpu) {
    limits.cpu = std::max<int64_t>(**quota, 1);
    limits.notes.push_back(fmt::format("cpu: cgroup quota {}m", limits.cpu));
  }
  absl::StatusOr<std::optional<int64_t>> memory = MemoryLimit(paths, cgroup);
  if (!memory.ok()) return memory.status();
  if (memory->has_value() && **memory < limits.memory) {
    limits.memory = **memory;
    limits.notes.push_back(fmt::format("memory: cgroup limit {} bytes", limits.memory));
  }
  return limits;
}

}  // namespace tessera::agent

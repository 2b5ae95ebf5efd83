#include "agent/local/host_usage.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  if (!file || !(text << file.rdbuf())) {
    return absl::NotFoundError(fmt::format("{}: cannot be read", path));
  }
  return text.str();
}

// The value in kB of "<key>: <n> kB" in /proc/meminfo.
std::optional<int64_t> MeminfoKilobytes(std::string_view meminfo, std::string_view key) {
  for (absl::string_view line : absl::StrSplit(absl::string_view(meminfo.data(), meminfo.size()),
                                               '\n')) {
    if (!absl::StartsWith(line, absl::string_view(key.data(), key.size())) ||
        line.size() <= key.size() || line[key.size()] != ':') {
      continue;
    }
    std::vector<absl::string_view> words =
        absl::StrSplit(line.substr(key.size() + 1), ' ', absl::SkipEmpty());
    int64_t value = 0;
    if (words.empty() || !absl::SimpleAtoi(words[0], &value) || value < 0) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<CpuTicks> ParseCpuTicks(std::string_view proc_stat) {
  const absl::string_view text(proc_stat.data(), proc_stat.size());
  const absl::string_view line = text.substr(0, text.find('\n'));
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (words.size() < 5 || words[0] != "cpu") {
    return absl::DataLossError("/proc/stat: no aggregate \"cpu\" line first");
  }
  // user nice system idle iowait irq softirq steal (guest time is within user).
  uint64_t fields[8] = {};
  for (size_t i = 1; i < words.size() && i <= 8; ++i) {
    if (!absl::SimpleAtoi(words[i], &fields[i - 1])) {
      return absl::DataLossError(fmt::format("/proc/stat: cpu field {} is not a number", i));
    }
  }
  CpuTicks ticks;
  ticks.busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7];
  ticks.total = ticks.busy + fields[3] + fields[4];
  return ticks;
}

absl::StatusOr<int64_t> ParseMemoryUsed(std::string_view meminfo) {
  std::optional<int64_t> total = MeminfoKilobytes(meminfo, "MemTotal");
  std::optional<int64_t> available = MeminfoKilobytes(meminfo, "MemAvailable");
  if (!total || !available || *available > *total) {
    return absl::DataLossError("/proc/meminfo: no usable MemTotal and MemAvailable");
  }
  return (*total - *available) * 1024;
}

HostCpuMeter::HostCpuMeter(int32_t cpus, std::string proc_root)
    : cpus_(cpus), proc_root_(std::move(proc_root)) {}

std::optional<int64_t> HostCpuMeter::Sample() {
  absl::StatusOr<std::string> text = ReadFile(proc_root_ + "/stat");
  if (!text.ok()) return std::nullopt;
  absl::StatusOr<CpuTicks> now = ParseCpuTicks(*text);
  if (!now.ok()) return std::nullopt;
  std::optional<CpuTicks> last = last_;
  last_ = *now;
  if (!last || now->total <= last->total || now->busy < last->busy) return std::nullopt;
  const double busy = static_cast<double>(now->busy - last->busy) /
                      static_cast<double>(now->total - last->total);
  return static_cast<int64_t>(busy * 1000.0 * cpus_);
}

absl::StatusOr<int64_t> ReadMemoryUsed(std::string_view proc_root) {
  absl::StatusOr<std::string> text = ReadFile(fmt::format("{}/meminfo", proc_root));
  if (!text.ok()) return text.status();
  return ParseMemoryUsed(*text);
}

}  // namespace tessera::agent

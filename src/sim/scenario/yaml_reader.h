// YamlReader: typed reads of yaml-cpp nodes with errors that name file, line and field.
//
// Every error is InvalidArgument "FILE:LINE: FIELD: MESSAGE", the line being the 1-based line
// of the node at fault (yaml-cpp marks are 0-based). Mappings are read with ForEach, which
// rejects unknown and duplicate keys. Quantities and durations go through the core's edge
// parsers (core/quantity.h, core/duration.h), whose messages already start with the field.
// Never throws. Not thread-safe; one reader per parse.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/node.h"
#include "fmt/format.h"
#include "tessera/common/clock.h"
#include "yaml-cpp/yaml.h"

namespace tessera::sim {

// Limits on what a file may give, so that no sum of times or quantities in a run can overflow
// (docs/scenarios.md, "Limits"). A run of at most a million instants, each at most
// kMaxScenarioDuration after the one before, stays far inside Duration's range.
inline constexpr Duration kMaxScenarioDuration = std::chrono::hours(24 * 365 * 100);  // 100 years
inline constexpr int64_t kMaxCpuMillis = 1'000'000'000;                   // 1,000,000 cores
inline constexpr int64_t kMaxBytes = int64_t{4} << 40;                    // 4 TiB
inline constexpr int64_t kMaxMilliGpu = 1024 * 1000;                      // 1024 GPUs
inline constexpr int64_t kMaxCount = 1'000'000'000;                       // extended resources
inline constexpr int64_t kMaxNodeGpuMemory = int64_t{64} << 40;           // 64 TiB per node
inline constexpr size_t kMaxNodes = 100'000;
inline constexpr int64_t kMaxTasks = 1'000'000;  // replicas summed over every job

// Concatenates the text of each argument (strings, numbers): Cat("gpu-", 3) == "gpu-3".
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (out.append(fmt::format("{}", args)), ...);
  return out;
}

// "jobs[2]" + "tasks" -> "jobs[2].tasks".
std::string Field(std::string_view path, std::string_view key);
// "jobs" + 2 -> "jobs[2]".
std::string Index(std::string_view path, size_t i);

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  // 1-based line of `node`; 0 when it has no mark.
  static int Line(const YAML::Node& node);

  absl::Status Error(const YAML::Node& at, std::string_view field, std::string_view message) const;
  absl::Status ErrorAtLine(int line, std::string_view field, std::string_view message) const;
  // Prefixes "FILE:LINE: " to a status whose message already names the field.
  absl::Status Wrap(const YAML::Node& at, const absl::Status& status) const;

  using EntryFn = std::function<absl::Status(std::string_view key, const YAML::Node& value,
                                             const std::string& field)>;
  // Calls `fn` for each entry of the mapping `map` in file order. Errors: `map` is not a mapping,
  // a key is not a scalar, a key is not in `allowed`, a key appears twice.
  absl::Status ForEach(const YAML::Node& map, std::string_view path,
                       std::initializer_list<std::string_view> allowed, const EntryFn& fn) const;
  // Calls `fn(item, "path[i]")` for each element of the sequence `seq`.
  absl::Status ForEachItem(
      const YAML::Node& seq, std::string_view path,
      const std::function<absl::Status(const YAML::Node&, const std::string&)>& fn) const;

  absl::StatusOr<std::string> String(const YAML::Node& n, std::string_view field) const;
  // A non-empty string.
  absl::StatusOr<std::string> Name(const YAML::Node& n, std::string_view field) const;
  // One of `choices`; the error lists them.
  absl::StatusOr<std::string> Choice(const YAML::Node& n, std::string_view field,
                                     std::initializer_list<std::string_view> choices) const;
  absl::StatusOr<int64_t> Int(const YAML::Node& n, std::string_view field, int64_t min,
                              int64_t max = INT64_MAX) const;
  absl::StatusOr<uint64_t> Uint(const YAML::Node& n, std::string_view field) const;
  absl::StatusOr<bool> Bool(const YAML::Node& n, std::string_view field) const;
  // A duration of at most kMaxScenarioDuration.
  absl::StatusOr<Duration> Dur(const YAML::Node& n, std::string_view field) const;
  // Quantities of one task or node are at most kMaxCpuMillis, kMaxBytes, kMaxMilliGpu and
  // kMaxCount; `scale` multiplies the maximum (a queue quota covers up to kMaxNodes nodes).
  absl::StatusOr<int64_t> CpuMillis(const YAML::Node& n, std::string_view field,
                                    int64_t scale = 1) const;
  absl::StatusOr<int64_t> Bytes(const YAML::Node& n, std::string_view field,
                                int64_t scale = 1) const;
  absl::StatusOr<int64_t> MilliGpu(const YAML::Node& n, std::string_view field,
                                   int64_t scale = 1) const;
  // A quantity named `key` of a resource map ("cpu", "memory", "gpu", "gpu_memory", or an
  // extended resource counted plainly), in standard units.
  absl::StatusOr<int64_t> ResourceQuantity(std::string_view key, const YAML::Node& n,
                                           std::string_view field, int64_t scale = 1) const;
  // A mapping of string to string.
  absl::StatusOr<Labels> LabelMap(const YAML::Node& n, std::string_view field) const;
  // A string or a sequence of strings.
  absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& n,
                                                      std::string_view field) const;

 private:
  // The scalar text of `n`, or an error when it is not a scalar.
  absl::StatusOr<std::string> ScalarText(const YAML::Node& n, std::string_view field) const;
  // Rejects a leading '-' with "must be >= 0" before a quantity parser sees it.
  absl::StatusOr<std::string> NonNegativeText(const YAML::Node& n, std::string_view field) const;
  // `v` when it is at most `max`, else "must be at most `shown`".
  absl::StatusOr<int64_t> AtMost(const YAML::Node& n, std::string_view field,
                                 absl::StatusOr<int64_t> v, int64_t max,
                                 std::string_view shown) const;

  std::string file_;
};

}  // namespace tessera::sim

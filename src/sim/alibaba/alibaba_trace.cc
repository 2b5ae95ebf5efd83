#include "sim/alibaba/alibaba_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "sim/alibaba/internal/text.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::alibaba {
namespace {

using internal::IsBlank;
using internal::Join;

constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model";
constexpr std::string_view kPodHeaderFull =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time";
constexpr std::string_view kPodHeaderShort = "name,cpu_milli,memory_mib,num_gpu,gpu_milli";
constexpr int64_t kBytesPerMib = int64_t{1} << 20;
// More devices than any real machine has: a typo, not a node.
constexpr int64_t kMaxGpusPerNode = 64;

// One physical line of a CSV file, with its 1-based number.
struct Row {
  int32_t line = 0;
  std::vector<std::string_view> fields;
};

// Locates errors: "source:line: field: problem".
class Where {
 public:
  explicit Where(std::string_view source) : source_(source) {}
  absl::Status Error(int32_t line, std::string_view field, std::string_view problem) const {
    if (field.empty())
      return absl::InvalidArgumentError(fmt::format("{}:{}: {}", source_, line, problem));
    return absl::InvalidArgumentError(fmt::format("{}:{}: {}: {}", source_, line, field, problem));
  }
  absl::Status FileError(std::string_view problem) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}", source_, problem));
  }

 private:
  std::string_view source_;
};

// Splits text into rows; checks the header against `headers` (one must match exactly) and the
// field count of every data row. Returns the index of the matched header in *header_index.
absl::StatusOr<std::vector<Row>> SplitCsv(std::string_view text, const Where& where,
                                          std::initializer_list<std::string_view> headers,
                                          size_t* header_index) {
  std::vector<Row> rows;
  bool header_seen = false;
  size_t expected_fields = 0;
  int32_t line_number = 0;
  for (std::string_view line : internal::Lines(text)) {
    ++line_number;
    if (!header_seen) {
      if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
      size_t i = 0;
      for (std::string_view h : headers) {
        if (line == h) break;
        ++i;
      }
      if (i == headers.size()) {
        if (IsBlank(text)) {
          return where.FileError(
              fmt::format("empty file (expected the header '{}')", *headers.begin()));
        }
        return where.Error(
            line_number, "header",
            fmt::format("expected '{}', got '{}'", Join(headers, "' or '"), line.substr(0, 200)));
      }
      *header_index = i;
      expected_fields = std::count(headers.begin()[i].begin(), headers.begin()[i].end(), ',') + 1;
      header_seen = true;
      continue;
    }
    if (IsBlank(line)) continue;
    Row row{line_number, internal::Split(line, ',')};
    if (row.fields.size() != expected_fields) {
      return where.Error(
          line_number, "",
          fmt::format("expected {} fields, got {}", expected_fields, row.fields.size()));
    }
    rows.push_back(std::move(row));
  }
  if (!header_seen) {
    return where.FileError(fmt::format("empty file (expected the header '{}')", *headers.begin()));
  }
  if (rows.empty()) return where.FileError("no data rows after the header");
  return rows;
}

bool IsAbsent(std::string_view v) { return v.empty() || v == "nan" || v == "NaN"; }

absl::StatusOr<int64_t> ParseNonNegative(const Where& where, int32_t line, std::string_view field,
                                         std::string_view value) {
  int64_t out = 0;
  if (!internal::ParseInt64(value, &out)) {
    return where.Error(line, field, fmt::format("not an integer: '{}'", value.substr(0, 40)));
  }
  if (out < 0) return where.Error(line, field, fmt::format("must be >= 0, got {}", out));
  return out;
}

absl::StatusOr<std::optional<int64_t>> ParseOptionalTime(const Where& where, int32_t line,
                                                         std::string_view field,
                                                         std::string_view value) {
  if (IsAbsent(value)) return std::optional<int64_t>();
  TESSERA_ASSIGN_OR_RETURN(int64_t t, ParseNonNegative(where, line, field, value));
  return std::optional<int64_t>(t);
}

absl::StatusOr<int64_t> MibToBytes(const Where& where, int32_t line, std::string_view value) {
  TESSERA_ASSIGN_OR_RETURN(int64_t mib, ParseNonNegative(where, line, "memory_mib", value));
  if (mib > std::numeric_limits<int64_t>::max() / kBytesPerMib) {
    return where.Error(line, "memory_mib", fmt::format("too large: {}", mib));
  }
  return mib * kBytesPerMib;
}

// Canonical "A|B": sorted, duplicates dropped; every model must be known.
absl::StatusOr<std::vector<std::string>> ParseGpuSpec(const Where& where, int32_t line,
                                                      std::string_view value,
                                                      const std::vector<std::string>& known) {
  std::vector<std::string> models;
  if (IsAbsent(value)) return models;
  for (std::string_view m : internal::Split(value, '|')) {
    if (m.empty()) {
      return where.Error(line, "gpu_spec",
                         fmt::format("empty model name in '{}'", value.substr(0, 200)));
    }
    if (!std::binary_search(known.begin(), known.end(), m)) {
      return where.Error(line, "gpu_spec",
                         fmt::format("unknown GPU model '{}' (the node list has: {})",
                                     m.substr(0, 40), Join(known, ", ")));
    }
    models.emplace_back(m);
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  return models;
}

absl::Status CheckGpuRequest(const Where& where, int32_t line, int64_t num_gpu, int64_t gpu_milli) {
  if (num_gpu > kMaxGpusPerNode) {
    return where.Error(line, "num_gpu",
                       fmt::format("must be <= {}, got {}", kMaxGpusPerNode, num_gpu));
  }
  if (gpu_milli > kMilliGpuPerDevice) {
    return where.Error(line, "gpu_milli",
                       fmt::format("must be <= {}, got {}", kMilliGpuPerDevice, gpu_milli));
  }
  if (num_gpu == 0 && gpu_milli != 0) {
    return where.Error(line, "gpu_milli", "must be 0 when num_gpu is 0");
  }
  if (num_gpu > 0 && gpu_milli == 0) {
    return where.Error(line, "gpu_milli", "must be > 0 when num_gpu > 0");
  }
  if (num_gpu > 1 && gpu_milli != kMilliGpuPerDevice) {
    return where.Error(
        line, "gpu_milli",
        fmt::format("a task with num_gpu > 1 takes whole GPUs (1000), got {}", gpu_milli));
  }
  return absl::OkStatus();
}

absl::StatusOr<Node> NodeFromRow(const Where& where, const Row& row) {
  const auto& f = row.fields;
  Node node;
  node.name = std::string(f[0]);
  if (node.name.empty()) return where.Error(row.line, "sn", "must not be empty");
  TESSERA_ASSIGN_OR_RETURN(int64_t cpu, ParseNonNegative(where, row.line, "cpu_milli", f[1]));
  TESSERA_ASSIGN_OR_RETURN(int64_t memory, MibToBytes(where, row.line, f[2]));
  TESSERA_ASSIGN_OR_RETURN(int64_t gpus, ParseNonNegative(where, row.line, "gpu", f[3]));
  if (gpus > kMaxGpusPerNode) {
    return where.Error(row.line, "gpu",
                       fmt::format("must be <= {}, got {}", kMaxGpusPerNode, gpus));
  }
  const bool has_model = !IsAbsent(f[4]);
  if (gpus > 0 && !has_model) return where.Error(row.line, "model", "required when gpu > 0");
  // gpu_spec lists models separated by '|', so a model containing it could never be matched.
  if (gpus > 0 && f[4].find('|') != std::string_view::npos) {
    return where.Error(row.line, "model",
                       fmt::format("must not contain '|' (the gpu_spec separator), got '{}'",
                                   f[4].substr(0, 200)));
  }
  const std::string model = gpus > 0 ? std::string(f[4]) : std::string();
  node.pool = gpus > 0 ? model : std::string(kCpuPool);
  if (gpus > 0) node.labels.emplace(std::string(kGpuModelLabel), model);
  node.capacity.cpu = cpu;
  node.capacity.memory = memory;
  node.capacity.gpu = gpus * kMilliGpuPerDevice;
  node.allocatable = node.capacity;
  for (int32_t i = 0; i < gpus; ++i) {
    GpuDevice d;
    d.index = i;
    d.model = model;
    node.gpus.push_back(std::move(d));
  }
  return node;
}

absl::StatusOr<TraceTask> TaskFromRow(const Where& where, const Row& row, bool full,
                                      const std::vector<std::string>& known_models) {
  const auto& f = row.fields;
  TraceTask task;
  task.line = row.line;
  task.name = std::string(f[0]);
  if (task.name.empty()) return where.Error(row.line, "name", "must not be empty");
  TESSERA_ASSIGN_OR_RETURN(task.request.cpu, ParseNonNegative(where, row.line, "cpu_milli", f[1]));
  TESSERA_ASSIGN_OR_RETURN(task.request.memory, MibToBytes(where, row.line, f[2]));
  TESSERA_ASSIGN_OR_RETURN(int64_t num_gpu, ParseNonNegative(where, row.line, "num_gpu", f[3]));
  TESSERA_ASSIGN_OR_RETURN(int64_t gpu_milli, ParseNonNegative(where, row.line, "gpu_milli", f[4]));
  TESSERA_RETURN_IF_ERROR(CheckGpuRequest(where, row.line, num_gpu, gpu_milli));
  task.request.gpu_count = static_cast<int32_t>(num_gpu);
  task.request.gpu_milli = gpu_milli;
  if (!full) return task;

  TESSERA_ASSIGN_OR_RETURN(task.request.gpu_models,
                           ParseGpuSpec(where, row.line, f[5], known_models));
  task.gpu_spec = Join(task.request.gpu_models, "|");
  task.qos = std::string(f[6]);
  task.phase = std::string(f[7]);
  TESSERA_ASSIGN_OR_RETURN(task.creation_time,
                           ParseOptionalTime(where, row.line, "creation_time", f[8]));
  TESSERA_ASSIGN_OR_RETURN(task.deletion_time,
                           ParseOptionalTime(where, row.line, "deletion_time", f[9]));
  TESSERA_ASSIGN_OR_RETURN(task.scheduled_time,
                           ParseOptionalTime(where, row.line, "scheduled_time", f[10]));
  if (task.creation_time && task.deletion_time && *task.deletion_time < *task.creation_time) {
    return where.Error(
        row.line, "deletion_time",
        fmt::format("before creation_time ({} < {})", *task.deletion_time, *task.creation_time));
  }
  if (task.creation_time && task.scheduled_time && *task.scheduled_time < *task.creation_time) {
    return where.Error(
        row.line, "scheduled_time",
        fmt::format("before creation_time ({} < {})", *task.scheduled_time, *task.creation_time));
  }
  return task;
}

}  // namespace

absl::StatusOr<NodeList> ParseNodeList(std::string_view text, std::string_view source) {
  const Where where(source);
  size_t header = 0;
  TESSERA_ASSIGN_OR_RETURN(std::vector<Row> rows, SplitCsv(text, where, {kNodeHeader}, &header));
  NodeList out;
  std::unordered_map<std::string, int32_t> seen;
  for (const Row& row : rows) {
    TESSERA_ASSIGN_OR_RETURN(Node node, NodeFromRow(where, row));
    auto [it, inserted] = seen.emplace(node.name, row.line);
    if (!inserted) {
      return where.Error(
          row.line, "sn",
          fmt::format("duplicate node '{}' (first on line {})", node.name, it->second));
    }
    if (!node.gpus.empty()) out.models.push_back(node.gpus.front().model);
    out.total_gpu_milli += node.capacity.gpu;
    out.total_cpu_milli += node.capacity.cpu;
    out.nodes.push_back(std::move(node));
  }
  std::sort(out.models.begin(), out.models.end());
  out.models.erase(std::unique(out.models.begin(), out.models.end()), out.models.end());
  return out;
}

absl::StatusOr<PodList> ParsePodList(std::string_view text, std::string_view source,
                                     const std::vector<std::string>& known_models) {
  const Where where(source);
  size_t header = 0;
  TESSERA_ASSIGN_OR_RETURN(std::vector<Row> rows,
                           SplitCsv(text, where, {kPodHeaderFull, kPodHeaderShort}, &header));
  std::vector<std::string> known = known_models;
  std::sort(known.begin(), known.end());
  PodList out;
  out.has_times = header == 0;
  out.tasks.reserve(rows.size());
  std::unordered_map<std::string, int32_t> seen;
  for (const Row& row : rows) {
    TESSERA_ASSIGN_OR_RETURN(TraceTask task, TaskFromRow(where, row, out.has_times, known));
    auto [it, inserted] = seen.emplace(task.name, row.line);
    if (!inserted) {
      return where.Error(
          row.line, "name",
          fmt::format("duplicate pod '{}' (first on line {})", task.name, it->second));
    }
    out.tasks.push_back(std::move(task));
  }
  return out;
}

std::vector<std::string> GpuSpecModels(std::string_view text) {
  std::set<std::string> models;
  size_t start = 0;
  bool header = true;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (header) {
      header = false;
      continue;
    }
    // The sixth field: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...
    size_t field_start = 0;
    for (int i = 0; i < 5 && field_start != std::string_view::npos; ++i) {
      const size_t comma = line.find(',', field_start);
      field_start = comma == std::string_view::npos ? comma : comma + 1;
    }
    if (field_start == std::string_view::npos) continue;
    std::string_view spec = line.substr(field_start, line.find(',', field_start) - field_start);
    while (!spec.empty() && spec.back() == '\r') spec.remove_suffix(1);
    size_t m = 0;
    while (m <= spec.size()) {
      const size_t bar = spec.find('|', m);
      const std::string_view model = spec.substr(m, bar - m);
      if (!model.empty() && model != "nan" && model != "NaN") models.emplace(model);
      if (bar == std::string_view::npos) break;
      m = bar + 1;
    }
  }
  return {models.begin(), models.end()};
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(fmt::format("{}: is a directory, not a file", path));
  }
  if (std::filesystem::is_regular_file(path, ec)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<uintmax_t>(max_bytes)) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: too large ({} bytes; the limit is {} bytes)", path, size, max_bytes));
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string why = fmt::format("{}: cannot open: {}", path, std::strerror(err));
    if (err == EACCES) return absl::PermissionDeniedError(why);
    if (err == ENOENT) return absl::NotFoundError(why);
    return absl::InvalidArgumentError(why);
  }
  // Read in chunks so that a file that is not regular (a pipe, a device) obeys the limit too.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (static_cast<int64_t>(text.size()) + in.gcount() > max_bytes) {
      return absl::InvalidArgumentError(
          fmt::format("{}: too large (over the limit of {} bytes)", path, max_bytes));
    }
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return absl::InternalError(fmt::format("{}: read failed", path));
  return text;
}

absl::StatusOr<NodeList> LoadNodeList(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseNodeList(text, path);
}

absl::StatusOr<PodList> LoadPodList(const std::string& path,
                                    const std::vector<std::string>& known_models) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParsePodList(text, path, known_models);
}

}  // namespace tessera::sim::alibaba

#include "sim/swf/swf_trace.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::swf {
namespace {

// The SwfJob member each column fills, in column order; the names appear in error messages.
constexpr std::string_view kFieldNames[kSwfFieldCount] = {"id",
                                                          "submit_time",
                                                          "wait_time",
                                                          "run_time",
                                                          "allocated_processors",
                                                          "average_cpu_time",
                                                          "used_memory",
                                                          "requested_processors",
                                                          "requested_time",
                                                          "requested_memory",
                                                          "status",
                                                          "user",
                                                          "group",
                                                          "executable",
                                                          "queue",
                                                          "partition",
                                                          "preceding_job",
                                                          "think_time"};
constexpr int kAverageCpuTimeColumn = 5;

constexpr std::string_view kSpace = " \t\r\v\f";

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// At most 40 bytes of `value` for an error message.
std::string_view Excerpt(std::string_view value) { return value.substr(0, 40); }

class Where {
 public:
  explicit Where(std::string_view source) : source_(source) {}
  absl::Status Error(int64_t line, std::string_view field, std::string_view problem) const {
    if (field.empty()) {
      return absl::InvalidArgumentError(fmt::format("{}:{}: {}", source_, line, problem));
    }
    return absl::InvalidArgumentError(fmt::format("{}:{}: {}: {}", source_, line, field, problem));
  }
  absl::Status FileError(std::string_view problem) const {
    return absl::InvalidArgumentError(fmt::format("{}: {}", source_, problem));
  }

 private:
  std::string_view source_;
};

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseReal(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

absl::StatusOr<SwfJob> ParseJobLine(std::string_view line, int64_t line_number,
                                    const Where& where) {
  SwfJob job;
  job.line = line_number;
  // The integer member of each column (the average CPU time is a real number).
  int64_t* const integers[kSwfFieldCount] = {&job.id,
                                             &job.submit_time,
                                             &job.wait_time,
                                             &job.run_time,
                                             &job.allocated_processors,
                                             nullptr,
                                             &job.used_memory,
                                             &job.requested_processors,
                                             &job.requested_time,
                                             &job.requested_memory,
                                             &job.status,
                                             &job.user,
                                             &job.group,
                                             &job.executable,
                                             &job.queue,
                                             &job.partition,
                                             &job.preceding_job,
                                             &job.think_time};
  int column = 0;
  size_t pos = 0;
  while (true) {
    const size_t begin = line.find_first_not_of(kSpace, pos);
    if (begin == std::string_view::npos) break;
    size_t end = line.find_first_of(kSpace, begin);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view token = line.substr(begin, end - begin);
    pos = end;
    if (column == kSwfFieldCount) {
      return where.Error(
          line_number, "",
          fmt::format("more than {} fields (extra '{}')", kSwfFieldCount, Excerpt(token)));
    }
    const std::string_view field = kFieldNames[column];
    if (column == kAverageCpuTimeColumn) {
      if (!ParseReal(token, &job.average_cpu_time)) {
        return where.Error(line_number, field, fmt::format("not a number: '{}'", Excerpt(token)));
      }
      if (job.average_cpu_time < 0 && job.average_cpu_time != kSwfUnknown) {
        return where.Error(line_number, field,
                           fmt::format("must be >= 0 or -1 (unknown), got {}", token));
      }
    } else {
      int64_t* value = integers[column];
      if (!ParseInt(token, value)) {
        return where.Error(line_number, field, fmt::format("not an integer: '{}'", Excerpt(token)));
      }
      if (*value < kSwfUnknown) {
        return where.Error(line_number, field,
                           fmt::format("must be >= 0 or -1 (unknown), got {}", *value));
      }
    }
    ++column;
  }
  if (column != kSwfFieldCount) {
    return where.Error(line_number, "",
                       fmt::format("expected {} fields, got {}", kSwfFieldCount, column));
  }
  if (job.id == kSwfUnknown) return where.Error(line_number, "id", "must be known (not -1)");
  return job;
}

// "; Queue:  1  batch" -> {1, "batch"}.
absl::Status ParseNumberedName(std::string_view value, int64_t line_number, std::string_view key,
                               const Where& where, std::map<int64_t, std::string>* names) {
  const size_t end = value.find_first_of(kSpace);
  const std::string_view number = value.substr(0, end);
  int64_t id = 0;
  if (!ParseInt(number, &id)) {
    return where.Error(line_number, key,
                       fmt::format("expected '<number> <name>', got '{}'", Excerpt(value)));
  }
  (*names)[id] = std::string(Trim(end == std::string_view::npos ? "" : value.substr(end)));
  return absl::OkStatus();
}

// The leading integer of a header value ("128", "128 (4 frames)").
absl::StatusOr<int64_t> HeaderNumber(std::string_view value, int64_t line_number,
                                     std::string_view key, const Where& where) {
  const std::string_view number = value.substr(0, value.find_first_of(kSpace));
  int64_t out = 0;
  if (!ParseInt(number, &out)) {
    return where.Error(line_number, key, fmt::format("not an integer: '{}'", Excerpt(value)));
  }
  return out;
}

// A comment line: "; Key: value" is recorded; other comments (continuations, notes) are not.
absl::Status ParseComment(std::string_view comment, int64_t line_number, const Where& where,
                          SwfHeader* header) {
  const size_t colon = comment.find(':');
  if (colon == std::string_view::npos) return absl::OkStatus();
  const std::string_view key = Trim(comment.substr(0, colon));
  if (key.empty() || key.find_first_of(kSpace) != std::string_view::npos) {
    return absl::OkStatus();  // prose that happens to contain a colon
  }
  const std::string_view value = Trim(comment.substr(colon + 1));
  header->fields.emplace_back(key, value);
  const std::pair<std::string_view, std::optional<int64_t>*> numbers[] = {
      {"MaxJobs", &header->max_jobs},
      {"MaxRecords", &header->max_records},
      {"UnixStartTime", &header->unix_start_time},
      {"TimeZone", &header->time_zone},
      {"MaxNodes", &header->max_nodes},
      {"MaxProcs", &header->max_procs},
      {"MaxRuntime", &header->max_runtime},
      {"MaxMemory", &header->max_memory},
      {"MaxQueues", &header->max_queues},
      {"MaxPartitions", &header->max_partitions}};
  for (const auto& [name, field] : numbers) {
    if (key != name) continue;
    TESSERA_ASSIGN_OR_RETURN(*field, HeaderNumber(value, line_number, key, where));
    return absl::OkStatus();
  }
  if (key == "Queue")
    return ParseNumberedName(value, line_number, key, where, &header->queue_names);
  if (key == "Partition") {
    return ParseNumberedName(value, line_number, key, where, &header->partition_names);
  }
  if (key == "Version") header->version = value;
  if (key == "Computer") header->computer = value;
  if (key == "Installation") header->installation = value;
  if (key == "Queues") header->queues = value;
  if (key == "Partitions") header->partitions = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SwfTrace> ParseSwfTrace(std::string_view text, std::string_view source,
                                       const SwfLimits& limits) {
  const Where where(source);
  SwfTrace trace;
  int64_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.size() > limits.max_line_bytes) {
      return where.Error(line_number, "",
                         fmt::format("line longer than {} bytes", limits.max_line_bytes));
    }
    if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
    line = Trim(line);
    if (line.empty()) continue;
    if (line.front() == ';') {
      TESSERA_RETURN_IF_ERROR(ParseComment(line.substr(1), line_number, where, &trace.header));
      continue;
    }
    if (static_cast<int64_t>(trace.jobs.size()) >= limits.max_jobs) {
      return where.Error(line_number, "", fmt::format("more than {} jobs", limits.max_jobs));
    }
    TESSERA_ASSIGN_OR_RETURN(SwfJob job, ParseJobLine(line, line_number, where));
    trace.jobs.push_back(job);
  }
  if (trace.jobs.empty()) return where.FileError("no jobs in the file");
  return trace;
}

absl::StatusOr<std::string> ReadMaybeGzipFile(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(fmt::format("{}: is a directory", path));
  }
  errno = 0;
  // gzread passes a file that is not gzip-compressed through unchanged.
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    const std::string message = fmt::format("{}: cannot open: {}", path, std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const int n = gzread(file, buffer, sizeof(buffer));
    if (n < 0) {
      int code = 0;
      const std::string message = fmt::format("{}: cannot read: {}", path, gzerror(file, &code));
      gzclose(file);
      return absl::InvalidArgumentError(message);
    }
    if (n == 0) break;
    if (static_cast<int64_t>(out.size()) + n > max_bytes) {
      gzclose(file);
      return absl::InvalidArgumentError(
          fmt::format("{}: larger than {} bytes (decompressed)", path, max_bytes));
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  // A truncated gzip stream reads as a short file; gzclose_r reports it.
  if (const int rc = gzclose(file); rc != Z_OK) {
    return absl::InvalidArgumentError(
        fmt::format("{}: damaged gzip stream (zlib error {})", path, rc));
  }
  return out;
}

absl::StatusOr<SwfTrace> LoadSwfTrace(const std::string& path, const SwfLimits& limits) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadMaybeGzipFile(path, limits.max_bytes));
  return ParseSwfTrace(text, path, limits);
}

}  // namespace tessera::sim::swf

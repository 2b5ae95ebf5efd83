// Standard Workload Format (SWF) traces of the Parallel Workloads Archive
// (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): a loader for HPC job logs such
// as NASA iPSC/860 1993 and LCG 2005, plain text or gzip-compressed.
//
// A file is header comments (lines starting with ';', "; Key: value") followed by one job per
// line: 18 whitespace-separated numbers, in this order,
//    1 job id          2 submit time     3 wait time       4 run time        5 allocated procs
//    6 avg CPU time    7 used memory     8 requested procs 9 requested time 10 requested memory
//   11 status         12 user id        13 group id       14 executable     15 queue
//   16 partition      17 preceding job  18 think time
// -1 means unknown in every field (kSwfUnknown), as the standard says; any other negative value
// is an error. Times are seconds (submit times relative to the log's UnixStartTime), memory is
// KB per processor. Field 6 may be a real number ("12.5", "1e3"; some logs write one); every other
// field is an integer. Comments may also appear between jobs; blank lines are skipped.
//
// Errors: absl::InvalidArgument "source:line: field: problem" (field named as in SwfJob, e.g.
// "run_time") for a malformed job line, a wrong number of fields, a value below -1, a header
// value that is not a number where one is expected, a line longer than SwfLimits::max_line_bytes,
// more jobs than SwfLimits::max_jobs, a file without jobs, or (LoadSwfTrace) a file whose
// decompressed text exceeds SwfLimits::max_bytes or a damaged gzip stream; NotFound /
// PermissionDenied when the file cannot be opened.
// Thread-safety: pure functions; results are value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::sim::swf {

inline constexpr int64_t kSwfUnknown = -1;
inline constexpr int kSwfFieldCount = 18;

struct SwfJob {
  int64_t id = kSwfUnknown;
  int64_t submit_time = kSwfUnknown;  // seconds since the log's start
  int64_t wait_time = kSwfUnknown;    // seconds
  int64_t run_time = kSwfUnknown;     // seconds
  int64_t allocated_processors = kSwfUnknown;
  double average_cpu_time = kSwfUnknown;  // seconds per processor
  int64_t used_memory = kSwfUnknown;      // KB per processor
  int64_t requested_processors = kSwfUnknown;
  int64_t requested_time = kSwfUnknown;    // seconds (the user's estimate)
  int64_t requested_memory = kSwfUnknown;  // KB per processor
  // 1 completed, 0 failed, 5 cancelled; 2-4 partial executions (checkpoint, swap).
  int64_t status = kSwfUnknown;
  int64_t user = kSwfUnknown;
  int64_t group = kSwfUnknown;
  int64_t executable = kSwfUnknown;
  int64_t queue = kSwfUnknown;
  int64_t partition = kSwfUnknown;
  int64_t preceding_job = kSwfUnknown;
  int64_t think_time = kSwfUnknown;  // seconds after the preceding job ended
  int64_t line = 0;                  // 1-based line in the (decompressed) text
};
// A row as a Tessera job (which processor count, time limit, memory): swf_job.h.

// The header comments. Numeric keys the loader knows are parsed; every "Key: value" comment
// is also kept verbatim in `fields`, in file order.
struct SwfHeader {
  std::string version;
  std::string computer;
  std::string installation;
  std::optional<int64_t> max_jobs;
  std::optional<int64_t> max_records;
  std::optional<int64_t> unix_start_time;  // the instant of submit time 0, Unix seconds
  std::optional<int64_t> time_zone;        // seconds to add to UTC
  std::optional<int64_t> max_nodes;
  std::optional<int64_t> max_procs;
  std::optional<int64_t> max_runtime;  // seconds
  std::optional<int64_t> max_memory;   // KB
  std::optional<int64_t> max_queues;
  std::optional<int64_t> max_partitions;
  std::string queues;                              // the free-text "Queues:" description
  std::string partitions;                          // the free-text "Partitions:" description
  std::map<int64_t, std::string> queue_names;      // "; Queue: 1 batch" -> {1, "batch"}
  std::map<int64_t, std::string> partition_names;  // "; Partition: 1 grid.ici.ro"
  std::vector<std::pair<std::string, std::string>> fields;
};

struct SwfTrace {
  SwfHeader header;
  std::vector<SwfJob> jobs;  // in file order
};

// Bounds against hostile or mistaken input.
struct SwfLimits {
  size_t max_line_bytes = 4096;          // real lines are under 200 bytes
  int64_t max_jobs = 10'000'000;         // the largest archive logs hold a few million
  int64_t max_bytes = int64_t{1} << 31;  // decompressed text read by LoadSwfTrace (2 GiB)
};

// Parses SWF text. `source` names the input in error messages (usually the path).
absl::StatusOr<SwfTrace> ParseSwfTrace(std::string_view text, std::string_view source,
                                       const SwfLimits& limits = {});

// Reads `path`, gzip-compressed or plain (told by its content, not its name), and parses it.
absl::StatusOr<SwfTrace> LoadSwfTrace(const std::string& path, const SwfLimits& limits = {});

// The file's text, decompressed when gzip-compressed; errors as LoadSwfTrace's.
absl::StatusOr<std::string> ReadMaybeGzipFile(const std::string& path, int64_t max_bytes);

}  // namespace tessera::sim::swf

// Alibaba GPU-sharing trace ("openb", cluster-trace-gpu-v2023; the FGD paper's input): loaders
// for its node list and pod list CSV files.
//
// Node list: `sn,cpu_milli,memory_mib,gpu,model`. Each row becomes a Node with `gpu` devices of
// the model (1000 milli-GPU each, device memory unknown = 0), pool = model ("cpu" for nodes
// without GPUs), label kGpuModelLabel = model. Quantities convert to Tessera's units: cpu
// millicores as given, memory MiB -> bytes.
// Pod list: either the 11-column form
//   `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
//    deletion_time,scheduled_time`
// or the 5-column form of the multigpu* variants (`name,cpu_milli,memory_mib,num_gpu,gpu_milli`).
// Each row becomes a TraceTask whose TaskRequest has gpu_count = num_gpu, gpu_milli per device
// (0 for CPU-only tasks) and gpu_models from `gpu_spec` ("A|B"; empty or "nan" = any model).
// Times are seconds; an empty or "nan" time is absent.
//
// Errors: absl::InvalidArgument "file:line: field: problem" for a wrong header, a row with the
// wrong number of fields, a negative or non-numeric quantity, an inconsistent GPU request, an
// unknown GPU model in gpu_spec (one that no node of the node list has), a duplicate name, or a
// file with no rows; NotFound / PermissionDenied when a file cannot be read.
// Thread-safety: pure functions; results are value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/job.h"
#include "core/node.h"

namespace tessera::sim::alibaba {

// The node label carrying the GPU model of a trace node.
inline constexpr std::string_view kGpuModelLabel = "tessera.io/gpu-model";
// The pool of trace nodes without GPUs.
inline constexpr std::string_view kCpuPool = "cpu";

struct NodeList {
  std::vector<Node> nodes;          // in file order
  std::vector<std::string> models;  // distinct GPU models, sorted
  int64_t total_gpu_milli = 0;      // 1000 x number of GPUs
  int64_t total_cpu_milli = 0;
};

struct TraceTask {
  std::string name;
  TaskRequest request;
  // The allowed models as "A|B", sorted and without duplicates; empty = any. Part of the
  // target-workload key.
  std::string gpu_spec;
  std::string qos;    // empty in the 5-column form
  std::string phase;  // "Running", "Succeeded", "Pending", "Failed"; empty in the 5-column form
  std::optional<int64_t> creation_time;   // seconds
  std::optional<int64_t> deletion_time;   // seconds
  std::optional<int64_t> scheduled_time;  // seconds; absent for pods that never ran
  int32_t line = 0;                       // 1-based line in the pod list file
};

struct PodList {
  std::vector<TraceTask> tasks;  // in file order
  bool has_times = false;        // the 11-column form
};

// Parses node list text. `source` names the input in error messages (usually the path).
absl::StatusOr<NodeList> ParseNodeList(std::string_view text, std::string_view source);

// Parses pod list text. Every model named in a gpu_spec must be in `known_models`.
absl::StatusOr<PodList> ParsePodList(std::string_view text, std::string_view source,
                                     const std::vector<std::string>& known_models);

// The distinct models named in a pod list's gpu_spec column, sorted: the known models for
// parsing a pod list without its node list (a replay, the server's target workload).
std::vector<std::string> GpuSpecModels(std::string_view pod_list_text);

// Read the file at `path` and parse it as above.
absl::StatusOr<NodeList> LoadNodeList(const std::string& path);
absl::StatusOr<PodList> LoadPodList(const std::string& path,
                                    const std::vector<std::string>& known_models);

// The largest trace file read: the real pod lists are a few MiB, so anything bigger is a mistake.
inline constexpr int64_t kMaxTraceFileBytes = int64_t{1} << 30;  // 1 GiB

// The whole file as text; NotFound / PermissionDenied / Internal name the path. A directory or a
// file over `max_bytes` is InvalidArgument, refused before reading.
absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             int64_t max_bytes = kMaxTraceFileBytes);

}  // namespace tessera::sim::alibaba

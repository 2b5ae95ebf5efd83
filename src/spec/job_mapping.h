// A job written in the snake_case style as one mapping: the entries of a scenario file's
// `jobs:` list (shared/SCENARIOS.md). The same decoder reads it as the job documents of
// jobspec.h, with one table of keys and rules; the style changes only how the document is
// laid out:
//
//   job document (KeyStyle::kCamelCase)        one mapping (KeyStyle::kSnakeCase)
//   metadata: {name: a, labels: {...}}         name: a
//   spec:                                      labels: {...}
//     minAvailable: 2                          min_available: 2
//     terminationGracePeriod: 10s              termination_grace: 10s
//     tasks:                                   tasks:
//       - name: w                                - name: w
//         resources: {cpu: 8, gpuMemory: 40Gi}       cpu: 8
//                                                    gpu_memory: 40Gi
//
// Errors are those of ParseJobDocument (jobspec.h): InvalidArgument with the parts readable by
// GetJobSpecError, the field named by its path in the document as written
// ("jobs[2].tasks[0].gpu_memory", under JobMappingOptions::path) and the line and column of
// the node at fault (1-based, as yaml-cpp's marks give them).
// Thread-safe: pure function.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/job.h"
#include "spec/priority_class.h"
#include "tessera/common/clock.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace tessera::spec {

// Upper bounds on a job's values beyond the spec's own checks (a caller that sums them, such as
// the simulator, keeps the sums from overflowing). A value above its bound is an error
// "must be at most BOUND". Per task group and per replica; durations cover every duration key.
struct JobBounds {
  int64_t max_cpu_millis = std::numeric_limits<int64_t>::max();
  int64_t max_bytes = std::numeric_limits<int64_t>::max();  // memory and GPU memory
  int64_t max_milli_gpu = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::max();  // extended resources
  Duration max_duration = Duration::max();
};

struct JobMappingOptions {
  std::string path;  // the mapping's field path in its file ("jobs[2]"); empty at the top
  // Keys the caller reads itself (a scenario's "name", "at", "outcome"): accepted and left
  // undecoded. Written as in the document.
  std::vector<std::string> caller_keys;
  JobBounds bounds;
  const PriorityClasses* priority_classes = nullptr;  // nullptr: BuiltinPriorityClasses()
  int max_depth = 64;  // deeper nesting of lists and mappings is refused
};

// Decodes `job`, a mapping with the job's name and labels beside the spec's keys in
// snake_case and each task group's resources on the group, into a validated JobSpec
// (JobSpec::Validate). A name left out (or given as a caller key) stays empty.
absl::StatusOr<JobSpec> DecodeSnakeCaseJob(const YAML::Node& job, const JobMappingOptions& options);

}  // namespace tessera::spec

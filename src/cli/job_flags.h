// JobFlags: `tessera submit`'s sbatch-like flags, and the job document they stand for.
//
// The flags describe one task group "main" of `nodes` identical tasks (replicas) that start
// together (one gang: minAvailable = all), each asking for `cpus` (default 1), `mem`, `gpus`
// (a share of one GPU when below 1: 0.5) of the allowed `gpu_model`s, and running `command`;
// `cluster` pins the job to one cluster (spec.clusterSelector {tessera.io/cluster: NAME}).
// BuildJobDocument writes them as a job document and reads it back with the job-spec codec
// (spec/jobspec.h), so a flag means exactly what the matching document key means and
// the document is validated as the server would; an error names the flag at fault
// ("--gpus: '1.5': must be a whole number of GPUs, or a share of one GPU below 1 ...").
// Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spec/job_document.h"

namespace tessera::cli {

// Unset optionals take the document's defaults.
struct JobFlags {
  std::optional<std::string> name;        // --name/-J: metadata.name
  std::optional<std::string> queue;       // --queue: spec.queue
  std::optional<std::string> cluster;     // --cluster: spec.clusterSelector tessera.io/cluster
  std::optional<std::string> priority;    // --priority: a number, or a class name (high)
  std::optional<std::string> time;        // --time: see wall_time.h
  std::optional<int> nodes;               // --nodes: replicas
  std::optional<std::string> cpus;        // --cpus: per task (default 1)
  std::optional<std::string> mem;         // --mem: per task, with a unit (1Gi, 512Mi)
  std::optional<std::string> gpus;        // --gpus: per task (4, 0.5)
  std::vector<std::string> gpu_models;    // --gpu-model: allowed models (repeatable, or a,b)
  std::vector<std::string> env;           // --env K=V
  std::vector<std::string> labels;        // --label K=V
  std::optional<std::string> workdir;     // --workdir
  std::optional<std::string> request_id;  // --request-id
  std::vector<std::string> command;       // after "--"
};

// The document the flags describe; InvalidArgument naming the flag when they do not make one.
absl::StatusOr<spec::JobDocument> BuildJobDocument(const JobFlags& flags);

// The group name of a submitted job's task group.
inline constexpr char kSubmitTaskName[] = "main";

// OK when `name` can name a cluster (core/cluster_name.h: [a-z0-9][a-z0-9._-]{0,62});
// otherwise InvalidArgument naming `flag`.
absl::Status CheckClusterName(std::string_view name, std::string_view flag);

}  // namespace tessera::cli

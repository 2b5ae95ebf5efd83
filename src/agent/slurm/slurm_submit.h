// SlurmSubmit: the slurmrestd job submission (POST /slurm/<version>/job/submit) for one task
// launch, and the reading of its reply.
//
// The batch script execs the task's command and args, each word single-quoted for /bin/sh, so
// the program replaces the shell and gets Slurm's signals itself. The job (v0.0.38 field, and
// where v0.0.39 and later differ, theirs):
//   name                       the launch id
//   comment                    "tessera:<launch id>" (how Recover tells Tessera's jobs apart)
//   nodelist, nodes            the placement's node, one node: "nodelist": "n3", "nodes": 1;
//                              from v0.0.39 "required_nodes": ["n3"], "nodes": "1"
//   partition                  SlurmSubmitOptions::partition, when set
//   gres                       "gpu:<n>" per node, n = the placement's devices (a GPU share
//                              counts as one device); left out for CPU-only tasks; from v0.0.39
//                              "tres_per_node": "gres/gpu:<n>"
//   cpus_per_task              spec.cpu in whole CPUs, rounded up; left out when 0 (a plain
//                              number in every version)
//   memory_per_node            spec.memory in MiB (Slurm's unit), rounded up; left out when 0
//   time_limit                 spec.time_limit in minutes, rounded up (at least 1); left out
//                              without a limit (the partition's default applies)
//                              — from v0.0.39 both as {"set": true, "infinite": false,
//                              "number": N}
//   current_working_directory  spec.working_dir, else SlurmSubmitOptions::working_dir
//   standard_output/_error     LogPath(log_dir, launch id, stream)
//   environment                base_env, then spec.env, then `extra_env` (TESSERA_TASK_ID and
//                              the distributed-training variables); later layers win. An
//                              object {"NAME": "value"}; from v0.0.39 a list ["NAME=value"]
//   requeue                    false: a task whose node fails ends "Lost" and Tessera decides
// The body is {"script": ..., "job": {...}} for v0.0.38 and {"job": {..., "script": ...}} from
// v0.0.39 (where the top-level script is deprecated). testdata/README.md says which published
// document each shape comes from. Slurm picks the GPU devices itself and sets
// CUDA_VISIBLE_DEVICES for them.
//
// Errors: InvalidArgument naming the field for a spec Slurm cannot run (no command, a launch id
// outside [A-Za-z0-9._-], a NUL byte, an environment name with '='); the submit reply's Slurm
// error text for a refused submission. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/slurm/slurm_api_version.h"
#include "core/placement.h"
#include "tessera/cluster/cluster.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

struct SlurmSubmitOptions {
  std::string partition;                        // "" = Slurm's default partition
  std::string log_dir;                          // where the task's stdout and stderr files go
  std::string working_dir;                      // the directory of tasks whose spec names none
  std::map<std::string, std::string> base_env;  // PATH and the like
  SlurmApiVersion api_version = SlurmApiVersion::kV38;  // the shape of the body
};

// 'word', with every ' written as '\'' — one word for /bin/sh, whatever it holds.
std::string ShellQuote(std::string_view word);

// "#!/bin/sh\n...exec 'cmd' 'arg'...\n".
absl::StatusOr<std::string> BatchScript(const TaskLaunchSpec& spec);

// "<log_dir>/tessera-<launch id>.stdout.log" (".stderr.log").
std::string LogPath(std::string_view log_dir, std::string_view launch_id, LogStream stream);

// GPUs to ask Slurm for: the placement's devices.
int32_t GpuCount(const Placement& placement);

// Minutes, rounded up, at least 1.
int64_t TimeLimitMinutes(Duration limit);

// A request in millicores as whole CPUs, rounded up (1500 → 2).
int64_t CpusPerTask(int64_t millicores);
// A request in bytes as MiB, rounded up.
int64_t MemoryMebibytes(int64_t bytes);

// The JSON request body, in the shape of options.api_version.
absl::StatusOr<std::string> SubmitBody(const TaskLaunchSpec& spec,
                                       const SlurmSubmitOptions& options,
                                       const std::map<std::string, std::string>& extra_env);

// The new job's id from the submit reply (its top-level "job_id", in every version); the Slurm
// error text ("errors[].error" and "errors[].description") as the status message when the
// submission was refused (FailedPrecondition), or the reply is malformed (Internal).
absl::StatusOr<int64_t> ParseSubmitReply(int http_status, std::string_view body);

}  // namespace tessera::agent

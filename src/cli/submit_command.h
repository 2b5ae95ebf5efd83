// `tessera submit`: submits one job, from sbatch-like flags or a job document file.
//
//   tessera submit [--gpus N] [--cpus N] [--mem Q] [--nodes N] [--time T] [--queue Q]
//                  [--name/-J NAME] [--priority P] [--gpu-model M] [--env K=V] [--label K=V]
//                  [--workdir DIR] [--request-id ID] [-q] [--dry-run] -- COMMAND [ARGS...]
//   tessera submit -f job.yaml [-q] [--dry-run]
// A file of several YAML documents (separated by "---") is sent as one POST
// /api/v1/jobs:batch (1,000 documents per request): one line per job as below, and for a
// refused one "error: document N: <the server's error>" on stderr (exit status 1).
// Prints "submitted job <id>" (with -q: the id alone), or for a repeated --request-id
// "job <id> was already submitted with this request id". --dry-run prints the document as YAML
// instead of submitting it. The flags are job_flags.h's; with -f no job flag is allowed.
// Exit statuses: exit_status.h.
#pragma once

#include "cli/command_env.h"

namespace tessera::cli {

// `argv[0]` is "submit".
int RunSubmitCommand(int argc, char** argv, const CommandEnv& env);

}  // namespace tessera::cli

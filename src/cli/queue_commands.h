// The queue verbs: the queue tree of the control plane (docs/cli.md).
//
//   tessera queues [-o table|wide|json|yaml]
//       every queue, parents before children: NAME PARENT GUARANTEED USAGE BORROWING SHARE
//       PENDING ADMITTED RUNNING; wide adds WEIGHT PRIORITY ORDERING BORROW-LIMIT LEND-LIMIT.
//       Quantities as in job documents (cpu cores, memory bytes with suffix, gpu in GPUs):
//       "gpu=16,cpu=64". -o json|yaml print the server's {"items": [...]}.
//   tessera queue apply -f tree.yaml
//       replaces the whole tree with the file's ({"queues": [...]}, YAML or JSON); admins only.
//   tessera queue delete NAME
//       removes a leaf queue without unfinished jobs; admins only.
// All take --server and --token. Exit statuses: exit_status.h.
#pragma once

#include "cli/command_env.h"

namespace tessera::cli {

// `argv[0]` is the verb's name.
int RunQueuesCommand(int argc, char** argv, const CommandEnv& env);
int RunQueueCommand(int argc, char** argv, const CommandEnv& env);

}  // namespace tessera::cli

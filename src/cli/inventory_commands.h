// The inventory verbs: what the control plane schedules onto.
//
//   tessera nodes [-o table|wide|json|yaml]
//       NAME CLUSTER STATUS STATE CPU MEMORY GPU GPU MODEL TASKS, quantities as
//       allocated/capacity; wide adds REASON (the state's, with who set it and when), TAINTS and
//       LABELS. STATUS is Ready or NotReady, with ",SchedulingDisabled" for a node that takes no
//       new tasks (cordoned here or by its backend); STATE is the administrative state the
//       control plane keeps: Ready, Cordoned, Draining or Drained.
//   tessera node cordon|uncordon|drain CLUSTER/NODE [--reason TEXT] [--grace DURATION]
//       admins only: no new tasks on the node / schedulable again / no new tasks and every job
//       with a task there evicted whole and requeued (--grace replaces the jobs' termination
//       grace). Prints the node's new state.
//   tessera clusters [-o table|wide|json|yaml]
//       NAME BACKEND STATUS NODES READY CPU MEMORY GPU; wide adds LABELS.
//   tessera cluster delete NAME
//       deletes a cluster behind an agent whose agent is not connected; admins only.
// -o json|yaml print the server's {"items": [...]}. All take --server and --token.
// Exit statuses: exit_status.h.
#pragma once

#include "cli/command_env.h"

namespace tessera::cli {

// `argv[0]` is the verb's name.
int RunNodesCommand(int argc, char** argv, const CommandEnv& env);
int RunClustersCommand(int argc, char** argv, const CommandEnv& env);
int RunClusterCommand(int argc, char** argv, const CommandEnv& env);
int RunNodeCommand(int argc, char** argv, const CommandEnv& env);

}  // namespace tessera::cli

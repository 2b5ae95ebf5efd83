// tessera: one binary, one subcommand per role.
//
//   tessera sim ...       the trace-driven and scenario simulator (see `tessera sim --help`)
//   tessera submit ...    and the other client verbs: talk to the control plane's REST API
//                         (docs/cli.md)
//
//   tessera server ...    the control plane (docs/server.md)
//
//   tessera agent ...     connects a cluster to the control plane (docs/agents/)
#include <iostream>
#include <string_view>

#include "cli/command_env.h"
#include "cli/inventory_commands.h"
#include "cli/job_commands.h"
#include "cli/queue_commands.h"
#include "cli/replay_command.h"
#include "cli/server_command.h"
#include "cli/sim_command.h"
#include "cli/agent_command.h"
#include "cli/submit_command.h"
#include "cli/token_command.h"

namespace {

using ClientVerb = int (*)(int, char**, const tessera::cli::CommandEnv&);

struct Verb {
  std::string_view name;
  ClientVerb run;
};

constexpr Verb kClientVerbs[] = {
    {"submit", &tessera::cli::RunSubmitCommand},
    {"get", &tessera::cli::RunGetCommand},
    {"list", &tessera::cli::RunListCommand},
    {"describe", &tessera::cli::RunDescribeCommand},
    {"cancel", &tessera::cli::RunCancelCommand},
    {"logs", &tessera::cli::RunLogsCommand},
    {"nodes", &tessera::cli::RunNodesCommand},
    {"clusters", &tessera::cli::RunClustersCommand},
    {"cluster", &tessera::cli::RunClusterCommand},
    {"node", &tessera::cli::RunNodeCommand},
    {"queues", &tessera::cli::RunQueuesCommand},
    {"queue", &tessera::cli::RunQueueCommand},
    {"token", &tessera::cli::RunTokenCommand},
    {"replay", &tessera::cli::RunReplayCommand},
};

void PrintUsage(std::ostream& out) {
  out << "usage: tessera <command> [options]\n\n"
         "jobs (over the REST API of the server at --server or $TESSERA_SERVER, default\n"
         "http://127.0.0.1:8080, with the token of --token or $TESSERA_TOKEN):\n"
         "  submit    submit a job: sbatch-like flags -- command, or -f job.yaml\n"
         "  get       show a job (-o wide|json|yaml, --watch)\n"
         "  list      list jobs (--phase, --queue, --tenant, --limit, --all, --watch)\n"
         "  describe  a job's spec, status, tasks, events and why it is pending\n"
         "  cancel    cancel jobs\n"
         "  logs      print a task's output (-f to follow)\n"
         "  nodes     list the nodes\n"
         "  node      take a node out of service or back (node cordon|uncordon|drain\n"
         "            CLUSTER/NODE [--reason TEXT] [--grace DURATION])\n"
         "  clusters  list the clusters\n"
         "  cluster   delete a cluster whose agent is gone (cluster delete NAME)\n"
         "  queues    list the queue tree with quotas, usage and jobs\n"
         "  queue     change the queue tree (queue apply -f tree.yaml, queue delete NAME)\n"
         "  token     create API tokens (token create --tenant T)\n"
         "  replay    submit a real trace's jobs (--pods or --swf) at its arrival times\n\n"
         "control plane:\n"
         "  server    run the control plane: job API (REST, gRPC), scheduling loop, clusters\n"
         "            (--dev --data-dir DIR [--sim-nodes FILE], or --config FILE)\n"
         "  agent     connect a cluster to a control plane (--server HOST:PORT --cluster NAME\n"
         "            --backend local|sim|slurm|kubernetes)\n\n"
         "simulation:\n"
         "  sim       run the scheduler core on a simulated cluster: a real trace\n"
         "            (--nodes/--pods) or a scenario file (--scenario)\n\n"
         "Run 'tessera <command> --help' for a command's options.\n"
         "Exit status: 0 ok, 1 the server answered an error, 2 bad usage, 3 no server answered.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "sim") return tessera::cli::RunSimCommand(argc - 1, argv + 1);
  if (command == "server") return tessera::cli::RunServerCommand(argc - 1, argv + 1);
  if (command == "agent") return tessera::cli::RunAgentCommand(argc - 1, argv + 1);
  for (const Verb& verb : kClientVerbs) {
    if (command == verb.name) return verb.run(argc - 1, argv + 1, tessera::cli::ProcessEnv());
  }
  if (command == "-h" || command == "--help" || command == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  std::cerr << "tessera: unknown command '" << command << "'\n";
  PrintUsage(std::cerr);
  return 2;
}

// tessera: one binary, one subcommand per role.
//
//   tessera sim ...      the trace-driven and scenario simulator (see `tessera sim --help`)
//
// The control plane (`server`), the agents (`agent`) and the job verbs come as they are built.
#include <iostream>
#include <string_view>

#include "cli/sim_command.h"

namespace {

void PrintUsage(std::ostream& out) {
  out << "usage: tessera <command> [options]\n\n"
         "commands:\n"
         "  sim    run the scheduler core on a simulated cluster: a real trace\n"
         "         (--nodes/--pods) or a scenario file (--scenario)\n\n"
         "Run 'tessera <command> --help' for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "sim") return tessera::cli::RunSimCommand(argc - 1, argv + 1);
  if (command == "-h" || command == "--help" || command == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  std::cerr << "tessera: unknown command '" << command << "'\n";
  PrintUsage(std::cerr);
  return 2;
}

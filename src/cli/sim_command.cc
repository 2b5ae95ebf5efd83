#include "cli/sim_command.h"

#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "sim/scenario/scenario_command.h"

namespace tessera::cli {

int RunSimCommand(int argc, char** argv) {
  CLI::App app{"Run the scheduler core on a simulated cluster", "tessera sim"};
  std::string scenario;
  std::optional<uint64_t> seed;
  app.add_option("--scenario", scenario, "Scenario file (YAML) to run");
  app.add_option("--seed", seed, "Seed of the run");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (!scenario.empty()) return sim::RunScenarioCommand(scenario, seed, std::cout, std::cerr);
  std::cerr << "tessera sim: give --scenario FILE, or --nodes and --pods\n";
  return 2;
}

}  // namespace tessera::cli

// scenario_check: runs one scenario file as a test.
//
//   scenario_check [--expect-exit N] FILE
//
// Runs FILE like `tessera sim --scenario FILE` and exits 0 when the run's exit status is N
// (default 0), 1 otherwise; ctest registers every tests/scenarios/*.yaml with it, and the files
// of tests/scenarios/must-fail/ (N = 1) and tests/scenarios/invalid/ (N = 2) with their status.
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "sim/scenario/scenario_command.h"

int main(int argc, char** argv) {
  int expected = 0;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--expect-exit" && i + 1 < argc) {
      expected = std::atoi(argv[++i]);
    } else {
      file = arg;
    }
  }
  if (file.empty()) {
    std::cerr << "usage: scenario_check [--expect-exit N] FILE\n";
    return 2;
  }
  const int status = tessera::sim::RunScenarioCommand(file, std::nullopt, std::cout, std::cerr);
  if (status == expected) return 0;
  std::cerr << "scenario_check: " << file << " exited " << status << ", expected " << expected
            << "\n";
  return 1;
}

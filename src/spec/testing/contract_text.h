// Test helpers that read the project's contracts (../shared/JOBSPEC.md, ../shared/SCENARIOS.md,
// beside the source tree) and the test data kept in the tree, so that a test can check that its
// copy of a contract's example is still the contract's, verbatim.
// The source tree is $TESSERA_SOURCE_DIR (ctest sets it), else the working directory.
// Thread-safe: pure functions of the files.
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace tessera::testing {

inline std::string SourceDir() {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  return root != nullptr ? root : ".";
}

// The whole text of the file at `path` under the source tree; nullopt when it cannot be read.
inline std::optional<std::string> ReadSourceFile(const std::string& path) {
  std::ifstream in(SourceDir() + "/" + path);
  if (!in.good()) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first fenced block (between two ``` lines, fences left out) of the contract `name`
// ("JOBSPEC.md") in ../shared beside the source tree; nullopt without the contract or a block.
inline std::optional<std::string> ContractExample(const std::string& name) {
  std::ifstream in(SourceDir() + "/../shared/" + name);
  if (!in.good()) return std::nullopt;
  std::string line;
  std::string block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("```")) {
      if (inside) return block;
      inside = true;
    } else if (inside) {
      block += line + "\n";
    }
  }
  return std::nullopt;
}

}  // namespace tessera::testing

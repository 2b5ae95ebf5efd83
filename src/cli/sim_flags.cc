#include "cli/sim_flags.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>

#include "fmt/format.h"

namespace tessera::cli::sim_cli {

int BadInput(std::string_view message) {
  std::cerr << "tessera sim: " << message << "\n";
  return kExitBadInput;
}
int BadInput(const absl::Status& status) { return BadInput(std::string(status.message())); }

absl::Status WriteFile(const std::string& path, std::string_view flag,
                       const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  if (out) out << contents;
  if (!out) {
    return absl::InvalidArgumentError(fmt::format("{}: cannot write '{}'", flag, path));
  }
  return absl::OkStatus();
}

absl::Status CheckOutputPaths(const SimFlags& f) {
  const std::pair<std::string_view, const std::string*> outputs[] = {
      {"--summary-json", &f.summary_json},
      {"--metrics-csv", &f.metrics_csv},
      {"--metrics-json", &f.metrics_json},
      {"--samples-csv", &f.samples_csv},
      {"--report", &f.report}};
  for (const auto& [flag, path] : outputs) {
    if (path->empty()) continue;
    const std::filesystem::path parent = std::filesystem::path(*path).parent_path();
    std::error_code ec;
    if (std::filesystem::is_directory(*path, ec)) {
      return absl::InvalidArgumentError(fmt::format("{}: '{}' is a directory", flag, *path));
    }
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      return absl::InvalidArgumentError(
          fmt::format("{}: directory '{}' does not exist", flag, parent.string()));
    }
  }
  return absl::OkStatus();
}

}  // namespace tessera::cli::sim_cli

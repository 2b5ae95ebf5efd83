#include "agent/slurm/testing/real_slurm.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fmt/format.h"

namespace tessera::agent::testing {
namespace {

std::string ScriptDir() {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  return std::string(root != nullptr ? root : TESSERA_SOURCE_DIR_DEFAULT) + "/scripts/slurm";
}

}  // namespace

std::optional<std::string> Shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  if (pclose(pipe) != 0) return std::nullopt;
  return out;
}

RealSlurm::RealSlurm(std::string instance, int nodes, int gpus) : instance_(std::move(instance)) {
  if (geteuid() != 0) {
    error_ = "a real Slurm needs root (the test starts slurmd and slurmctld)";
    return;
  }
  std::optional<std::string> exports =
      Shell(fmt::format("TESSERA_SLURM_INSTANCE={} bash {}/start-slurm.sh {} {} --fresh", instance_,
                        ScriptDir(), nodes, gpus));
  if (!exports.has_value()) {
    error_ = "scripts/slurm/start-slurm.sh failed (its messages are above)";
    return;
  }
  std::string_view text = *exports;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.starts_with("export ")) continue;
    line.remove_prefix(7);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      vars_[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
  }
}

RealSlurm::~RealSlurm() { Stop(); }

std::string RealSlurm::Var(const std::string& name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? "" : it->second;
}

std::optional<std::string> RealSlurm::Tool(const std::string& tool, const std::string& args) const {
  return Shell(fmt::format("env -u SLURM_JWT TESSERA_SLURM_INSTANCE={} SLURM_CONF={} {} {}",
                           instance_, Var("SLURM_CONF"), tool, args));
}

std::optional<std::string> RealSlurm::Scontrol(const std::string& args) const {
  return Tool("scontrol", args);
}

void RealSlurm::Stop() {
  if (vars_.empty()) return;
  Shell(fmt::format("TESSERA_SLURM_INSTANCE={} bash {}/stop-slurm.sh --purge", instance_,
                    ScriptDir()));
  vars_.clear();
}

}  // namespace tessera::agent::testing

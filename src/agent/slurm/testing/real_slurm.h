// RealSlurm: a real single-host Slurm for tests — slurmctld, one slurmd per virtual node with
// fake GPUs, slurmrestd with JWT and a private munge, all on loopback — started by
// scripts/slurm/start-slurm.sh and stopped (state removed) by Stop or the destructor. Needs
// root: the script installs missing Debian packages and runs the daemons.
//
// Each instance number has its own ports and state directory (/tmp/tessera-slurm-N), so tests
// and a developer's own Slurm do not collide. The scripts are found under $TESSERA_SOURCE_DIR,
// else under the source tree the test was built from.
// Thread-compatible.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tessera::agent::testing {

class RealSlurm {
 public:
  // Starts a fresh instance with `nodes` nodes of `gpus` GPUs each. On failure, error() says
  // why (and the script's messages are on stderr).
  RealSlurm(std::string instance, int nodes, int gpus);
  ~RealSlurm();
  RealSlurm(const RealSlurm&) = delete;
  RealSlurm& operator=(const RealSlurm&) = delete;

  // "" once started.
  const std::string& error() const { return error_; }
  // What the script exported: SLURM_REST_URL, SLURM_JWT, SLURM_REST_USER,
  // SLURM_REST_API_VERSION, SLURM_CONF, SLURM_TEST_DIR, ...; "" when absent.
  std::string Var(const std::string& name) const;
  // Runs a Slurm command-line tool against this instance (`tool` "sbatch", "scancel", ...;
  // without SLURM_JWT, with this instance's SLURM_CONF): its stdout, nullopt when it failed.
  std::optional<std::string> Tool(const std::string& tool, const std::string& args) const;
  // Tool("scontrol", args).
  std::optional<std::string> Scontrol(const std::string& args) const;
  void Stop();

 private:
  const std::string instance_;
  std::map<std::string, std::string> vars_;
  std::string error_;
};

// Runs a shell command; its stdout, or nullopt when it exited non-zero.
std::optional<std::string> Shell(const std::string& command);

}  // namespace tessera::agent::testing

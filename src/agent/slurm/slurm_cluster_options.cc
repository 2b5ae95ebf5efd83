#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>

#include "agent/slurm/slurm_cluster.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

std::optional<std::string> ProcessEnv(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string CurrentUser() {
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(geteuid(), &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return "";
}

// `field` keeps its flag value; else the variable's, when set and not empty.
void Fill(std::string& field, const EnvLookup& env, std::string_view variable) {
  if (!field.empty()) return;
  std::optional<std::string> value = env(variable);
  if (value.has_value()) field = *std::move(value);
}

}  // namespace

absl::StatusOr<SlurmClusterOptions> SlurmClusterOptions::FromEnvironment(SlurmClusterOptions flags,
                                                                         const EnvLookup& env) {
  const EnvLookup& lookup = env ? env : EnvLookup(ProcessEnv);
  Fill(flags.url, lookup, "SLURM_REST_URL");
  if (flags.jwt_file.empty() && flags.jwt.empty()) {
    Fill(flags.jwt_file, lookup, "SLURM_JWT_FILE");
    Fill(flags.jwt, lookup, "SLURM_JWT");
  }
  if (!flags.jwt_file.empty()) flags.jwt.clear();
  Fill(flags.user, lookup, "SLURM_REST_USER");
  Fill(flags.api_version, lookup, "SLURM_REST_API_VERSION");
  if (flags.url.empty()) {
    return absl::InvalidArgumentError(
        "slurm url: missing: pass --slurm-url or set SLURM_REST_URL (slurmrestd's address, "
        "http://host:6820)");
  }
  if (flags.jwt.empty() && flags.jwt_file.empty()) {
    return absl::InvalidArgumentError(
        "slurm jwt: missing: pass --slurm-jwt or --slurm-jwt-file, or set SLURM_JWT or "
        "SLURM_JWT_FILE (a token from `scontrol token`)");
  }
  if (flags.user.empty()) flags.user = CurrentUser();
  if (flags.user.empty()) {
    return absl::InvalidArgumentError(
        "slurm user: missing: pass --slurm-user or set SLURM_REST_USER");
  }
  if (flags.api_version.empty()) flags.api_version = std::string(kDefaultSlurmApiVersion);
  static const std::regex kVersion(R"(^v[0-9]+\.[0-9]+\.[0-9]+$)");
  if (!std::regex_match(flags.api_version, kVersion)) {
    return absl::InvalidArgumentError(fmt::format(
        "slurm api version: \"{}\" is not v<major>.<minor>.<patch> (--slurm-api-version, "
        "SLURM_REST_API_VERSION; e.g. v0.0.38)",
        flags.api_version));
  }
  return flags;
}

}  // namespace tessera::agent

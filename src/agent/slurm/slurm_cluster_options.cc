#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "agent/slurm/slurm_cluster.h"
#include "fmt/format.h"
#include "tessera/common/status_macros.h"

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

absl::StatusOr<std::optional<SlurmApiVersion>> ParseSlurmApiVersionSetting(
    std::string_view setting) {
  if (setting.empty() || setting == kAutoSlurmApiVersion) return std::nullopt;
  absl::StatusOr<SlurmApiVersion> version = ParseSlurmApiVersion(setting);
  if (version.ok()) return *version;
  return absl::InvalidArgumentError(
      fmt::format("slurm api version: {} (--slurm-api-version, SLURM_REST_API_VERSION)",
                  std::string(version.status().message())));
}

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
  if (flags.api_version.empty()) flags.api_version = std::string(kAutoSlurmApiVersion);
  TESSERA_RETURN_IF_ERROR(ParseSlurmApiVersionSetting(flags.api_version).status());
  return flags;
}

}  // namespace tessera::agent

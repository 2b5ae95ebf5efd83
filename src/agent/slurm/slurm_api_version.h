// SlurmApiVersion: the slurmrestd REST API versions the agent speaks on the `slurm/` paths.
//
//   v0.0.38  Slurm 22.05 (Debian 12; the real Slurm the integration tests start)
//   v0.0.39  Slurm 23.02
//   v0.0.40  Slurm 23.11
//   v0.0.41  Slurm 24.05
//   v0.0.42  Slurm 24.11
//   v0.0.43  Slurm 25.05
// A slurmrestd serves several versions side by side (each release keeps the previous ones for
// a while). The agent speaks one, chosen at start: the one given (--slurm-api-version), or with
// "auto" the newest of these that slurmrestd serves (slurm_api_probe.h). The replies of every
// version are read by one parser per reply (slurm_inventory.h, slurm_jobs.h, slurm_diag.h);
// only the submission body is written per version (slurm_submit.h).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::agent {

enum class SlurmApiVersion { kV38 = 38, kV39, kV40, kV41, kV42, kV43 };

// The setting that asks for the newest version slurmrestd serves.
inline constexpr std::string_view kAutoSlurmApiVersion = "auto";

// Every supported version, newest first.
const std::vector<SlurmApiVersion>& SupportedSlurmApiVersions();

// "v0.0.40".
std::string SlurmApiVersionName(SlurmApiVersion version);

// "v0.0.40" → kV40; InvalidArgument naming the supported versions for anything else (the
// caller adds which flag it came from).
absl::StatusOr<SlurmApiVersion> ParseSlurmApiVersion(std::string_view name);

}  // namespace tessera::agent

#include "agent/slurm/slurm_api_version.h"

#include "fmt/format.h"

namespace tessera::agent {

const std::vector<SlurmApiVersion>& SupportedSlurmApiVersions() {
  static const std::vector<SlurmApiVersion> kVersions = {
      SlurmApiVersion::kV43, SlurmApiVersion::kV42, SlurmApiVersion::kV41,
      SlurmApiVersion::kV40, SlurmApiVersion::kV39, SlurmApiVersion::kV38};
  return kVersions;
}

std::string SlurmApiVersionName(SlurmApiVersion version) {
  return fmt::format("v0.0.{}", static_cast<int>(version));
}

absl::StatusOr<SlurmApiVersion> ParseSlurmApiVersion(std::string_view name) {
  for (SlurmApiVersion version : SupportedSlurmApiVersions()) {
    if (name == SlurmApiVersionName(version)) return version;
  }
  return absl::InvalidArgumentError(fmt::format(
      "\"{}\" is not a supported REST API version (auto, or v0.0.38 to v0.0.43)", name));
}

}  // namespace tessera::agent

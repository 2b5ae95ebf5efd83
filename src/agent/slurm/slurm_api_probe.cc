#include "agent/slurm/slurm_api_probe.h"

#include <string>

#include "fmt/format.h"

namespace tessera::agent {

absl::StatusOr<SlurmApiVersion> ProbeSlurmApiVersion(SlurmTransport& transport) {
  for (SlurmApiVersion version : SupportedSlurmApiVersions()) {
    SlurmRestClient client(&transport, SlurmApiVersionName(version));
    absl::StatusOr<bool> served = client.ServesVersion();
    if (!served.ok()) {
      return absl::Status(served.status().code(),
                          fmt::format("probing slurmrestd's REST API versions: {}",
                                      std::string(served.status().message())));
    }
    if (*served) return version;
  }
  return absl::FailedPreconditionError(
      "slurmrestd serves none of the REST API versions v0.0.38 to v0.0.43 (GET "
      "/slurm/<version>/ping answered 404 for each): check that its openapi/slurmctld (or "
      "openapi/v0.0.NN) plugin is loaded, or pass --slurm-api-version");
}

}  // namespace tessera::agent

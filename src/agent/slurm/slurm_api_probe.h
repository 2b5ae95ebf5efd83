// SlurmApiProbe: which REST API version to speak to a slurmrestd, asked of the slurmrestd.
//
// With --slurm-api-version auto (the default) the agent asks slurmrestd once, at start, for
// `GET /slurm/<version>/ping` of every supported version, newest first (v0.0.43 down to
// v0.0.38, slurm_api_version.h), and speaks the first one that is served (any answer but HTTP
// 404). A slurmrestd of Slurm 22.05 answers 404 for v0.0.39 and later, so five small requests
// precede the choice of v0.0.38; a slurmrestd of Slurm 25.05 answers the first.
//
// Errors: Unavailable or Unauthenticated as any request (slurmrestd unreachable, a refused
// token: the probe stops at the first such answer); FailedPrecondition naming the versions
// tried and the flag when slurmrestd serves none of them.
// Thread-safety: as the transport.
#pragma once

#include "absl/status/statusor.h"
#include "agent/slurm/slurm_api_version.h"
#include "agent/slurm/slurm_rest_client.h"

namespace tessera::agent {

absl::StatusOr<SlurmApiVersion> ProbeSlurmApiVersion(SlurmTransport& transport);

}  // namespace tessera::agent

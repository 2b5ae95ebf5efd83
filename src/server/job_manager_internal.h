// Helpers the job manager's source files share (job_manager.cc, job_manager_submit.cc); not a
// public interface. Thread-safe: pure functions (StoreFailure also writes to stderr).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tessera::server {

// The key of the per-tenant indices (request ids, names): tenant + '\0' + name.
std::string IndexKey(std::string_view tenant, std::string_view name);

// The Scheduler and the core's Validate name the field at fault first ("queues[2].weight: must
// be >= 1"): `status` with that field attached (spec::ErrorField), so the API reports it.
absl::Status WithLeadingField(absl::Status status);

// A store error as the API reports it. Back-pressure and unavailability keep their codes (the
// client may retry); anything else is Internal: the store's own message, which names fields of
// its transaction, is for the operator's log (written to stderr), not for the client.
absl::Status StoreFailure(std::string_view what, const absl::Status& status);

}  // namespace tessera::server

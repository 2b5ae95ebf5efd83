// Errors of the job-spec codec: InvalidArgument "[LINE:COLUMN: ][FIELD: ]MESSAGE" with the
// parts attached as a payload (read back by GetJobSpecError in jobspec.h).
// Not a public API. Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "spec/internal/document_tree.h"
#include "spec/jobspec.h"

namespace tessera::spec::internal {

// `field` may be empty (syntax and size errors); `position` may be unknown.
absl::Status DocumentError(Position position, std::string_view field, std::string_view message);

// The error of a status from DocumentError (or one re-wrapped by WithSource).
std::optional<JobSpecError> ErrorParts(const absl::Status& status);

// Prefixes "SOURCE:" (before a position) or "SOURCE: " to the message, keeping the payload.
absl::Status WithSource(const absl::Status& status, std::string_view source);

}  // namespace tessera::spec::internal

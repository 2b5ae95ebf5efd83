// ParseRenderedJobJson: the job document of a JSON text that RenderJobJson wrote, read back the
// quick way (the server keeps each job's spec in its store so, and reads every one of them when
// it starts: server/job_record.h).
//
// The result is the one ParseJobDocument(text, {.format = DocumentFormat::kJson}) gives, for any
// text, error messages included. Texts of the shape RenderJobJson writes (its keys, numbers where
// it writes numbers, strings where it writes strings) are decoded straight from the text, without
// the document tree and the field positions that ParseJobDocument keeps for its messages; the
// spec is still checked with JobSpec::Validate. Every other text, and every text such a
// document's checks refuse, goes to ParseJobDocument itself. Priority classes are the built-in
// ones (RenderJobJson writes the priority, never a class).
// Thread-safe: a pure function.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "spec/job_document.h"

namespace tessera::spec {

absl::StatusOr<JobDocument> ParseRenderedJobJson(std::string_view text);

}  // namespace tessera::spec

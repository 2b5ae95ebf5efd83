// JobDecoder: applies the job-document schema (shared/JOBSPEC.md) to a DocumentTree.
//
// Reads apiVersion, kind, metadata and spec into a JobDocument, refusing unknown keys, keys
// given twice, wrong types and bad values with DocumentError (field path in camelCase, the
// node's position), then runs JobSpec::Validate and reports its errors under the document's
// field names and positions. Not a public API; jobspec.h is.
// Not thread-safe; one decoder per document.
#pragma once

#include "absl/status/statusor.h"
#include "spec/internal/document_tree.h"
#include "spec/job_document.h"
#include "spec/priority_class.h"

namespace tessera::spec::internal {

absl::StatusOr<JobDocument> DecodeJobDocument(const DocumentTree& tree,
                                              const PriorityClasses& priority_classes);

}  // namespace tessera::spec::internal

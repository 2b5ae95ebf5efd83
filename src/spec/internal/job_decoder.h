// JobDecoder: applies the job-document schema (shared/JOBSPEC.md) to a DocumentTree.
//
// DecodeJobDocument reads apiVersion, kind, metadata and spec (camelCase) into a JobDocument;
// DecodeJobMapping reads one snake_case mapping (job_mapping.h) into a JobSpec. Both refuse
// unknown keys, keys given twice, wrong types and bad values with DocumentError (the field path
// as the document writes it, the node's position), then run JobSpec::Validate and report its
// errors under the document's field names and positions. Not a public API; jobspec.h and
// job_mapping.h are.
// Not thread-safe; one decoder per document.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "spec/internal/document_tree.h"
#include "spec/job_document.h"
#include "spec/job_mapping.h"
#include "spec/priority_class.h"

namespace tessera::spec::internal {

absl::StatusOr<JobDocument> DecodeJobDocument(const DocumentTree& tree,
                                              const PriorityClasses& priority_classes);

// The tree's root in the snake_case style, at field path options.path.
absl::StatusOr<JobSpec> DecodeJobMapping(const DocumentTree& tree,
                                         const JobMappingOptions& options);

}  // namespace tessera::spec::internal

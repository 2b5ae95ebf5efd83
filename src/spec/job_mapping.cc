#include "spec/job_mapping.h"

#include "absl/status/statusor.h"
#include "spec/internal/document_tree.h"
#include "spec/internal/job_decoder.h"

namespace tessera::spec {

absl::StatusOr<JobSpec> DecodeSnakeCaseJob(const YAML::Node& job,
                                           const JobMappingOptions& options) {
  internal::DocumentLimits limits;
  limits.max_depth = options.max_depth;
  absl::StatusOr<internal::DocumentTree> tree = internal::CopyYamlNode(job, limits);
  if (!tree.ok()) return tree.status();
  return internal::DecodeJobMapping(*tree, options);
}

}  // namespace tessera::spec

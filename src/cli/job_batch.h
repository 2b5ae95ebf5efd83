// The CLI's side of POST /api/v1/jobs:batch (docs/api.md): several job documents in one
// request, one answer per document.
// Thread-safety: as RestClient (one client per thread).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/client/rest_client.h"

namespace tessera::cli {

// The most documents one request takes (the server's bound).
inline constexpr size_t kMaxBatchJobs = 1000;

// One document's answer.
struct BatchItem {
  absl::Status error;     // OK when the job was submitted; else the server's error for it
                          // (its field "items[3].spec.queue", client/api_error.h)
  std::string id;         // the job's id when submitted
  bool created = false;   // false: its metadata.requestId returned an earlier job
};

// POSTs `documents` (JSON texts of job documents, 1..kMaxBatchJobs) as one batch and returns
// one item per document, in order. An error is the request's own: the server unreachable, a
// 429 or a refusal of the whole batch, or an answer without one item per document (Internal).
absl::StatusOr<std::vector<BatchItem>> PostJobBatch(RestClient& client,
                                                    std::span<const std::string> documents);

}  // namespace tessera::cli

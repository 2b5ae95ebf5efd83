// JSON views of the JobService's answers for the REST API (docs/api.md, docs/openapi.yaml), and
// the mapping of an absl::Status onto an HTTP status and the API's error body.
//
// Jobs are the job-spec codec's documents (spec/job_json.h) with metadata.tenant added.
// Quantities are written as in job documents: cpu and memory as Kubernetes strings ("64",
// "512Gi"), gpu as a number of GPUs (fractional when shared); times as RFC 3339 in UTC.
//
// Errors: every error body is {"error": {"code", "message"[, "field"]}} with the canonical code
// name. `field` comes from spec/request_error.h (ErrorField).
// Thread-safe: pure functions.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "server/job_service.h"
#include "spec/request_error.h"

namespace tessera::api {

nlohmann::ordered_json JobViewToJson(const server::JobView& job);
nlohmann::ordered_json JobEventToJson(const server::JobEvent& event);
nlohmann::ordered_json JobExplanationToJson(const server::JobExplanation& explanation);
nlohmann::ordered_json NodeViewToJson(const server::NodeView& node);
nlohmann::ordered_json ClusterViewToJson(const server::ClusterView& cluster);
// A queue: its spec (spec/queue_document.h: QueueSpecToJson) with usage, borrowing, share and
// pendingJobs, admittedJobs, runningJobs.
nlohmann::ordered_json QueueViewToJson(const server::QueueView& queue);
// {"cpu": "64", "memory": "512Gi", "gpu": 8}, plus gpuMemory and extended resources when set.
nlohmann::ordered_json ResourcesToJson(const Resources& resources);

struct HttpError {
  int http_status = 500;
  nlohmann::ordered_json body;  // {"error": {...}}
};
// REQUIRES: !status.ok(). INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403,
// NOT_FOUND 404, ALREADY_EXISTS and FAILED_PRECONDITION 409, RESOURCE_EXHAUSTED 429,
// UNAVAILABLE 503, anything else 500.
HttpError StatusToHttpError(const absl::Status& status);
// The error body for `code` and `message` (no field); for errors raised by the HTTP layer
// itself (413, unknown routes).
nlohmann::ordered_json ErrorBody(absl::StatusCode code, std::string_view message);

}  // namespace tessera::api

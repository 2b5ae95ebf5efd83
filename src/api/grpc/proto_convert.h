// Conversions between the control plane's JobService types (server/job_service.h) and the
// messages of the gRPC API (proto/tessera/v1/jobs.proto).
//
// Service → proto (ToProto) cannot fail. Quantities keep their base units (cpu millicores,
// memory bytes, gpu milli-GPU); TimePoints (milliseconds since the Unix epoch) become
// google.protobuf.Timestamps, and an unset optional time leaves the Timestamp unset. A Job
// carries the full document as one line of JSON — the body the REST API answers for the same
// job (JOBSPEC.md shape with metadata.id, metadata.tenant and status).
//
// Proto → service (FromProto) checks what the proto's types cannot: enum values outside the
// declared ones are InvalidArgument naming the request field (see grpc_status.h, FieldError).
// Proto3 zero values stand for the service's defaults (limit 0 = 100 jobs or 1 MiB of log).
// Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/job_phase.h"
#include "core/resources.h"
#include "server/job_service.h"
#include "spec/jobspec.h"
#include "tessera/common/clock.h"
#include "tessera/v1/jobs.pb.h"

namespace tessera::api {

tessera::v1::JobPhase ToProto(JobPhase phase);
void ToProto(TimePoint time, google::protobuf::Timestamp* out);
tessera::v1::Resources ToProto(const Resources& resources);
tessera::v1::Job ToProto(const server::JobView& job);
tessera::v1::JobEvent ToProto(const server::JobEvent& event);
tessera::v1::Explanation ToProto(const server::JobExplanation& explanation);
tessera::v1::LogChunk ToProto(const LogChunk& chunk);
tessera::v1::Node ToProto(const server::NodeView& node);
tessera::v1::Cluster ToProto(const server::ClusterView& cluster);
tessera::v1::Queue ToProto(const server::QueueView& queue);

// The job's document as one line of JSON with metadata.tenant after metadata.id.
std::string JobDocumentJson(const server::JobView& job);

// nullopt for JOB_PHASE_UNSPECIFIED (no filter); `field` names the request field in errors.
absl::StatusOr<std::optional<JobPhase>> FromProto(tessera::v1::JobPhase phase,
                                                  std::string_view field);
absl::StatusOr<spec::DocumentFormat> FromProto(tessera::v1::DocumentFormat format);
absl::StatusOr<server::JobStateFilter> FromProto(tessera::v1::JobStateFilter state);
absl::StatusOr<server::ListOrder> FromProto(tessera::v1::ListOrder order);
absl::StatusOr<server::ListJobsRequest> FromProto(const tessera::v1::ListJobsRequest& request);
absl::StatusOr<server::LogRequest> FromProto(const tessera::v1::GetJobLogsRequest& request);
server::WatchRequest FromProto(const tessera::v1::WatchJobEventsRequest& request);

}  // namespace tessera::api

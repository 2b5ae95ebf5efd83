// JobDocument: a job as the API shows it — the spec a client submitted, the metadata the
// server adds, and the status the server maintains (the shape of shared/JOBSPEC.md).
//
// The spec is the core's JobSpec (core/job.h); its name and labels are the document's
// metadata.name and metadata.labels. JobMetadata holds what the spec does not: the id the
// server assigns and the client's idempotency key. JobStatus is written by the server only;
// a client document that carries one is refused (jobspec.h).
// Times are TimePoints (milliseconds since the Unix epoch), shown as RFC 3339 in UTC.
// Value types; safe to share when const.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/job_phase.h"
#include "tessera/common/clock.h"

namespace tessera::spec {

struct JobMetadata {
  std::string id;          // assigned by the server; empty in a client's submission
  std::string request_id;  // optional idempotency key: a retry returns the same job
};

struct TaskStatus {
  std::string name;              // "<group>-<index>": "worker-0"
  std::string node;              // empty until placed
  std::vector<int32_t> devices;  // GPU indices on the node
  TaskPhase phase = TaskPhase::kPending;
  std::optional<int32_t> exit_code;  // once the task has ended
};

struct JobStatus {
  JobPhase phase = JobPhase::kPending;
  std::string reason;   // a code: "InsufficientResources", "QuotaExceeded", ...; may be empty
  std::string message;  // the detail in words
  std::string cluster;  // where it runs; empty until placed
  std::vector<TaskStatus> tasks;
  std::optional<TimePoint> submit_time;
  std::optional<TimePoint> start_time;
  std::optional<TimePoint> end_time;
  std::optional<TimePoint> estimated_start_time;  // pending jobs, when known
  int32_t preemptions = 0;  // times the job was evicted by preemption or reclaim
};

struct JobDocument {
  JobMetadata metadata;
  JobSpec spec;
  std::optional<JobStatus> status;  // nullopt: not rendered
};

}  // namespace tessera::spec

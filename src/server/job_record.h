// JobRecord: one job as the control plane keeps it — the API document (spec and status) plus
// what the lifecycle needs and the API does not show: each task's placement and launch id,
// the attempt and restart counts, whether a cancel was asked for — and its store encoding.
//
// Store layout (all values JSON):
//   /tessera/jobs/<id, 20 digits>                 the record (EncodeJobRecord)
//   /tessera/events/<id, 20 digits>/<seq, 20 digits>   one JobEvent (EncodeJobEvent)
//   /tessera/requests/<tenant>/<request id>       the job id a request id was given
// Ids are decimal integers from 1; keys are zero-padded so that key order is id order.
//
// The spec is stored as its own JOBSPEC document (spec::RenderJobJson without id and status)
// and decoded with spec::ParseJobDocument, so the store holds exactly what the API accepts.
// Decoding errors are DataLoss naming the key's field. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/placement.h"
#include "server/job_service.h"
#include "spec/job_document.h"

namespace tessera::server {

// One task of a job (task-group order: group 0's replicas first).
struct TaskRuntime {
  std::string name;         // "worker-0"
  std::string cluster;      // where it is placed; "" until placed
  Placement placement;      // node "" until placed; node_index is not stored
  TaskPhase phase = TaskPhase::kPending;
  std::optional<int32_t> exit_code;
  std::string launch_id;     // "<job id>-<task name>-a<attempt>"; "" until placed
  bool launched = false;     // the binding was sent to the cluster
  std::optional<TimePoint> start_time;
  bool ended = false;        // the cluster reported its end (its resources are free again)
  std::string reason;        // how it ended: "TimeLimitExceeded", "Lost", ...; "" when fine
  std::string message;
};

// What happens to a job evicted by preemption once its tasks are gone.
enum class PreemptionAction { kNone, kRequeue, kCancel };

struct JobRecord {
  int64_t id = 0;
  std::string tenant;
  spec::JobDocument document;  // metadata.id set; status always set
  std::vector<TaskRuntime> tasks;
  int32_t attempt = 0;   // placements so far minus one; part of every launch id
  int32_t restarts = 0;  // requeues under the restart policy
  bool cancel_requested = false;
  // Set while a preemption tears the job down (kNone otherwise).
  PreemptionAction preemption = PreemptionAction::kNone;
  int64_t last_event = 0;  // sequence of the job's last event

  const spec::JobStatus& status() const { return *document.status; }
  spec::JobStatus& status() { return *document.status; }
  // Copies the tasks' placements and phases into status.tasks.
  void SyncTaskStatus();
  JobView View() const;
};

// A new Pending record for a submitted document: one TaskRuntime per replica, status set.
JobRecord NewJobRecord(int64_t id, std::string tenant, spec::JobDocument document, TimePoint now);

std::string JobKey(int64_t id);
std::string EventKey(int64_t id, int64_t sequence);
std::string EventPrefix(int64_t id);
std::string RequestKey(std::string_view tenant, std::string_view request_id);
inline constexpr std::string_view kJobPrefix = "/tessera/jobs/";

std::string FormatJobId(int64_t id);
// The id of a decimal string; nullopt for anything else ("0042" and "-1" included).
std::optional<int64_t> ParseJobId(std::string_view text);

std::string EncodeJobRecord(const JobRecord& record);
absl::StatusOr<JobRecord> DecodeJobRecord(std::string_view key, std::string_view value);
std::string EncodeJobEvent(const JobEvent& event);
absl::StatusOr<JobEvent> DecodeJobEvent(std::string_view key, std::string_view value);

}  // namespace tessera::server

// JobRecord: one job as the control plane keeps it — the API document (spec and status) plus
// what the lifecycle needs and the API does not show: each task's placement and launch id,
// the attempt and restart counts, whether a cancel was asked for — and its store encoding.
//
// Store layout (all values JSON):
//   /tessera/specs/<id, 20 digits>                the job's JOBSPEC document, written once at
//                                                 submission (EncodeJobSpec)
//   /tessera/jobs/<id, 20 digits>                 the record without its spec and tasks
//                                                 (EncodeJobRecord)
//   /tessera/tasks/<id, 20 digits>/<index, 6 digits>   one task that has left its initial state
//                                                 (EncodeTaskRecord; absent: as NewJobRecord
//                                                 makes it — Pending, not placed)
//   /tessera/events/<id, 20 digits>/<seq, 20 digits>   one JobEvent (EncodeJobEvent)
//   /tessera/requests/<tenant>/<request id>       the job id a request id was given
// Ids are decimal integers from 1; keys are zero-padded so that key order is id order. Each task
// has its own key so that a job's stored values do not grow with its placements: a 4,096-task
// gang is as storable placed as pending. Records written before tasks had keys hold them inline
// ("tasks") and still decode; their next write moves them to their keys. The spec has its own
// key so that each step of a job rewrites only its small status record; records written before
// specs had keys hold the spec inline ("document") and still decode (spec_stored false); their
// next write stores the spec under its key.
//
// Size bounds (every write of a job must be storable, whatever happens to it later): free text
// is stored cut to kMaxStoredReasonBytes / kMaxStoredMessageBytes / kMaxStoredTaskMessageBytes
// (BoundText), and CheckStorable refuses at submission a job whose worst-case record, task or
// write would exceed the store's TxnLimits.
//
// The spec is stored as its own JOBSPEC document (spec::RenderJobJson without id and status)
// and decoded with spec::ParseRenderedJobJson, so the store holds exactly what the API accepts.
// Decoding errors are DataLoss naming the key's field. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "control/attempt_tally.h"
#include "control/restart_rules.h"
#include "core/placement.h"
#include "server/changed_tasks.h"
#include "server/job_service.h"
#include "spec/job_document.h"
#include "tessera/store/store.h"
#include "tessera/store/txn.h"

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

struct JobRecord {
  int64_t id = 0;
  std::string tenant;
  spec::JobDocument document;  // metadata.id set; status always set
  std::vector<TaskRuntime> tasks;
  int32_t attempt = 0;   // placements so far minus one; part of every launch id
  int32_t restarts = 0;  // requeues under the restart policy
  // When the current attempt was requeued (attempt > 0), on the manager's clock: where its wait
  // for placement starts (the first attempt's starts at status.submit_time). Not stored: nullopt
  // in a record read from the store.
  std::optional<TimePoint> requeued_at;
  bool cancel_requested = false;
  // Set while a preemption, a drain or a NoExecute taint tears the job down (kNone otherwise);
  // what follows is control::AfterAttempt's.
  control::Eviction preemption = control::Eviction::kNone;
  // While a drain evicts the job: the grace its tasks get instead of terminationGracePeriod
  // (the drain's --grace). Not stored: a restarted manager takes it from the node's record.
  std::optional<Duration> eviction_grace;
  int64_t last_event = 0;  // sequence of the job's last event
  // Whether SpecKey holds the spec; false for a record read with its spec inline (an older
  // version's), until its next write stores the spec under its key.
  bool spec_stored = true;
  // Per task: what its key holds in the store (nullopt while the key is absent), so that a
  // write carries only the tasks that changed (TaskWrites). Sized like `tasks`.
  std::vector<std::optional<TaskRuntime>> stored_tasks;
  // The tasks that may have changed since TaskWrites and SyncTaskStatus last looked: whatever
  // changes tasks[i] then calls TaskChanged(i) (or AllTasksChanged), and those two look only at
  // these tasks.
  ChangedTasks unwritten_tasks;
  ChangedTasks unsynced_tasks;
  // Where the attempt stands, kept as its tasks change (the job manager's Resolve), with the
  // tasks changed since it last looked. Sized like `tasks` once Resolve has looked; not stored.
  control::AttemptTally tally;
  ChangedTasks untallied_tasks;

  const spec::JobStatus& status() const { return *document.status; }
  spec::JobStatus& status() { return *document.status; }
  void TaskChanged(int32_t index) {
    unwritten_tasks.Mark(index);
    unsynced_tasks.Mark(index);
    untallied_tasks.Mark(index);
  }
  void AllTasksChanged() {
    unwritten_tasks.MarkAll(static_cast<int32_t>(tasks.size()));
    unsynced_tasks.MarkAll(static_cast<int32_t>(tasks.size()));
    untallied_tasks.MarkAll(static_cast<int32_t>(tasks.size()));
  }
  // Copies the placements and phases of the tasks changed since the last sync into
  // status.tasks (of every task when status.tasks is not sized like `tasks`).
  void SyncTaskStatus();
  JobView View() const;
};

// A new Pending record for a submitted document: one TaskRuntime per replica, status set.
JobRecord NewJobRecord(int64_t id, std::string tenant, spec::JobDocument document, TimePoint now);

// Bounds on free text in stored values, in bytes (BoundText).
inline constexpr size_t kMaxStoredReasonBytes = 256;    // status, task and event reasons
inline constexpr size_t kMaxStoredMessageBytes = 4096;  // status and event messages
inline constexpr size_t kMaxStoredTaskMessageBytes = 1024;
// The most events one write of a job carries (a lifecycle step and its consequences).
inline constexpr size_t kMaxEventsPerWrite = 4;

// `text` as it is stored: invalid UTF-8 and control characters other than newline and tab
// become ' ', and text longer than `max_bytes` is cut at a character boundary and ends "…".
// The result is at most `max_bytes` bytes (REQUIRES: max_bytes >= 3).
std::string BoundText(std::string_view text, size_t max_bytes);

// OK when a job of `document` submitted by `tenant` can be stored in every state it may reach
// (all tasks placed, every text field at its bound) under `limits`; otherwise InvalidArgument
// naming the field that makes it too large (spec::FieldError): the spec's largest part
// ("spec.tasks[0].command") when its spec or its record is, spec.tasks[i].resources.gpu when one
// task is, spec.tasks[i].replicas when one write placing every task is. REQUIRES: a valid spec.
absl::Status CheckStorable(const spec::JobDocument& document, std::string_view tenant,
                           const store::TxnLimits& limits);

std::string SpecKey(int64_t id);
std::string JobKey(int64_t id);
std::string TaskKey(int64_t id, int32_t index);
std::string EventKey(int64_t id, int64_t sequence);
std::string EventPrefix(int64_t id);
std::string RequestKey(std::string_view tenant, std::string_view request_id);
inline constexpr std::string_view kSpecPrefix = "/tessera/specs/";
inline constexpr std::string_view kJobPrefix = "/tessera/jobs/";
inline constexpr std::string_view kTaskPrefix = "/tessera/tasks/";

std::string FormatJobId(int64_t id);
// The id of a decimal string; nullopt for anything else ("0042" and "-1" included).
std::optional<int64_t> ParseJobId(std::string_view text);
// The id of a key that is `prefix` and 20 digits (SpecKey, JobKey); nullopt for another key.
std::optional<int64_t> IdOfKey(std::string_view key, std::string_view prefix);

// The job's spec as it is stored once, at submission: its JOBSPEC document without id and
// status (request id and spec).
std::string EncodeJobSpec(const JobRecord& record);
// The document stored under `key` (a SpecKey), metadata.id set, no status. DataLoss naming the
// key for a value that does not decode.
absl::StatusOr<spec::JobDocument> DecodeJobSpec(std::string_view key, std::string_view value);
// The record without its spec and tasks (they have their own keys: EncodeJobSpec, TaskWrites).
std::string EncodeJobRecord(const JobRecord& record);
// The record stored under `key` (a JobKey), with `spec` (the job's stored spec: DecodeJobSpec)
// as its document and its tasks as NewJobRecord makes them (or as stored inline by older
// versions); LoadStoredTask then applies each stored task. A record of an older version holds
// its spec and ignores `spec`; any other needs it: DataLoss naming the spec's key when it is
// nullopt, and naming `key` for a value that does not decode or does not match its spec.
absl::StatusOr<JobRecord> DecodeJobRecord(std::string_view key, std::string_view value,
                                          std::optional<spec::JobDocument> spec);
// DecodeJobRecord of a stored job key, with the job's spec moved out of `specs` (specs by job
// id, as DecodeJobSpec read them) when it is there. Moves only that job's entry and leaves the
// map's shape alone, so records of distinct jobs may be decoded on several threads at once.
absl::StatusOr<JobRecord> DecodeJobRecord(const store::KeyValue& kv,
                                          std::map<int64_t, spec::JobDocument>& specs);
std::string EncodeTaskRecord(const TaskRuntime& task);
// The puts and deletes that bring the task keys of `record` up to date with its tasks (none for
// a task unchanged since its last write), and notes them in record.stored_tasks. Looks only at
// the tasks marked in record.unwritten_tasks, and takes them.
std::vector<store::Op> TaskWrites(JobRecord& record);
// Applies the task stored under `key` (a TaskKey) to its record in `jobs`. DataLoss naming the
// key for a value that does not decode, or a task that no record of `jobs` has.
absl::Status LoadStoredTask(std::map<int64_t, JobRecord>& jobs, std::string_view key,
                            std::string_view value);
// Applies the deletion of the task key `key` (a TaskKey) to its record in `jobs`: the task is
// as NewJobRecord makes it again (the lifecycle deletes a task's key when the task returns to
// that state, as a requeue does). DataLoss as LoadStoredTask.
absl::Status ResetStoredTask(std::map<int64_t, JobRecord>& jobs, std::string_view key);
std::string EncodeJobEvent(const JobEvent& event);
absl::StatusOr<JobEvent> DecodeJobEvent(std::string_view key, std::string_view value);
// The stored events of job `id`, in sequence order: the store's error, or DataLoss for an event
// that does not decode.
absl::StatusOr<std::vector<JobEvent>> ReadJobEvents(store::Store& store, int64_t id);

}  // namespace tessera::server

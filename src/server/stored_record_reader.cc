#include "server/stored_record_reader.h"

#include <iterator>
#include <limits>

#include "spec/jobspec.h"
#include "spec/json_reader.h"

namespace tessera::server {
namespace {

constexpr std::string_view kPreemptionNames[] = {"", "requeue", "cancel", "drain", "taint"};

TimePoint FromMillis(int64_t ms) { return TimePoint(Duration(ms)); }

// The quick reading of a stored record (DecodeJobRecord): the fields as EncodeJobRecord writes
// them, straight from the text. False for anything else (a record of an older version, a value
// nlohmann-json would convert, a corrupt one); ReadFieldsFully then reads the record.
bool ReadInt32(spec::JsonReader& in, int32_t& out) {
  int64_t value = 0;
  if (!in.Integer(value) || value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return in.Fail();
  }
  out = static_cast<int32_t>(value);
  return true;
}

bool ReadOptionalTime(spec::JsonReader& in, std::optional<TimePoint>& out) {
  out.reset();
  if (in.AtNull()) return true;
  int64_t ms = 0;
  if (!in.Integer(ms)) return false;
  out = FromMillis(ms);
  return true;
}

// The index of `key` in `keys`, or -1.
template <size_t N>
int KeyIndex(std::string_view key, const std::string_view (&keys)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (keys[i] == key) return static_cast<int>(i);
  }
  return -1;
}

bool ReadStatus(spec::JsonReader& in, spec::JobStatus& status) {
  enum { kPhase, kReason, kMessage, kCluster, kSubmitTime, kStartTime, kEndTime, kPreemptions };
  static constexpr std::string_view kKeys[] = {"phase",      "reason",    "message", "cluster",
                                               "submitTime", "startTime", "endTime", "preemptions"};
  if (!in.BeginObject()) return false;
  uint32_t seen = 0;
  std::string phase;
  std::string_view key;
  while (in.NextKey(key)) {
    const int index = KeyIndex(key, kKeys);
    if (index < 0 || (seen & (1u << index)) != 0) return in.Fail();
    seen |= 1u << index;
    bool read = false;
    switch (index) {
      case kPhase: {
        std::optional<JobPhase> parsed;
        read = in.String(phase) && (parsed = ParseJobPhase(phase)).has_value();
        if (read) status.phase = *parsed;
        break;
      }
      case kReason:
        read = in.String(status.reason);
        break;
      case kMessage:
        read = in.String(status.message);
        break;
      case kCluster:
        read = in.String(status.cluster);
        break;
      case kSubmitTime:
        read = ReadOptionalTime(in, status.submit_time);
        break;
      case kStartTime:
        read = ReadOptionalTime(in, status.start_time);
        break;
      case kEndTime:
        read = ReadOptionalTime(in, status.end_time);
        break;
      default:
        read = ReadInt32(in, status.preemptions);
    }
    if (!read) return in.Fail();
  }
  const uint32_t required = (1u << kPreemptions) - 1;  // preemptions may be absent
  return in.ok() && (seen & required) == required;
}

}  // namespace

std::string_view PreemptionName(control::Eviction action) {
  return kPreemptionNames[static_cast<int>(action)];
}

std::optional<control::Eviction> FindPreemption(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kPreemptionNames)); ++i) {
    if (kPreemptionNames[i] == name) return static_cast<control::Eviction>(i);
  }
  return std::nullopt;
}

bool ReadFieldsQuickly(std::string_view value, JobRecord& record, spec::JobStatus& status,
                       std::optional<std::string>& document) {
  enum {
    kAttempt,
    kCancelRequested,
    kDocument,
    kId,
    kLastEvent,
    kPreemption,
    kRestarts,
    kStatus,
    kTenant
  };
  static constexpr std::string_view kKeys[] = {"attempt",  "cancelRequested", "document",
                                               "id",       "lastEvent",       "preemption",
                                               "restarts", "status",          "tenant"};
  spec::JsonReader in(value);
  if (!in.BeginObject()) return false;
  uint32_t seen = 0;
  std::string preemption;
  std::string_view key;
  while (in.NextKey(key)) {
    const int index = KeyIndex(key, kKeys);
    if (index < 0 || (seen & (1u << index)) != 0) return false;
    seen |= 1u << index;
    bool read = false;
    switch (index) {
      case kAttempt:
        read = ReadInt32(in, record.attempt);
        break;
      case kCancelRequested:
        read = in.Bool(record.cancel_requested);
        break;
      case kDocument:
        read = in.String(document.emplace());
        break;
      case kId:
        read = in.Integer(record.id);
        break;
      case kLastEvent:
        read = in.Integer(record.last_event);
        break;
      case kPreemption: {
        std::optional<control::Eviction> action;
        read = in.String(preemption) && (action = FindPreemption(preemption)).has_value();
        if (read) record.preemption = *action;
        break;
      }
      case kRestarts:
        read = ReadInt32(in, record.restarts);
        break;
      case kStatus:
        read = ReadStatus(in, status);
        break;
      default:
        read = in.String(record.tenant);
    }
    if (!read) return false;
  }
  // The spec is inline only in an older version's records, which may lack a preemption.
  const uint32_t required = ((1u << 9) - 1) & ~(1u << kPreemption) & ~(1u << kDocument);
  return in.Finish() && (seen & required) == required;
}

// A task record as EncodeTaskRecord writes it, read straight from the text; false for anything
// else (LoadStoredTask then reads it through nlohmann-json).
bool ReadTaskQuickly(std::string_view value, TaskRuntime& task) {
  enum {
    kCluster,
    kEnded,
    kExitCode,
    kGpuMemory,
    kGpuMilli,
    kGpus,
    kLaunchId,
    kLaunched,
    kMessage,
    kName,
    kNode,
    kPhase,
    kReason,
    kStartTime,
    kCount
  };
  static constexpr std::string_view kKeys[] = {
      "cluster",  "ended",   "exitCode", "gpuMemory", "gpuMilli", "gpus",   "launchId",
      "launched", "message", "name",     "node",      "phase",    "reason", "startTime"};
  spec::JsonReader in(value);
  if (!in.BeginObject()) return false;
  uint32_t seen = 0;
  std::string text;
  std::string_view key;
  while (in.NextKey(key)) {
    const int index = KeyIndex(key, kKeys);
    if (index < 0 || (seen & (1u << index)) != 0) return false;
    seen |= 1u << index;
    bool read = false;
    switch (index) {
      case kCluster:
        read = in.String(task.cluster);
        break;
      case kEnded:
        read = in.Bool(task.ended);
        break;
      case kExitCode: {
        int32_t code = 0;
        if (in.AtNull()) {
          read = true;
        } else if ((read = ReadInt32(in, code))) {
          task.exit_code = code;
        }
        break;
      }
      case kGpuMemory:
        read = in.Integer(task.placement.gpu_memory);
        break;
      case kGpuMilli:
        read = in.Integer(task.placement.gpu_milli);
        break;
      case kGpus:
        read = in.BeginArray();
        while (read && in.NextItem()) {
          int32_t gpu = 0;
          if ((read = ReadInt32(in, gpu))) task.placement.gpus.push_back(gpu);
        }
        read = read && in.ok();
        break;
      case kLaunchId:
        read = in.String(task.launch_id);
        break;
      case kLaunched:
        read = in.Bool(task.launched);
        break;
      case kMessage:
        read = in.String(task.message);
        break;
      case kName:
        read = in.String(task.name);
        break;
      case kNode:
        read = in.String(task.placement.node);
        break;
      case kPhase: {
        std::optional<TaskPhase> phase;
        read = in.String(text) && (phase = ParseTaskPhase(text)).has_value();
        if (read) task.phase = *phase;
        break;
      }
      case kReason:
        read = in.String(task.reason);
        break;
      default:
        read = ReadOptionalTime(in, task.start_time);
    }
    if (!read) return false;
  }
  return in.Finish() && seen == (1u << kCount) - 1;
}

}  // namespace tessera::server

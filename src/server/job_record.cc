#include "server/job_record.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <limits>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "server/stored_record_reader.h"
#include "spec/jobspec.h"
#include "spec/rendered_job_json.h"
#include "spec/request_error.h"

namespace tessera::server {
namespace {

using nlohmann::json;

constexpr std::string_view kEventPrefix = "/tessera/events/";
constexpr std::string_view kRequestPrefix = "/tessera/requests/";

int64_t Millis(TimePoint t) { return t.time_since_epoch().count(); }
TimePoint FromMillis(int64_t ms) { return TimePoint(Duration(ms)); }

json OptionalTime(const std::optional<TimePoint>& t) {
  return t.has_value() ? json(Millis(*t)) : json(nullptr);
}
std::optional<TimePoint> ReadTime(const json& j) {
  if (j.is_null()) return std::nullopt;
  return FromMillis(j.get<int64_t>());
}

// A task as it starts: pending, not placed, never run.
bool IsInitial(const TaskRuntime& task) {
  return task.cluster.empty() && task.placement.node.empty() && task.placement.gpus.empty() &&
         task.placement.gpu_milli == 0 && task.placement.gpu_memory == 0 &&
         task.phase == TaskPhase::kPending && !task.exit_code.has_value() &&
         task.launch_id.empty() && !task.launched && !task.start_time.has_value() && !task.ended &&
         task.reason.empty() && task.message.empty();
}

// Whether `a` and `b` store the same value (node_index is not stored).
bool SameStored(const TaskRuntime& a, const TaskRuntime& b) {
  return a.name == b.name && a.cluster == b.cluster && a.placement.node == b.placement.node &&
         a.placement.gpus == b.placement.gpus && a.placement.gpu_milli == b.placement.gpu_milli &&
         a.placement.gpu_memory == b.placement.gpu_memory && a.phase == b.phase &&
         a.exit_code == b.exit_code && a.launch_id == b.launch_id && a.launched == b.launched &&
         a.start_time == b.start_time && a.ended == b.ended && a.reason == b.reason &&
         a.message == b.message;
}

// The initial tasks of `spec`: one per replica, in task-group order.
std::vector<TaskRuntime> InitialTasks(const JobSpec& spec) {
  std::vector<TaskRuntime> tasks;
  for (const TaskGroup& group : spec.tasks) {
    for (int32_t r = 0; r < group.replicas; ++r) {
      tasks.push_back({.name = fmt::format("{}-{}", group.name, r)});
    }
  }
  return tasks;
}

// Copies into `status` what the API shows of `task`, reusing the storage of its strings.
void AssignTaskStatus(const TaskRuntime& task, spec::TaskStatus& status) {
  status.name = task.name;
  status.node = task.placement.node;
  status.devices.assign(task.placement.gpus.begin(), task.placement.gpus.end());
  status.phase = task.phase;
  status.exit_code = task.exit_code;
}

// Whether status.tasks shows every task: a change that was not marked (JobRecord::TaskChanged)
// fails it. Checked in debug builds only.
[[maybe_unused]] bool EveryTaskSynced(const JobRecord& record) {
  const std::vector<spec::TaskStatus>& shown = record.status().tasks;
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    const TaskRuntime& task = record.tasks[i];
    const spec::TaskStatus& status = shown[i];
    if (status.name != task.name || status.node != task.placement.node ||
        !std::equal(status.devices.begin(), status.devices.end(), task.placement.gpus.begin(),
                    task.placement.gpus.end()) ||
        status.phase != task.phase || status.exit_code != task.exit_code) {
      return false;
    }
  }
  return true;
}

// Whether the store holds every task as it is (record.stored_tasks): a change that was not
// marked fails it. Checked in debug builds only.
[[maybe_unused]] bool EveryTaskWritten(const JobRecord& record) {
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    const std::optional<TaskRuntime>& stored = record.stored_tasks[i];
    if (IsInitial(record.tasks[i]) ? stored.has_value()
                                   : !stored.has_value() || !SameStored(*stored, record.tasks[i])) {
      return false;
    }
  }
  return true;
}

json EncodeTask(const TaskRuntime& task) {
  return json{
      {"name", task.name},
      {"cluster", task.cluster},
      {"node", task.placement.node},
      {"gpus", std::vector<int32_t>(task.placement.gpus.begin(), task.placement.gpus.end())},
      {"gpuMilli", task.placement.gpu_milli},
      {"gpuMemory", task.placement.gpu_memory},
      {"phase", TaskPhaseName(task.phase)},
      {"exitCode", task.exit_code.has_value() ? json(*task.exit_code) : json(nullptr)},
      {"launchId", task.launch_id},
      {"launched", task.launched},
      {"startTime", OptionalTime(task.start_time)},
      {"ended", task.ended},
      {"reason", BoundText(task.reason, kMaxStoredReasonBytes)},
      {"message", BoundText(task.message, kMaxStoredTaskMessageBytes)}};
}

TaskRuntime DecodeTask(const json& j) {
  TaskRuntime task;
  task.name = j.at("name").get<std::string>();
  task.cluster = j.at("cluster").get<std::string>();
  task.placement.node = j.at("node").get<std::string>();
  for (int32_t gpu : j.at("gpus").get<std::vector<int32_t>>()) task.placement.gpus.push_back(gpu);
  task.placement.gpu_milli = j.at("gpuMilli").get<int64_t>();
  task.placement.gpu_memory = j.at("gpuMemory").get<int64_t>();
  const std::optional<TaskPhase> phase = ParseTaskPhase(j.at("phase").get<std::string>());
  if (!phase.has_value()) throw std::invalid_argument("unknown task phase");
  task.phase = *phase;
  if (!j.at("exitCode").is_null()) task.exit_code = j.at("exitCode").get<int32_t>();
  task.launch_id = j.at("launchId").get<std::string>();
  task.launched = j.at("launched").get<bool>();
  task.start_time = ReadTime(j.at("startTime"));
  task.ended = j.at("ended").get<bool>();
  task.reason = j.at("reason").get<std::string>();
  task.message = j.at("message").get<std::string>();
  return task;
}

json EncodeStatus(const spec::JobStatus& status) {
  return json{{"phase", JobPhaseName(status.phase)},
              {"reason", BoundText(status.reason, kMaxStoredReasonBytes)},
              {"message", BoundText(status.message, kMaxStoredMessageBytes)},
              {"cluster", status.cluster},
              {"submitTime", OptionalTime(status.submit_time)},
              {"startTime", OptionalTime(status.start_time)},
              {"endTime", OptionalTime(status.end_time)},
              {"preemptions", status.preemptions}};
}

spec::JobStatus DecodeStatus(const json& j) {
  spec::JobStatus status;
  const std::optional<JobPhase> phase = ParseJobPhase(j.at("phase").get<std::string>());
  if (!phase.has_value()) throw std::invalid_argument("unknown job phase");
  status.phase = *phase;
  status.reason = j.at("reason").get<std::string>();
  status.message = j.at("message").get<std::string>();
  status.cluster = j.at("cluster").get<std::string>();
  status.submit_time = ReadTime(j.at("submitTime"));
  status.start_time = ReadTime(j.at("startTime"));
  status.end_time = ReadTime(j.at("endTime"));
  status.preemptions = j.value("preemptions", 0);  // absent in records written before
  return status;
}

control::Eviction ParsePreemption(std::string_view name) {
  const std::optional<control::Eviction> action = FindPreemption(name);
  if (!action.has_value()) throw std::invalid_argument("unknown preemption action");
  return *action;
}

absl::Status Corrupt(std::string_view key, std::string_view what) {
  return absl::DataLossError(fmt::format("{}: {}", key, what));
}

// The fields of a stored record through nlohmann-json, as every version wrote them; `document`
// is set to the spec's JSON text where the record holds it (an older version's).
absl::Status ReadFieldsFully(std::string_view key, std::string_view value, JobRecord& record,
                             spec::JobStatus& status, std::optional<std::string>& document) {
  try {
    const json j = json::parse(value);
    record.id = j.at("id").get<int64_t>();
    record.tenant = j.at("tenant").get<std::string>();
    if (j.contains("document")) document = j.at("document").get<std::string>();
    status = DecodeStatus(j.at("status"));
    if (j.contains("tasks")) {  // written before tasks had their own keys
      for (const json& task : j.at("tasks")) record.tasks.push_back(DecodeTask(task));
    }
    record.attempt = j.at("attempt").get<int32_t>();
    record.restarts = j.at("restarts").get<int32_t>();
    record.cancel_requested = j.at("cancelRequested").get<bool>();
    record.preemption = ParsePreemption(j.value("preemption", ""));
    record.last_event = j.at("lastEvent").get<int64_t>();
  } catch (const std::exception& e) {
    return Corrupt(key, e.what());
  }
  return absl::OkStatus();
}

// The spec of the JSON text `text` stored under `key`, metadata.id set to `id`.
absl::StatusOr<spec::JobDocument> ReadSpec(std::string_view key, std::string_view text,
                                           int64_t id) {
  absl::StatusOr<spec::JobDocument> document = spec::ParseRenderedJobJson(text);
  if (!document.ok()) {
    return Corrupt(key, fmt::format("document: {}", std::string(document.status().message())));
  }
  document->metadata.id = FormatJobId(id);
  document->status.reset();
  return document;
}

// The length of the valid UTF-8 sequence that starts `text`, or 0 when it is not one.
size_t Utf8Length(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;  // the bounds of the second byte (no overlong forms or surrogates)
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

// The part of a job document that makes its record largest, as a JOBSPEC path
// ("spec.tasks[0].command"): descends into the largest member while it holds most of its
// parent; a list of strings is named as a whole. "spec" when no part stands out.
std::string LargestField(const json& document) {
  std::string path;
  const json* node = &document;
  while (node->is_structured() && !node->empty()) {
    const json* largest = nullptr;
    std::string largest_name;
    size_t largest_size = 0;
    size_t index = 0;
    for (auto it = node->begin(); it != node->end(); ++it, ++index) {
      const size_t size = it->dump().size();
      if (largest != nullptr && size <= largest_size) continue;
      largest = &*it;
      largest_size = size;
      largest_name = node->is_object() ? fmt::format("{}{}", path.empty() ? "" : ".", it.key())
                                       : fmt::format("[{}]", index);
    }
    if (2 * largest_size < node->dump().size()) break;  // no member dominates: name the whole
    if (!largest->is_structured() && node->is_array()) break;  // a list of strings, as a whole
    path += largest_name;
    node = largest;
  }
  return path.empty() ? "spec" : path;
}

// The largest value a job could store for `record`: every text field at its bound, every
// counter at its widest.
size_t WorstRecordBytes(JobRecord record) {
  const std::string text(kMaxStoredMessageBytes, '"');  // '"' is escaped: 2 bytes each
  spec::JobStatus& status = record.status();
  status = spec::JobStatus{.phase = JobPhase::kSucceeded,
                           .reason = text,
                           .message = text,
                           .cluster = std::string(253, 'c'),
                           .submit_time = TimePoint::max(),
                           .start_time = TimePoint::max(),
                           .end_time = TimePoint::max(),
                           .preemptions = std::numeric_limits<int32_t>::min()};
  record.tasks.clear();
  record.attempt = record.restarts = std::numeric_limits<int32_t>::min();
  record.cancel_requested = true;
  record.preemption = control::Eviction::kPreemptRequeue;
  record.last_event = std::numeric_limits<int64_t>::min();
  return JobKey(record.id).size() + EncodeJobRecord(record).size();
}

size_t SpecBytes(const JobRecord& record) {
  return SpecKey(record.id).size() + EncodeJobSpec(record).size();
}

// The largest key and value one task of `group` could store (placed on a node with the longest
// name, ended with the longest reason and message).
size_t WorstTaskBytes(int64_t id, const TaskGroup& group) {
  const std::string name = fmt::format("{}-{}", group.name, group.replicas - 1);
  TaskRuntime task{
      .name = name,
      .cluster = std::string(253, 'c'),
      .phase = TaskPhase::kSucceeded,
      .exit_code = std::numeric_limits<int32_t>::min(),
      .launch_id = fmt::format("{}-{}-a{}", id, name, std::numeric_limits<int32_t>::max()),
      .launched = true,
      .start_time = TimePoint::max(),
      .ended = true,
      .reason = std::string(kMaxStoredReasonBytes, '"'),
      .message = std::string(kMaxStoredTaskMessageBytes, '"')};
  task.placement.node = std::string(253, 'n');
  task.placement.gpus.assign(static_cast<size_t>(std::max(0, group.request.gpu_count)),
                             std::numeric_limits<int32_t>::min());
  task.placement.gpu_milli = task.placement.gpu_memory = std::numeric_limits<int64_t>::min();
  return TaskKey(id, std::numeric_limits<int32_t>::max()).size() + EncodeTaskRecord(task).size();
}

// The largest key and value of one event.
size_t WorstEventBytes(int64_t id) {
  const JobEvent event{.job_id = FormatJobId(id),
                       .sequence = std::numeric_limits<int64_t>::min(),
                       .time = TimePoint::max(),
                       .type = std::string(32, 't'),
                       .phase = JobPhase::kSucceeded,
                       .reason = std::string(kMaxStoredReasonBytes, '"'),
                       .message = std::string(kMaxStoredMessageBytes, '"')};
  return EventKey(id, std::numeric_limits<int64_t>::max()).size() + EncodeJobEvent(event).size();
}

absl::Status TooLarge(std::string_view field, std::string_view what, size_t bytes,
                      std::string_view limit, size_t limit_value) {
  return spec::FieldError(
      field, fmt::format("the job cannot be stored: {} would take up to {} bytes, over the "
                         "store's limit of {} {}",
                         what, bytes, limit_value, limit));
}

}  // namespace

void JobRecord::SyncTaskStatus() {
  // In place, and only the tasks that changed: a 4,096-task job syncs at each task's end.
  std::vector<spec::TaskStatus>& out = status().tasks;
  if (out.size() != tasks.size()) {
    out.resize(tasks.size());
    unsynced_tasks.MarkAll(static_cast<int32_t>(tasks.size()));
  }
  for (int32_t i : unsynced_tasks.Take()) AssignTaskStatus(tasks[i], out[i]);
  assert(EveryTaskSynced(*this));
}

JobView JobRecord::View() const { return JobView{.document = document, .tenant = tenant}; }

JobRecord NewJobRecord(int64_t id, std::string tenant, spec::JobDocument document, TimePoint now) {
  JobRecord record;
  record.id = id;
  record.tenant = std::move(tenant);
  document.metadata.id = FormatJobId(id);
  if (document.spec.name.empty()) document.spec.name = fmt::format("job-{}", id);
  document.status = spec::JobStatus{.phase = JobPhase::kPending, .submit_time = now};
  record.document = std::move(document);
  record.tasks = InitialTasks(record.document.spec);
  record.stored_tasks.resize(record.tasks.size());
  record.SyncTaskStatus();
  return record;
}

std::string BoundText(std::string_view text, size_t max_bytes) {
  // Most reasons and messages: within the bound and printable ASCII, kept as they are.
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte >= 0x20 && byte < 0x80) || c == '\n' || c == '\t';
  });
  if (plain && text.size() <= max_bytes) return std::string(text);
  constexpr std::string_view kEllipsis = "…";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  const size_t cut = text.size() > max_bytes ? max_bytes - kEllipsis.size() : text.size();
  size_t i = 0;
  while (i < text.size()) {
    size_t length = Utf8Length(text.substr(i));
    const bool control = length == 1 && static_cast<unsigned char>(text[i]) < 0x20 &&
                         text[i] != '\n' && text[i] != '\t';
    if (out.size() + std::max<size_t>(length, 1) > cut) break;
    if (length == 0 || control) {
      out.push_back(' ');
      i += std::max<size_t>(length, 1);
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  if (i < text.size()) out.append(kEllipsis);
  return out;
}

absl::Status CheckStorable(const spec::JobDocument& document, std::string_view tenant,
                           const store::TxnLimits& limits) {
  // The widest id a job can have (ParseJobId: 18 digits).
  constexpr int64_t kWidestId = 999'999'999'999'999'999;
  const JobRecord record = NewJobRecord(kWidestId, std::string(tenant), document, TimePoint());
  const size_t spec_bytes = SpecBytes(record);
  const size_t record_bytes = WorstRecordBytes(record);
  const auto largest_field = [&] { return LargestField(json::parse(EncodeJobSpec(record))); };
  if (std::max(spec_bytes, record_bytes) > limits.max_value_bytes) {
    return TooLarge(largest_field(), spec_bytes >= record_bytes ? "its spec" : "its record",
                    std::max(spec_bytes, record_bytes), "bytes per value", limits.max_value_bytes);
  }
  // The submission's write: the spec, the record and its first event.
  const size_t submit_bytes = spec_bytes + record_bytes + WorstEventBytes(kWidestId);
  if (submit_bytes > limits.max_total_bytes) {
    return TooLarge(largest_field(), "submitting it", submit_bytes, "bytes per transaction",
                    limits.max_total_bytes);
  }
  // The write that places every task at once (a gang), with its events.
  size_t write_bytes = record_bytes + kMaxEventsPerWrite * WorstEventBytes(kWidestId);
  size_t largest_group = 0;
  size_t largest_group_bytes = 0;
  const std::vector<TaskGroup>& groups = record.document.spec.tasks;
  for (size_t i = 0; i < groups.size(); ++i) {
    const size_t task_bytes = WorstTaskBytes(kWidestId, groups[i]);
    if (task_bytes > limits.max_value_bytes) {
      return TooLarge(fmt::format("spec.tasks[{}].resources.gpu", i), "each task's record",
                      task_bytes, "bytes per value", limits.max_value_bytes);
    }
    const size_t group_bytes = task_bytes * static_cast<size_t>(groups[i].replicas);
    write_bytes += group_bytes;
    if (group_bytes > largest_group_bytes) {
      largest_group = i;
      largest_group_bytes = group_bytes;
    }
  }
  const std::string replicas = fmt::format("spec.tasks[{}].replicas", largest_group);
  const size_t entries = 1 + record.tasks.size() + kMaxEventsPerWrite;
  if (entries > limits.max_entries) {
    return spec::FieldError(
        replicas, fmt::format("the job cannot be stored: placing its {} tasks takes {} writes in "
                              "one transaction, over the store's limit of {}",
                              record.tasks.size(), entries, limits.max_entries));
  }
  if (write_bytes > limits.max_total_bytes) {
    return TooLarge(replicas, fmt::format("placing its {} tasks", record.tasks.size()), write_bytes,
                    "bytes per transaction", limits.max_total_bytes);
  }
  return absl::OkStatus();
}

std::string FormatJobId(int64_t id) { return std::to_string(id); }

std::optional<int64_t> ParseJobId(std::string_view text) {
  if (text.empty() || text.size() > 18 || text[0] == '0') return std::nullopt;
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

std::optional<int64_t> IdOfKey(std::string_view key, std::string_view prefix) {
  constexpr size_t kDigits = 20;
  if (!key.starts_with(prefix) || key.size() != prefix.size() + kDigits) return std::nullopt;
  const std::string_view digits = key.substr(prefix.size());
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id < 0) return std::nullopt;
  return id;
}

std::string SpecKey(int64_t id) { return fmt::format("{}{:020d}", kSpecPrefix, id); }
std::string JobKey(int64_t id) { return fmt::format("{}{:020d}", kJobPrefix, id); }
std::string TaskKey(int64_t id, int32_t index) {
  return fmt::format("{}{:020d}/{:06d}", kTaskPrefix, id, index);
}
std::string EventPrefix(int64_t id) { return fmt::format("{}{:020d}/", kEventPrefix, id); }
std::string EventKey(int64_t id, int64_t sequence) {
  return fmt::format("{}{:020d}", EventPrefix(id), sequence);
}
std::string RequestKey(std::string_view tenant, std::string_view request_id) {
  return fmt::format("{}{}/{}", kRequestPrefix, tenant, request_id);
}

std::string EncodeJobSpec(const JobRecord& record) {
  const spec::JobDocument spec_only{.metadata = {.request_id = record.document.metadata.request_id},
                                    .spec = record.document.spec};
  return spec::RenderJobJson(spec_only, -1);
}

absl::StatusOr<spec::JobDocument> DecodeJobSpec(std::string_view key, std::string_view value) {
  const std::optional<int64_t> id = IdOfKey(key, kSpecPrefix);
  if (!id.has_value()) return Corrupt(key, "not a spec key");
  return ReadSpec(key, value, *id);
}

std::string EncodeJobRecord(const JobRecord& record) {
  return json{{"id", record.id},
              {"tenant", record.tenant},
              {"status", EncodeStatus(record.status())},
              {"attempt", record.attempt},
              {"restarts", record.restarts},
              {"cancelRequested", record.cancel_requested},
              {"preemption", PreemptionName(record.preemption)},
              {"lastEvent", record.last_event}}
      .dump();
}

absl::StatusOr<JobRecord> DecodeJobRecord(std::string_view key, std::string_view value,
                                          std::optional<spec::JobDocument> spec) {
  JobRecord record;
  spec::JobStatus status;
  std::optional<std::string> document;
  if (!ReadFieldsQuickly(value, record, status, document)) {
    record = JobRecord();
    status = spec::JobStatus();
    document.reset();
    if (absl::Status s = ReadFieldsFully(key, value, record, status, document); !s.ok()) return s;
  }
  if (JobKey(record.id) != key) return Corrupt(key, "id does not match the key");
  if (document.has_value()) {  // an older version's record, which holds its spec
    absl::StatusOr<spec::JobDocument> inline_spec = ReadSpec(key, *document, record.id);
    if (!inline_spec.ok()) return inline_spec.status();
    spec = *std::move(inline_spec);
    record.spec_stored = false;
  } else if (!spec.has_value()) {
    return Corrupt(SpecKey(record.id), "the job's spec is not stored");
  } else if (spec->metadata.id != FormatJobId(record.id)) {
    return Corrupt(key, "the spec given is another job's");
  }
  record.document = *std::move(spec);
  record.document.status = std::move(status);
  const bool inline_tasks = !record.tasks.empty();
  if (!inline_tasks) record.tasks = InitialTasks(record.document.spec);
  if (static_cast<int32_t>(record.tasks.size()) != record.document.spec.TotalTasks()) {
    return Corrupt(key, "tasks do not match the spec's replicas");
  }
  record.stored_tasks.resize(record.tasks.size());
  if (inline_tasks) record.AllTasksChanged();  // the next write gives them their own keys
  record.SyncTaskStatus();
  return record;
}

absl::StatusOr<JobRecord> DecodeJobRecord(const store::KeyValue& kv,
                                          std::map<int64_t, spec::JobDocument>& specs) {
  std::optional<spec::JobDocument> spec;
  const std::optional<int64_t> id = IdOfKey(kv.key, kJobPrefix);
  if (auto it = id.has_value() ? specs.find(*id) : specs.end(); it != specs.end()) {
    spec = std::move(it->second);
  }
  return DecodeJobRecord(kv.key, kv.value, std::move(spec));
}

std::string EncodeTaskRecord(const TaskRuntime& task) { return EncodeTask(task).dump(); }

std::vector<store::Op> TaskWrites(JobRecord& record) {
  std::vector<store::Op> ops;
  for (const int32_t i : record.unwritten_tasks.Take()) {
    const TaskRuntime& task = record.tasks[i];
    std::optional<TaskRuntime>& stored = record.stored_tasks[i];
    const bool initial = IsInitial(task);
    if (initial ? !stored.has_value() : stored.has_value() && SameStored(*stored, task)) continue;
    const std::string key = TaskKey(record.id, static_cast<int32_t>(i));
    if (initial) {
      ops.push_back(store::Op::Delete(key));
      stored.reset();
    } else {
      ops.push_back(store::Op::Put(key, EncodeTaskRecord(task)));
      stored = task;
    }
  }
  assert(EveryTaskWritten(record));
  return ops;
}

namespace {

// The record and task index of a stored task's key (kTaskPrefix, 20 digits of job id, '/', 6
// digits of task index) in `jobs`; DataLoss naming the key otherwise.
absl::StatusOr<std::pair<JobRecord*, int32_t>> StoredTaskOf(std::map<int64_t, JobRecord>& jobs,
                                                            std::string_view key) {
  const std::string_view rest = key.substr(std::min(key.size(), kTaskPrefix.size()));
  int64_t id = 0;
  int32_t index = 0;
  if (!key.starts_with(kTaskPrefix) || rest.size() != 27 || rest[20] != '/' ||
      std::from_chars(rest.data(), rest.data() + 20, id).ptr != rest.data() + 20 ||
      std::from_chars(rest.data() + 21, rest.data() + 27, index).ptr != rest.data() + 27) {
    return Corrupt(key, "not a task key");
  }
  auto it = jobs.find(id);
  if (it == jobs.end()) return Corrupt(key, "a task of no stored job");
  JobRecord& record = it->second;
  if (index < 0 || static_cast<size_t>(index) >= record.tasks.size()) {
    return Corrupt(key, "a task beyond the job's replicas");
  }
  return std::pair{&record, index};
}

}  // namespace

absl::Status LoadStoredTask(std::map<int64_t, JobRecord>& jobs, std::string_view key,
                            std::string_view value) {
  absl::StatusOr<std::pair<JobRecord*, int32_t>> found = StoredTaskOf(jobs, key);
  if (!found.ok()) return found.status();
  auto [record, index] = *found;
  TaskRuntime task;
  if (!ReadTaskQuickly(value, task)) {
    try {
      task = DecodeTask(json::parse(value));
    } catch (const std::exception& e) {
      return Corrupt(key, e.what());
    }
  }
  if (task.name != record->tasks[index].name) return Corrupt(key, "the task's name does not match");
  AssignTaskStatus(task, record->status().tasks[index]);
  record->stored_tasks[index] = task;
  record->tasks[index] = std::move(task);
  return absl::OkStatus();
}

absl::Status ResetStoredTask(std::map<int64_t, JobRecord>& jobs, std::string_view key) {
  absl::StatusOr<std::pair<JobRecord*, int32_t>> found = StoredTaskOf(jobs, key);
  if (!found.ok()) return found.status();
  auto [record, index] = *found;
  TaskRuntime initial{.name = record->tasks[index].name};
  AssignTaskStatus(initial, record->status().tasks[index]);
  record->stored_tasks[index].reset();
  record->tasks[index] = std::move(initial);
  return absl::OkStatus();
}

std::string EncodeJobEvent(const JobEvent& event) {
  return json{{"jobId", event.job_id},
              {"sequence", event.sequence},
              {"time", Millis(event.time)},
              {"type", event.type},
              {"phase", JobPhaseName(event.phase)},
              {"reason", BoundText(event.reason, kMaxStoredReasonBytes)},
              {"message", BoundText(event.message, kMaxStoredMessageBytes)}}
      .dump();
}

absl::StatusOr<JobEvent> DecodeJobEvent(std::string_view key, std::string_view value) {
  JobEvent event;
  try {
    const json j = json::parse(value);
    event.job_id = j.at("jobId").get<std::string>();
    event.sequence = j.at("sequence").get<int64_t>();
    event.time = FromMillis(j.at("time").get<int64_t>());
    event.type = j.at("type").get<std::string>();
    const std::optional<JobPhase> phase = ParseJobPhase(j.at("phase").get<std::string>());
    if (!phase.has_value()) return Corrupt(key, "unknown phase");
    event.phase = *phase;
    event.reason = j.at("reason").get<std::string>();
    event.message = j.at("message").get<std::string>();
  } catch (const std::exception& e) {
    return Corrupt(key, e.what());
  }
  return event;
}

absl::StatusOr<std::vector<JobEvent>> ReadJobEvents(store::Store& store, int64_t id) {
  std::vector<JobEvent> events;
  store::RangeRequest request{.prefix = EventPrefix(id), .limit = 1000};
  while (true) {
    absl::StatusOr<store::RangeResult> page = store.Range(request);
    if (!page.ok()) return page.status();
    for (const store::KeyValue& kv : page->kvs) {
      absl::StatusOr<JobEvent> event = DecodeJobEvent(kv.key, kv.value);
      if (!event.ok()) return event.status();
      events.push_back(*std::move(event));
    }
    if (!page->more) return events;
    request.after = page->kvs.back().key;
  }
}

}  // namespace tessera::server

#include "server/job_record.h"

#include <charconv>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "spec/jobspec.h"

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

json EncodeTask(const TaskRuntime& task) {
  return json{{"name", task.name},
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
              {"reason", task.reason},
              {"message", task.message}};
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
              {"reason", status.reason},
              {"message", status.message},
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

constexpr std::string_view kPreemptionNames[] = {"", "requeue", "cancel"};

std::string_view PreemptionName(PreemptionAction action) {
  return kPreemptionNames[static_cast<int>(action)];
}

PreemptionAction ParsePreemption(std::string_view name) {
  for (int i = 0; i < 3; ++i) {
    if (kPreemptionNames[i] == name) return static_cast<PreemptionAction>(i);
  }
  throw std::invalid_argument("unknown preemption action");
}

absl::Status Corrupt(std::string_view key, std::string_view what) {
  return absl::DataLossError(fmt::format("{}: {}", key, what));
}

}  // namespace

void JobRecord::SyncTaskStatus() {
  spec::JobStatus& s = status();
  s.tasks.clear();
  for (const TaskRuntime& task : tasks) {
    s.tasks.push_back({.name = task.name,
                       .node = task.placement.node,
                       .devices = {task.placement.gpus.begin(), task.placement.gpus.end()},
                       .phase = task.phase,
                       .exit_code = task.exit_code});
  }
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
  for (const TaskGroup& group : record.document.spec.tasks) {
    for (int32_t r = 0; r < group.replicas; ++r) {
      record.tasks.push_back({.name = fmt::format("{}-{}", group.name, r)});
    }
  }
  record.SyncTaskStatus();
  return record;
}

std::string FormatJobId(int64_t id) { return std::to_string(id); }

std::optional<int64_t> ParseJobId(std::string_view text) {
  if (text.empty() || text.size() > 18 || text[0] == '0') return std::nullopt;
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

std::string JobKey(int64_t id) { return fmt::format("{}{:020d}", kJobPrefix, id); }
std::string EventPrefix(int64_t id) { return fmt::format("{}{:020d}/", kEventPrefix, id); }
std::string EventKey(int64_t id, int64_t sequence) {
  return fmt::format("{}{:020d}", EventPrefix(id), sequence);
}
std::string RequestKey(std::string_view tenant, std::string_view request_id) {
  return fmt::format("{}{}/{}", kRequestPrefix, tenant, request_id);
}

std::string EncodeJobRecord(const JobRecord& record) {
  spec::JobDocument spec_only{.metadata = {.request_id = record.document.metadata.request_id},
                              .spec = record.document.spec};
  json tasks = json::array();
  for (const TaskRuntime& task : record.tasks) tasks.push_back(EncodeTask(task));
  return json{{"id", record.id},
              {"tenant", record.tenant},
              {"document", spec::RenderJobJson(spec_only, -1)},
              {"status", EncodeStatus(record.status())},
              {"tasks", std::move(tasks)},
              {"attempt", record.attempt},
              {"restarts", record.restarts},
              {"cancelRequested", record.cancel_requested},
              {"preemption", PreemptionName(record.preemption)},
              {"lastEvent", record.last_event}}
      .dump();
}

absl::StatusOr<JobRecord> DecodeJobRecord(std::string_view key, std::string_view value) {
  JobRecord record;
  try {
    const json j = json::parse(value);
    record.id = j.at("id").get<int64_t>();
    record.tenant = j.at("tenant").get<std::string>();
    absl::StatusOr<spec::JobDocument> document = spec::ParseJobDocument(
        j.at("document").get<std::string>(), {.format = spec::DocumentFormat::kJson});
    if (!document.ok()) {
      return Corrupt(key, fmt::format("document: {}", std::string(document.status().message())));
    }
    record.document = *std::move(document);
    record.document.metadata.id = FormatJobId(record.id);
    record.document.status = DecodeStatus(j.at("status"));
    for (const json& task : j.at("tasks")) record.tasks.push_back(DecodeTask(task));
    record.attempt = j.at("attempt").get<int32_t>();
    record.restarts = j.at("restarts").get<int32_t>();
    record.cancel_requested = j.at("cancelRequested").get<bool>();
    record.preemption = ParsePreemption(j.value("preemption", ""));
    record.last_event = j.at("lastEvent").get<int64_t>();
  } catch (const std::exception& e) {
    return Corrupt(key, e.what());
  }
  if (JobKey(record.id) != key) return Corrupt(key, "id does not match the key");
  if (static_cast<int32_t>(record.tasks.size()) != record.document.spec.TotalTasks()) {
    return Corrupt(key, "tasks do not match the spec's replicas");
  }
  record.SyncTaskStatus();
  return record;
}

std::string EncodeJobEvent(const JobEvent& event) {
  return json{{"jobId", event.job_id},
              {"sequence", event.sequence},
              {"time", Millis(event.time)},
              {"type", event.type},
              {"phase", JobPhaseName(event.phase)},
              {"reason", event.reason},
              {"message", event.message}}
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

}  // namespace tessera::server

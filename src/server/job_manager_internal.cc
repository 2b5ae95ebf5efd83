// The helpers the job manager's source files share (job_manager_internal.h).
#include "server/job_manager_internal.h"

#include <cstdio>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "spec/request_error.h"

namespace tessera::server {

std::string IndexKey(std::string_view tenant, std::string_view name) {
  return fmt::format("{}{}{}", tenant, '\0', name);
}

namespace {

// Clusters are matched through their labels, which every node of a cluster carries, so a
// clusterSelector is one more node selector.
void SelectCluster(const JobSpec& spec, TaskRequest& request) {
  for (const auto& [key, value] : spec.cluster_selector) request.node_selector[key] = value;
}

}  // namespace

JobSpec SchedulingSpec(const JobSpec& spec) {
  JobSpec out = spec;
  for (TaskGroup& group : out.tasks) SelectCluster(spec, group.request);
  return out;
}

std::vector<TaskRequest> TaskRequests(const JobSpec& spec) {
  std::vector<TaskRequest> out;
  for (const TaskGroup& group : SchedulingSpec(spec).tasks) {
    for (int32_t r = 0; r < group.replicas; ++r) out.push_back(group.request);
  }
  return out;
}

const TaskGroup* GroupOf(const JobSpec& spec, int32_t index) {
  for (const TaskGroup& group : spec.tasks) {
    if (index < group.replicas) return &group;
    index -= group.replicas;
  }
  return nullptr;
}

TaskRequest TaskRequestOf(const JobSpec& spec, int32_t index) {
  const TaskGroup* group = GroupOf(spec, index);
  if (group == nullptr) return {};
  TaskRequest request = group->request;
  SelectCluster(spec, request);
  return request;
}

PeerNodes PeersOf(const JobRecord& record) {
  if (record.tasks.size() <= 1) return {};
  std::vector<std::string> nodes;
  nodes.reserve(record.tasks.size());
  for (const TaskRuntime& task : record.tasks) nodes.push_back(task.placement.node);
  return nodes;
}

std::string LaunchId(int64_t job, std::string_view task, int32_t attempt) {
  return fmt::format("{}-{}-a{}", job, task, attempt);
}

bool IsActive(const TaskRuntime& task) { return !task.launch_id.empty() && !task.ended; }

// The Scheduler names the field at fault first ("queues[2].weight: must be >= 1"): the API
// reports it as the error's field.
absl::Status WithLeadingField(absl::Status status) {
  const std::string message(status.message());
  const size_t colon = message.find(": ");
  if (status.code() != absl::StatusCode::kInvalidArgument || colon == std::string::npos ||
      message.substr(0, colon).find(' ') != std::string::npos) {
    return status;
  }
  return spec::WithField(status, message.substr(0, colon));
}

// A store error as the API reports it. Back-pressure and unavailability keep their codes (the
// client may retry); anything else is Internal: the store's own message, which names fields of
// its transaction, is for the operator's log, not for the client.
absl::Status StoreFailure(std::string_view what, const absl::Status& status) {
  if (absl::IsResourceExhausted(status) || absl::IsUnavailable(status)) {
    return absl::Status(status.code(), fmt::format("{}: {}", what, std::string(status.message())));
  }
  std::fprintf(stderr, "tessera: %s: the store refused the write: %s\n", std::string(what).c_str(),
               status.ToString().c_str());
  return absl::InternalError(
      fmt::format("{}: the state store refused the write ({}); the server's log has the details",
                  what, absl::StatusCodeToString(status.code())));
}

// The job is being torn down: a cancel or a preemption; its tasks must not start.
bool Stopping(const JobRecord& record) {
  return record.cancel_requested || record.preemption != control::Eviction::kNone;
}

std::string DescribeEnd(const TaskRuntime& task) {
  if (!task.message.empty()) return fmt::format("{}: {}", task.name, task.message);
  return fmt::format("{}: {}", task.name, TaskPhaseName(task.phase));
}

std::string DescribePlacement(const TaskRuntime& task) {
  if (task.placement.gpus.empty()) return fmt::format("{} → {}", task.name, task.placement.node);
  return fmt::format("{} → {} gpus [{}]", task.name, task.placement.node,
                     fmt::join(task.placement.gpus, ","));
}

}  // namespace tessera::server

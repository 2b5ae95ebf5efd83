#include "api/rest/json_views.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/time/time.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "spec/job_json.h"
#include "spec/jobspec.h"
#include "spec/queue_document.h"

namespace tessera::api {
namespace {

using Json = nlohmann::ordered_json;


// Milli-GPU as GPUs: 8000 → 8, 500 → 0.5.
Json Gpus(int64_t milli) {
  if (milli % 1000 == 0) return milli / 1000;
  return static_cast<double>(milli) / 1000;
}

int HttpStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:  // e.g. an agent that did not answer in time
      return 504;
    default:
      return 500;
  }
}

}  // namespace

Json ResourcesToJson(const Resources& resources) {
  Json out = {{"cpu", FormatCpuMillis(resources.cpu)},
              {"memory", FormatBytes(resources.memory)},
              {"gpu", Gpus(resources.gpu)}};
  if (resources.gpu_memory != 0) out["gpuMemory"] = FormatBytes(resources.gpu_memory);
  for (const auto& [name, value] : resources.extended) out[name] = value;
  return out;
}

Json JobViewToJson(const server::JobView& job) {
  Json out = spec::JobDocumentToJson(job.document);
  out["metadata"]["tenant"] = job.tenant;
  return out;
}

Json JobEventToJson(const server::JobEvent& event) {
  return {{"jobId", event.job_id},
          {"sequence", event.sequence},
          {"time", spec::FormatRfc3339(event.time)},
          {"type", event.type},
          {"phase", JobPhaseName(event.phase)},
          {"reason", event.reason},
          {"message", event.message}};
}

Json JobExplanationToJson(const server::JobExplanation& explanation) {
  Json rejections = Json::array();
  for (const server::PendingRejection& rejection : explanation.rejections) {
    rejections.push_back({{"reason", rejection.reason}, {"nodes", rejection.nodes}});
  }
  Json start = nullptr;
  if (explanation.estimated_start_time.has_value()) {
    start = spec::FormatRfc3339(*explanation.estimated_start_time);
  }
  Json estimate = nullptr;
  if (explanation.estimate.has_value()) {
    const server::StartEstimateView& e = *explanation.estimate;
    estimate = {
        {"startTime", e.start.has_value() ? Json(spec::FormatRfc3339(*e.start)) : Json(nullptr)},
        {"blocker", e.blocker},
        {"message", e.message},
        {"position", e.position}};
  }
  return {{"phase", JobPhaseName(explanation.phase)},
          {"reason", explanation.reason},
          {"message", explanation.message},
          {"totalNodes", explanation.total_nodes},
          {"rejections", std::move(rejections)},
          {"estimatedStartTime", std::move(start)},
          {"estimate", std::move(estimate)}};
}

Json NodeViewToJson(const server::NodeView& node) {
  Json taints = Json::array();
  for (const Taint& taint : node.taints) {
    taints.push_back(
        {{"key", taint.key}, {"value", taint.value}, {"effect", TaintEffectName(taint.effect)}});
  }
  Json gpus = Json::array();
  for (const server::GpuView& gpu : node.gpus) {
    gpus.push_back({{"index", gpu.index},
                    {"model", gpu.model},
                    {"memory", FormatBytes(gpu.memory)},
                    {"milliUsed", gpu.milli_used},
                    {"healthy", gpu.healthy}});
  }
  return {{"name", node.name},
          {"cluster", node.cluster},
          {"labels", spec::StringMapToJson(node.labels)},
          {"taints", std::move(taints)},
          {"ready", node.ready},
          {"unschedulable", node.unschedulable},
          {"state", server::NodeAdminStateName(node.state)},
          {"stateReason", node.state_reason},
          {"stateBy", node.state_by},
          {"stateSince", node.state_since ? Json(spec::FormatRfc3339(*node.state_since))
                                          : Json(nullptr)},
          {"capacity", ResourcesToJson(node.capacity)},
          {"allocated", ResourcesToJson(node.allocated)},
          {"gpus", std::move(gpus)},
          {"tasks", node.tasks}};
}

Json ClusterViewToJson(const server::ClusterView& cluster) {
  return {{"name", cluster.name},
          {"backend", cluster.backend},
          {"reachable", cluster.reachable},
          {"labels", spec::StringMapToJson(cluster.labels)},
          {"nodes", cluster.nodes},
          {"readyNodes", cluster.ready_nodes},
          {"capacity", ResourcesToJson(cluster.capacity)},
          {"allocated", ResourcesToJson(cluster.allocated)}};
}

Json QueueViewToJson(const server::QueueView& queue) {
  Json out = spec::QueueSpecToJson(queue.spec);
  out["usage"] = spec::ResourceListToJson(queue.usage);
  out["borrowing"] = queue.borrowing;
  out["share"] = queue.share;
  out["pendingJobs"] = queue.pending_jobs;
  out["admittedJobs"] = queue.admitted_jobs;
  out["runningJobs"] = queue.running_jobs;
  return out;
}

Json ErrorBody(absl::StatusCode code, std::string_view message) {
  return {{"error", {{"code", absl::StatusCodeToString(code)}, {"message", message}}}};
}

HttpError StatusToHttpError(const absl::Status& status) {
  HttpError error{.http_status = HttpStatus(status.code()),
                  .body = ErrorBody(status.code(), std::string(status.message()))};
  if (std::optional<std::string> field = spec::ErrorField(status)) {
    error.body["error"]["field"] = *std::move(field);
  }
  return error;
}

}  // namespace tessera::api

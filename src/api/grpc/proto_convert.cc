#include "api/grpc/proto_convert.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/grpc/grpc_status.h"
#include "nlohmann/json.hpp"
#include "spec/job_json.h"

namespace tessera::api {
namespace {

namespace v1 = ::tessera::v1;

constexpr int32_t kDefaultListLimit = 100;
constexpr int32_t kMaxListLimit = 1000;
constexpr int64_t kMaxLogLimit = int64_t{1} << 20;

// Sets the Timestamp `mutable_time()` returns only for a known time: asking for a message's
// mutable sub-message marks it present.
template <typename MutableTime>
void SetIfKnown(const std::optional<TimePoint>& time, MutableTime mutable_time) {
  if (time.has_value()) ToProto(*time, mutable_time());
}

v1::TaintEffect ToProto(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNoSchedule:
      return v1::TAINT_EFFECT_NO_SCHEDULE;
    case TaintEffect::kPreferNoSchedule:
      return v1::TAINT_EFFECT_PREFER_NO_SCHEDULE;
    case TaintEffect::kNoExecute:
      return v1::TAINT_EFFECT_NO_EXECUTE;
  }
  return v1::TAINT_EFFECT_UNSPECIFIED;
}

template <typename Map>
void CopyLabels(const std::map<std::string, std::string, std::less<>>& labels, Map* out) {
  for (const auto& [key, value] : labels) (*out)[key] = value;
}

}  // namespace

v1::JobPhase ToProto(JobPhase phase) {
  switch (phase) {
    case JobPhase::kPending:
      return v1::JOB_PHASE_PENDING;
    case JobPhase::kAdmitted:
      return v1::JOB_PHASE_ADMITTED;
    case JobPhase::kRunning:
      return v1::JOB_PHASE_RUNNING;
    case JobPhase::kSucceeded:
      return v1::JOB_PHASE_SUCCEEDED;
    case JobPhase::kFailed:
      return v1::JOB_PHASE_FAILED;
    case JobPhase::kCancelled:
      return v1::JOB_PHASE_CANCELLED;
  }
  return v1::JOB_PHASE_UNSPECIFIED;
}

void ToProto(TimePoint time, google::protobuf::Timestamp* out) {
  const int64_t millis = time.time_since_epoch().count();
  // Floor division: a Timestamp's nanos are never negative.
  int64_t seconds = millis / 1000;
  int64_t rest = millis % 1000;
  if (rest < 0) {
    seconds -= 1;
    rest += 1000;
  }
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(rest * 1'000'000));
}

v1::Resources ToProto(const Resources& resources) {
  v1::Resources out;
  out.set_cpu_millicores(resources.cpu);
  out.set_memory_bytes(resources.memory);
  out.set_gpu_milli(resources.gpu);
  out.set_gpu_memory_bytes(resources.gpu_memory);
  for (const auto& [name, count] : resources.extended) (*out.mutable_extended())[name] = count;
  return out;
}

std::string JobDocumentJson(const server::JobView& job) {
  nlohmann::ordered_json document = spec::JobDocumentToJson(job.document);
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  bool placed = false;
  for (auto& [key, value] : document["metadata"].items()) {
    metadata[key] = std::move(value);
    if (key == "id") {
      metadata["tenant"] = job.tenant;
      placed = true;
    }
  }
  if (!placed) metadata["tenant"] = job.tenant;
  document["metadata"] = std::move(metadata);
  // Strings come from validated documents; replacing stray invalid UTF-8 beats throwing.
  return document.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

v1::Job ToProto(const server::JobView& job) {
  const spec::JobDocument& document = job.document;
  v1::Job out;
  out.set_id(document.metadata.id);
  out.set_tenant(job.tenant);
  out.set_name(document.spec.name);
  out.set_queue(document.spec.queue);
  if (document.status.has_value()) {
    const spec::JobStatus& status = *document.status;
    out.set_phase(ToProto(status.phase));
    out.set_reason(status.reason);
    out.set_message(status.message);
    out.set_cluster(status.cluster);
    SetIfKnown(status.submit_time, [&] { return out.mutable_submit_time(); });
    SetIfKnown(status.start_time, [&] { return out.mutable_start_time(); });
    SetIfKnown(status.end_time, [&] { return out.mutable_end_time(); });
    SetIfKnown(status.estimated_start_time, [&] { return out.mutable_estimated_start_time(); });
    out.set_preemptions(status.preemptions);
  }
  out.set_document_json(JobDocumentJson(job));
  return out;
}

v1::JobEvent ToProto(const server::JobEvent& event) {
  v1::JobEvent out;
  out.set_job_id(event.job_id);
  out.set_sequence(event.sequence);
  ToProto(event.time, out.mutable_time());
  out.set_type(event.type);
  out.set_phase(ToProto(event.phase));
  out.set_reason(event.reason);
  out.set_message(event.message);
  return out;
}

v1::Explanation ToProto(const server::JobExplanation& explanation) {
  v1::Explanation out;
  out.set_phase(ToProto(explanation.phase));
  out.set_reason(explanation.reason);
  out.set_message(explanation.message);
  out.set_total_nodes(explanation.total_nodes);
  for (const server::PendingRejection& rejection : explanation.rejections) {
    v1::Explanation::Rejection* added = out.add_rejections();
    added->set_reason(rejection.reason);
    added->set_nodes(rejection.nodes);
  }
  SetIfKnown(explanation.estimated_start_time, [&] { return out.mutable_estimated_start_time(); });
  if (explanation.estimate.has_value()) {
    const server::StartEstimateView& estimate = *explanation.estimate;
    v1::StartEstimate* e = out.mutable_estimate();
    SetIfKnown(estimate.start, [&] { return e->mutable_start_time(); });
    e->set_blocker(estimate.blocker);
    e->set_message(estimate.message);
    e->set_position(estimate.position);
  }
  return out;
}

v1::LogChunk ToProto(const LogChunk& chunk) {
  v1::LogChunk out;
  out.set_data(chunk.data);
  out.set_next_offset(chunk.next_offset);
  out.set_end(chunk.end);
  return out;
}

v1::Node ToProto(const server::NodeView& node) {
  v1::Node out;
  out.set_name(node.name);
  out.set_cluster(node.cluster);
  CopyLabels(node.labels, out.mutable_labels());
  for (const Taint& taint : node.taints) {
    v1::Taint* added = out.add_taints();
    added->set_key(taint.key);
    added->set_value(taint.value);
    added->set_effect(ToProto(taint.effect));
  }
  out.set_ready(node.ready);
  out.set_unschedulable(node.unschedulable);
  *out.mutable_capacity() = ToProto(node.capacity);
  *out.mutable_allocated() = ToProto(node.allocated);
  for (const server::GpuView& gpu : node.gpus) {
    v1::Gpu* added = out.add_gpus();
    added->set_index(gpu.index);
    added->set_model(gpu.model);
    added->set_memory_bytes(gpu.memory);
    added->set_milli_used(gpu.milli_used);
    added->set_healthy(gpu.healthy);
  }
  out.set_tasks(node.tasks);
  out.set_state(static_cast<v1::NodeState>(static_cast<int>(node.state) + 1));
  out.set_state_reason(node.state_reason);
  out.set_state_by(node.state_by);
  if (node.state_since) ToProto(*node.state_since, out.mutable_state_since());
  return out;
}

v1::Cluster ToProto(const server::ClusterView& cluster) {
  v1::Cluster out;
  out.set_name(cluster.name);
  out.set_backend(cluster.backend);
  CopyLabels(cluster.labels, out.mutable_labels());
  out.set_nodes(cluster.nodes);
  out.set_ready_nodes(cluster.ready_nodes);
  *out.mutable_capacity() = ToProto(cluster.capacity);
  *out.mutable_allocated() = ToProto(cluster.allocated);
  return out;
}

v1::Queue ToProto(const server::QueueView& queue) {
  const QueueSpec& spec = queue.spec;
  v1::Queue out;
  out.set_name(spec.name);
  out.set_parent(spec.parent);
  out.mutable_guaranteed()->insert(spec.guaranteed.begin(), spec.guaranteed.end());
  out.mutable_borrowing_limit()->insert(spec.borrowing_limit.begin(), spec.borrowing_limit.end());
  out.mutable_lending_limit()->insert(spec.lending_limit.begin(), spec.lending_limit.end());
  out.set_weight(spec.weight);
  out.set_priority(spec.priority);
  out.set_ordering(spec.ordering == QueueOrdering::kStrictFifo
                       ? v1::QUEUE_ORDERING_STRICT_FIFO
                       : v1::QUEUE_ORDERING_BEST_EFFORT_FIFO);
  out.mutable_usage()->insert(queue.usage.begin(), queue.usage.end());
  out.set_borrowing(queue.borrowing);
  out.set_share(queue.share);
  out.set_pending_jobs(queue.pending_jobs);
  out.set_admitted_jobs(queue.admitted_jobs);
  out.set_running_jobs(queue.running_jobs);
  return out;
}

absl::StatusOr<std::optional<JobPhase>> FromProto(v1::JobPhase phase, std::string_view field) {
  switch (phase) {
    case v1::JOB_PHASE_UNSPECIFIED:
      return std::nullopt;
    case v1::JOB_PHASE_PENDING:
      return JobPhase::kPending;
    case v1::JOB_PHASE_ADMITTED:
      return JobPhase::kAdmitted;
    case v1::JOB_PHASE_RUNNING:
      return JobPhase::kRunning;
    case v1::JOB_PHASE_SUCCEEDED:
      return JobPhase::kSucceeded;
    case v1::JOB_PHASE_FAILED:
      return JobPhase::kFailed;
    case v1::JOB_PHASE_CANCELLED:
      return JobPhase::kCancelled;
    default:
      return spec::FieldError(field, absl::StrCat("unknown job phase ", static_cast<int>(phase)));
  }
}

absl::StatusOr<spec::DocumentFormat> FromProto(v1::DocumentFormat format) {
  switch (format) {
    case v1::DOCUMENT_FORMAT_AUTO:
      return spec::DocumentFormat::kAuto;
    case v1::DOCUMENT_FORMAT_YAML:
      return spec::DocumentFormat::kYaml;
    case v1::DOCUMENT_FORMAT_JSON:
      return spec::DocumentFormat::kJson;
    default:
      return spec::FieldError("format",
                              absl::StrCat("unknown document format ", static_cast<int>(format)));
  }
}

absl::StatusOr<server::JobStateFilter> FromProto(v1::JobStateFilter state) {
  switch (state) {
    case v1::JOB_STATE_FILTER_UNSPECIFIED:
      return server::JobStateFilter::kAll;
    case v1::JOB_STATE_FILTER_ACTIVE:
      return server::JobStateFilter::kActive;
    case v1::JOB_STATE_FILTER_TERMINAL:
      return server::JobStateFilter::kTerminal;
    default:
      return spec::FieldError("state",
                        absl::StrCat("unknown job state filter ", static_cast<int>(state)));
  }
}

absl::StatusOr<server::ListOrder> FromProto(v1::ListOrder order) {
  switch (order) {
    case v1::LIST_ORDER_UNSPECIFIED:
    case v1::LIST_ORDER_OLDEST_FIRST:
      return server::ListOrder::kOldestFirst;
    case v1::LIST_ORDER_NEWEST_FIRST:
      return server::ListOrder::kNewestFirst;
    default:
      return spec::FieldError("order", absl::StrCat("unknown list order ", static_cast<int>(order)));
  }
}

absl::StatusOr<server::ListJobsRequest> FromProto(const v1::ListJobsRequest& request) {
  absl::StatusOr<std::optional<JobPhase>> phase = FromProto(request.phase(), "phase");
  if (!phase.ok()) return phase.status();
  absl::StatusOr<server::JobStateFilter> state = FromProto(request.state());
  if (!state.ok()) return state.status();
  absl::StatusOr<server::ListOrder> order = FromProto(request.order());
  if (!order.ok()) return order.status();
  if (request.limit() < 0 || request.limit() > kMaxListLimit) {
    return spec::FieldError("limit", absl::StrCat("must be between 1 and ", kMaxListLimit, " (0: ",
                                                  kDefaultListLimit, "), not ", request.limit()));
  }
  return server::ListJobsRequest{
      .phase = *phase,
      .state = *state,
      .queue = request.queue(),
      .name = request.name(),
      .tenant = request.tenant(),
      .order = *order,
      .limit = request.limit() == 0 ? kDefaultListLimit : request.limit(),
      .page_token = request.page_token(),
  };
}

absl::StatusOr<server::LogRequest> FromProto(const v1::GetJobLogsRequest& request) {
  LogStream stream;
  switch (request.stream()) {
    case v1::LOG_STREAM_STDOUT:
      stream = LogStream::kStdout;
      break;
    case v1::LOG_STREAM_STDERR:
      stream = LogStream::kStderr;
      break;
    default:
      return spec::FieldError(
          "stream", absl::StrCat("unknown log stream ", static_cast<int>(request.stream())));
  }
  if (request.offset() < 0) return spec::FieldError("offset", "must be >= 0");
  if (request.limit() < 0 || request.limit() > kMaxLogLimit) {
    return spec::FieldError(
        "limit", absl::StrCat("must be between 1 and ", kMaxLogLimit, " bytes (0: ", kMaxLogLimit,
                              "), not ", request.limit()));
  }
  return server::LogRequest{
      .task = request.task(),
      .stream = stream,
      .offset = request.offset(),
      .limit = request.limit() == 0 ? kMaxLogLimit : request.limit(),
  };
}

server::WatchRequest FromProto(const v1::WatchJobEventsRequest& request) {
  return server::WatchRequest{
      .job_id = request.job_id(),
      .after_sequence = request.has_after_sequence() ? request.after_sequence() : -1,
  };
}

}  // namespace tessera::api

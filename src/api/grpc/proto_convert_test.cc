#include "api/grpc/proto_convert.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/grpc/grpc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::api {
namespace {

namespace v1 = ::tessera::v1;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(ProtoConvertTest, JobPhasesRoundTrip) {
  const struct {
    JobPhase phase;
    v1::JobPhase proto;
  } kCases[] = {
      {JobPhase::kPending, v1::JOB_PHASE_PENDING}, {JobPhase::kAdmitted, v1::JOB_PHASE_ADMITTED},
      {JobPhase::kRunning, v1::JOB_PHASE_RUNNING}, {JobPhase::kSucceeded, v1::JOB_PHASE_SUCCEEDED},
      {JobPhase::kFailed, v1::JOB_PHASE_FAILED},   {JobPhase::kCancelled, v1::JOB_PHASE_CANCELLED},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(JobPhaseName(c.phase));
    EXPECT_EQ(ToProto(c.phase), c.proto);
    absl::StatusOr<std::optional<JobPhase>> back = FromProto(c.proto, "phase");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, c.phase);
  }
}

TEST(ProtoConvertTest, UnspecifiedPhaseIsNoFilterAndUnknownIsAFieldError) {
  absl::StatusOr<std::optional<JobPhase>> any = FromProto(v1::JOB_PHASE_UNSPECIFIED, "phase");
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->has_value());

  absl::StatusOr<std::optional<JobPhase>> bad = FromProto(static_cast<v1::JobPhase>(42), "phase");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec::ErrorField(bad.status()), "phase");
}

TEST(ProtoConvertTest, TimestampsFromMilliseconds) {
  const struct {
    int64_t millis;
    int64_t seconds;
    int32_t nanos;
  } kCases[] = {
      {0, 0, 0},
      {1'500, 1, 500'000'000},
      {1'700'000'000'123, 1'700'000'000, 123'000'000},
      {-1, -1, 999'000'000},  // nanos are never negative
      {-2'000, -2, 0},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.millis);
    google::protobuf::Timestamp out;
    ToProto(TimePoint(Duration(c.millis)), &out);
    EXPECT_EQ(out.seconds(), c.seconds);
    EXPECT_EQ(out.nanos(), c.nanos);
  }
}

TEST(ProtoConvertTest, ResourcesKeepBaseUnits) {
  Resources resources{.cpu = 2500,
                      .memory = int64_t{64} << 30,
                      .gpu = 1500,
                      .gpu_memory = int64_t{80} << 30,
                      .extended = {{"rdma/hca", 2}}};
  const v1::Resources out = ToProto(resources);
  EXPECT_EQ(out.cpu_millicores(), 2500);
  EXPECT_EQ(out.memory_bytes(), int64_t{64} << 30);
  EXPECT_EQ(out.gpu_milli(), 1500);
  EXPECT_EQ(out.gpu_memory_bytes(), int64_t{80} << 30);
  EXPECT_THAT(out.extended(), UnorderedElementsAre(Pair("rdma/hca", 2)));
}

server::JobView RunningJob() {
  spec::JobDocument document;
  document.metadata.id = "42";
  document.spec.name = "train";
  document.spec.queue = "gpu";
  TaskGroup group;
  group.name = "main";
  group.replicas = 1;
  group.command = {"sleep", "5"};
  document.spec.tasks = {group};
  document.status = spec::JobStatus{.phase = JobPhase::kRunning,
                                    .reason = "",
                                    .message = "started",
                                    .cluster = "local",
                                    .submit_time = TimePoint(Duration(1'000)),
                                    .start_time = TimePoint(Duration(2'500))};
  return server::JobView{.document = document, .tenant = "team-a"};
}

TEST(ProtoConvertTest, JobCarriesItsFieldsAndTheRestDocument) {
  const v1::Job job = ToProto(RunningJob());
  EXPECT_EQ(job.id(), "42");
  EXPECT_EQ(job.tenant(), "team-a");
  EXPECT_EQ(job.name(), "train");
  EXPECT_EQ(job.queue(), "gpu");
  EXPECT_EQ(job.phase(), v1::JOB_PHASE_RUNNING);
  EXPECT_EQ(job.message(), "started");
  EXPECT_EQ(job.cluster(), "local");
  EXPECT_EQ(job.submit_time().seconds(), 1);
  EXPECT_EQ(job.start_time().seconds(), 2);
  EXPECT_EQ(job.start_time().nanos(), 500'000'000);
  EXPECT_FALSE(job.has_end_time());
  EXPECT_FALSE(job.has_estimated_start_time());

  EXPECT_EQ(job.document_json().find('\n'), std::string::npos);
  const nlohmann::ordered_json document = nlohmann::ordered_json::parse(job.document_json());
  std::vector<std::string> metadata_keys;
  for (const auto& [key, value] : document["metadata"].items()) metadata_keys.push_back(key);
  // metadata.tenant follows metadata.id.
  EXPECT_THAT(metadata_keys, UnorderedElementsAre("name", "id", "tenant"));
  const auto id = std::find(metadata_keys.begin(), metadata_keys.end(), "id");
  ASSERT_NE(id + 1, metadata_keys.end());
  EXPECT_EQ(*(id + 1), "tenant");
  EXPECT_EQ(document["metadata"]["tenant"], "team-a");
  EXPECT_EQ(document["status"]["phase"], "Running");
  EXPECT_EQ(document["spec"]["queue"], "gpu");
}

TEST(ProtoConvertTest, NodeWithTaintsAndGpus) {
  server::NodeView node{.name = "gpu-1", .cluster = "east", .labels = {{"rack", "r1"}}};
  node.taints = {Taint{.key = "dedicated", .value = "infer", .effect = TaintEffect::kNoExecute}};
  node.capacity = Resources{.cpu = 64'000, .memory = int64_t{512} << 30, .gpu = 8000};
  node.allocated = Resources{.gpu = 500};
  node.gpus = {server::GpuView{.index = 0,
                               .model = "H100",
                               .memory = int64_t{80} << 30,
                               .milli_used = 500,
                               .healthy = false}};
  node.tasks = 1;
  const v1::Node out = ToProto(node);
  EXPECT_EQ(out.name(), "gpu-1");
  EXPECT_EQ(out.cluster(), "east");
  EXPECT_THAT(out.labels(), UnorderedElementsAre(Pair("rack", "r1")));
  ASSERT_EQ(out.taints_size(), 1);
  EXPECT_EQ(out.taints(0).effect(), v1::TAINT_EFFECT_NO_EXECUTE);
  EXPECT_EQ(out.capacity().gpu_milli(), 8000);
  EXPECT_EQ(out.allocated().gpu_milli(), 500);
  ASSERT_EQ(out.gpus_size(), 1);
  EXPECT_EQ(out.gpus(0).model(), "H100");
  EXPECT_EQ(out.gpus(0).milli_used(), 500);
  EXPECT_FALSE(out.gpus(0).healthy());
  EXPECT_EQ(out.tasks(), 1);
}

TEST(ProtoConvertTest, ListRequestDefaultsAndLimits) {
  v1::ListJobsRequest request;
  request.set_phase(v1::JOB_PHASE_FAILED);
  request.set_queue("q");
  request.set_page_token("7");
  absl::StatusOr<server::ListJobsRequest> list = FromProto(request);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->phase, JobPhase::kFailed);
  EXPECT_EQ(list->queue, "q");
  EXPECT_EQ(list->limit, 100);
  EXPECT_EQ(list->page_token, "7");
  EXPECT_EQ(list->state, server::JobStateFilter::kAll);
  EXPECT_EQ(list->order, server::ListOrder::kOldestFirst);

  request.set_state(v1::JOB_STATE_FILTER_ACTIVE);
  request.set_order(v1::LIST_ORDER_NEWEST_FIRST);
  list = FromProto(request);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->state, server::JobStateFilter::kActive);
  EXPECT_EQ(list->order, server::ListOrder::kNewestFirst);
  request.set_state(static_cast<v1::JobStateFilter>(9));
  EXPECT_EQ(spec::ErrorField(FromProto(request).status()), "state");
  request.set_state(v1::JOB_STATE_FILTER_TERMINAL);
  request.set_order(static_cast<v1::ListOrder>(9));
  EXPECT_EQ(spec::ErrorField(FromProto(request).status()), "order");
  request.set_order(v1::LIST_ORDER_OLDEST_FIRST);

  for (int32_t limit : {-1, 1001}) {
    request.set_limit(limit);
    EXPECT_EQ(spec::ErrorField(FromProto(request).status()), "limit") << limit;
  }
}

TEST(ProtoConvertTest, LogRequestDefaultsAndLimits) {
  v1::GetJobLogsRequest request;
  request.set_stream(v1::LOG_STREAM_STDERR);
  request.set_offset(10);
  absl::StatusOr<server::LogRequest> logs = FromProto(request);
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_EQ(logs->stream, LogStream::kStderr);
  EXPECT_EQ(logs->offset, 10);
  EXPECT_EQ(logs->limit, 1 << 20);

  const struct {
    int64_t offset;
    int64_t limit;
    const char* field;
  } kBad[] = {{-1, 0, "offset"}, {0, -1, "limit"}, {0, (1 << 20) + 1, "limit"}};
  for (const auto& c : kBad) {
    request.set_offset(c.offset);
    request.set_limit(c.limit);
    EXPECT_EQ(spec::ErrorField(FromProto(request).status()), c.field);
  }
}

TEST(ProtoConvertTest, WatchWithoutAfterSequenceFollowsOnlyNewEvents) {
  v1::WatchJobEventsRequest request;
  request.set_job_id("3");
  EXPECT_EQ(FromProto(request).after_sequence, -1);
  request.set_after_sequence(0);
  EXPECT_EQ(FromProto(request).after_sequence, 0);
  EXPECT_EQ(FromProto(request).job_id, "3");
}

TEST(GrpcStatusTest, CodesMapOneToOne) {
  const struct {
    absl::StatusCode absl_code;
    grpc::StatusCode grpc_code;
  } kCases[] = {
      {absl::StatusCode::kOk, grpc::StatusCode::OK},
      {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
      {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
      {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
      {static_cast<absl::StatusCode>(99), grpc::StatusCode::UNKNOWN},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(ToGrpcCode(c.absl_code), c.grpc_code) << static_cast<int>(c.absl_code);
  }
}

TEST(GrpcStatusTest, FieldOfSpecErrorsAndRequestErrors) {
  absl::StatusOr<spec::JobDocument> bad = spec::ParseJobDocument(
      "apiVersion: tessera/v1\nkind: Job\nspec:\n  tasks:\n  - name: a\n"
      "    resources: {gpu: -1}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(spec::ErrorField(bad.status()), "spec.tasks[0].resources.gpu");

  const absl::Status request_error = spec::FieldError("job_id", "required");
  EXPECT_EQ(request_error.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(request_error.message(), "job_id: required");
  EXPECT_EQ(spec::ErrorField(request_error), "job_id");

  EXPECT_EQ(spec::ErrorField(absl::InvalidArgumentError("x: y")), std::nullopt);
  EXPECT_EQ(spec::ErrorField(spec::ParseJobDocument("{").status()),
            std::nullopt);  // syntax: no field
}

}  // namespace
}  // namespace tessera::api

#include "api/rest/json_views.h"

#include "gtest/gtest.h"
#include "spec/jobspec.h"

namespace tessera::api {
namespace {

using Json = nlohmann::ordered_json;

TEST(JsonViewsTest, StatusesMapOntoHttp) {
  struct Case {
    absl::Status status;
    int http_status;
    std::string code;
  };
  for (const Case& c : std::vector<Case>{
           {absl::InvalidArgumentError("x"), 400, "INVALID_ARGUMENT"},
           {absl::UnauthenticatedError("x"), 401, "UNAUTHENTICATED"},
           {absl::PermissionDeniedError("x"), 403, "PERMISSION_DENIED"},
           {absl::NotFoundError("x"), 404, "NOT_FOUND"},
           {absl::AlreadyExistsError("x"), 409, "ALREADY_EXISTS"},
           {absl::FailedPreconditionError("x"), 409, "FAILED_PRECONDITION"},
           {absl::ResourceExhaustedError("x"), 429, "RESOURCE_EXHAUSTED"},
           {absl::UnavailableError("x"), 503, "UNAVAILABLE"},
           {absl::DeadlineExceededError("x"), 504, "DEADLINE_EXCEEDED"},
           {absl::InternalError("x"), 500, "INTERNAL"},
           {absl::DataLossError("x"), 500, "DATA_LOSS"},
       }) {
    HttpError error = StatusToHttpError(c.status);
    EXPECT_EQ(error.http_status, c.http_status) << c.code;
    EXPECT_EQ(error.body,
              Json::parse(R"({"error": {"code": ")" + c.code + R"(", "message": "x"}})"));
  }
}

TEST(JsonViewsTest, FieldComesFromTheCodecOrFieldError) {
  absl::StatusOr<spec::JobDocument> doc =
      spec::ParseJobDocument("{\"kind\": 3}", {.source = "request"});
  ASSERT_FALSE(doc.ok());
  HttpError error = StatusToHttpError(doc.status());
  EXPECT_EQ(error.http_status, 400);
  EXPECT_EQ(error.body["error"]["field"], "kind");

  error = StatusToHttpError(spec::FieldError("limit", "must be an integer in 1..1000"));
  EXPECT_EQ(error.body["error"]["field"], "limit");
  EXPECT_EQ(error.body["error"]["message"], "limit: must be an integer in 1..1000");
  EXPECT_FALSE(StatusToHttpError(absl::InvalidArgumentError("x")).body["error"].contains("field"));
}

TEST(JsonViewsTest, ResourcesAsInJobDocuments) {
  EXPECT_EQ(ResourcesToJson({.cpu = 1500, .memory = int64_t{64} << 30, .gpu = 2500}),
            Json::parse(R"({"cpu": "1500m", "memory": "64Gi", "gpu": 2.5})"));
  EXPECT_EQ(ResourcesToJson(
                {.gpu = 4000, .gpu_memory = int64_t{40} << 30, .extended = {{"rdma/hca", 2}}}),
            Json::parse(R"({"cpu": "0", "memory": "0", "gpu": 4, "gpuMemory": "40Gi",
                            "rdma/hca": 2})"));
}

TEST(JsonViewsTest, JobViewAddsTenant) {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(
      R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "n"}, "spec": {"tasks": [{"name": "m", "command": ["x"]}]}})");
  ASSERT_TRUE(doc.ok()) << doc.status();
  doc->metadata.id = "7";
  const Json json = JobViewToJson({.document = *doc, .tenant = "team-a"});
  EXPECT_EQ(json["metadata"]["id"], "7");
  EXPECT_EQ(json["metadata"]["tenant"], "team-a");
  EXPECT_EQ(json["apiVersion"], "tessera/v1");
}

TEST(JsonViewsTest, ExplanationCarriesTheEstimate) {
  server::JobExplanation explanation{.phase = JobPhase::kPending, .reason = "QuotaExceeded"};
  EXPECT_TRUE(JobExplanationToJson(explanation)["estimate"].is_null());
  explanation.estimate =
      server::StartEstimateView{.blocker = "Quota", .message = "queue team-a", .position = 1};
  nlohmann::ordered_json json = JobExplanationToJson(explanation);
  EXPECT_TRUE(json["estimate"]["startTime"].is_null());
  EXPECT_EQ(json["estimate"]["blocker"], "Quota");
  EXPECT_EQ(json["estimate"]["position"], 1);
  explanation.estimate->start = TimePoint(std::chrono::seconds(1795946700));
  explanation.estimated_start_time = explanation.estimate->start;
  json = JobExplanationToJson(explanation);
  EXPECT_EQ(json["estimate"]["startTime"], "2026-11-29T10:05:00Z");
  EXPECT_EQ(json["estimatedStartTime"], "2026-11-29T10:05:00Z");
}

TEST(JsonViewsTest, EventTimesAreRfc3339WithMilliseconds) {
  const Json event = JobEventToJson({.job_id = "1",
                                     .sequence = 3,
                                     .time = TimePoint{std::chrono::milliseconds{1'500}},
                                     .type = "Bound",
                                     .phase = JobPhase::kAdmitted,
                                     .message = "main-0 → myhost"});
  EXPECT_EQ(event, Json::parse(R"({"jobId": "1", "sequence": 3,
      "time": "1970-01-01T00:00:01.5Z", "type": "Bound", "phase": "Admitted", "reason": "",
      "message": "main-0 → myhost"})"));
}

}  // namespace
}  // namespace tessera::api

#include "server/job_record.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spec/jobspec.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;

spec::JobDocument Document() {
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(R"(
apiVersion: tessera/v1
kind: Job
metadata: {name: train, requestId: r-1}
spec:
  timeLimit: 1h
  duration: 5m
  tasks:
  - {name: worker, replicas: 2, resources: {cpu: "2", gpu: 1}, command: [python, train.py]}
)");
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

TEST(JobRecordTest, NewRecordIsPendingWithOneTaskPerReplica) {
  const JobRecord record = NewJobRecord(7, "team-a", Document(), TimePoint(Duration(1000)));
  EXPECT_EQ(record.document.metadata.id, "7");
  EXPECT_EQ(record.status().phase, JobPhase::kPending);
  EXPECT_EQ(record.status().submit_time, TimePoint(Duration(1000)));
  ASSERT_EQ(record.tasks.size(), 2u);
  EXPECT_EQ(record.tasks[1].name, "worker-1");
  ASSERT_EQ(record.status().tasks.size(), 2u);
}

TEST(JobRecordTest, UnnamedJobsAreNamedAfterTheirId) {
  spec::JobDocument doc = Document();
  doc.spec.name.clear();
  EXPECT_EQ(NewJobRecord(12, "t", doc, TimePoint()).document.spec.name, "job-12");
}

TEST(JobRecordTest, EncodingRoundTrips) {
  JobRecord record = NewJobRecord(42, "team-a", Document(), TimePoint(Duration(5)));
  record.status().phase = JobPhase::kRunning;
  record.status().cluster = "sim";
  record.status().start_time = TimePoint(Duration(9));
  record.tasks[0].cluster = "sim";
  record.tasks[0].placement.node = "n1";
  record.tasks[0].placement.gpus = {2};
  record.tasks[0].placement.gpu_milli = 1000;
  record.tasks[0].launch_id = "42-worker-0-a1";
  record.tasks[0].launched = true;
  record.tasks[0].phase = TaskPhase::kFailed;
  record.tasks[0].exit_code = 3;
  record.tasks[0].ended = true;
  record.tasks[0].reason = "Error";
  record.tasks[0].start_time = TimePoint(Duration(9));
  record.attempt = 1;
  record.restarts = 1;
  record.cancel_requested = true;
  record.preemption = PreemptionAction::kCancel;
  record.status().preemptions = 2;
  record.last_event = 6;
  record.SyncTaskStatus();

  absl::StatusOr<JobRecord> back = DecodeJobRecord(JobKey(42), EncodeJobRecord(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(EncodeJobRecord(*back), EncodeJobRecord(record));
  EXPECT_EQ(back->document.spec.duration, Duration(300'000));
  EXPECT_EQ(back->document.metadata.request_id, "r-1");
  EXPECT_EQ(back->status().tasks[0].exit_code, 3);
  EXPECT_EQ(back->tasks[0].placement.gpus.size(), 1u);
  EXPECT_EQ(back->preemption, PreemptionAction::kCancel);
  EXPECT_EQ(back->status().preemptions, 2);
}

TEST(JobRecordTest, RecordsWithoutPreemptionKeysDecode) {
  JobRecord record = NewJobRecord(7, "team-a", Document(), TimePoint(Duration(5)));
  nlohmann::json encoded = nlohmann::json::parse(EncodeJobRecord(record));
  encoded.erase("preemption");
  encoded["status"].erase("preemptions");
  absl::StatusOr<JobRecord> back = DecodeJobRecord(JobKey(7), encoded.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->preemption, PreemptionAction::kNone);
  EXPECT_EQ(back->status().preemptions, 0);
}

TEST(JobRecordTest, CorruptRecordsAreDataLoss) {
  const JobRecord record = NewJobRecord(1, "t", Document(), TimePoint());
  const std::string good = EncodeJobRecord(record);
  for (const std::string& bad : {std::string("{"), std::string("[]"), std::string("{\"id\":1}")}) {
    absl::StatusOr<JobRecord> decoded = DecodeJobRecord(JobKey(1), bad);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(decoded.status().message(), HasSubstr(JobKey(1)));
  }
  EXPECT_EQ(DecodeJobRecord(JobKey(2), good).status().code(), absl::StatusCode::kDataLoss);
}

TEST(JobRecordTest, EventsRoundTrip) {
  const JobEvent event{.job_id = "3", .sequence = 2, .time = TimePoint(Duration(77)),
                       .type = "Placed", .phase = JobPhase::kAdmitted, .reason = "",
                       .message = "worker-0 → n1"};
  absl::StatusOr<JobEvent> back = DecodeJobEvent(EventKey(3, 2), EncodeJobEvent(event));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->message, event.message);
  EXPECT_EQ(back->phase, JobPhase::kAdmitted);
  EXPECT_EQ(back->time, event.time);
  EXPECT_EQ(DecodeJobEvent("k", "nope").status().code(), absl::StatusCode::kDataLoss);
}

TEST(JobRecordTest, KeysSortByIdAndIdsParseStrictly) {
  EXPECT_LT(JobKey(9), JobKey(10));
  EXPECT_LT(EventKey(1, 9), EventKey(1, 10));
  EXPECT_EQ(ParseJobId("42"), 42);
  for (const char* bad : {"", "0", "042", "-1", "4x", "99999999999999999999", " 1"}) {
    EXPECT_EQ(ParseJobId(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace tessera::server

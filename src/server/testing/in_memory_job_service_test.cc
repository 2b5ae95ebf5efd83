#include "server/testing/in_memory_job_service.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/jobspec.h"

namespace tessera::server::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

spec::JobDocument Doc(std::string_view name, std::string_view request_id = "") {
  std::string text = "{\"apiVersion\":\"tessera/v1\",\"kind\":\"Job\",\"metadata\":{";
  text += "\"name\":\"" + std::string(name) + "\"";
  if (!request_id.empty()) text += ",\"requestId\":\"" + std::string(request_id) + "\"";
  text +=
      "},\"spec\":{\"tasks\":[{\"name\":\"main\",\"replicas\":2,"
      "\"resources\":{\"cpu\":\"1\"},\"command\":[\"true\"]}]}}";
  absl::StatusOr<spec::JobDocument> doc = spec::ParseJobDocument(text);
  EXPECT_TRUE(doc.ok()) << doc.status();
  return *doc;
}

class InMemoryJobServiceTest : public ::testing::Test {
 protected:
  ManualClock clock_{TimePoint{Duration{1'000'000}}};
  InMemoryJobService service_{&clock_};
  Caller a_{.tenant = "a"};
  Caller b_{.tenant = "b"};
  Caller admin_{.tenant = "ops", .admin = true};
};

TEST_F(InMemoryJobServiceTest, SubmitAssignsIdsStatusAndEvent) {
  absl::StatusOr<SubmitResult> first = service_.Submit(a_, Doc("x"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->job.document.metadata.id, "1");
  EXPECT_EQ(first->job.tenant, "a");
  ASSERT_TRUE(first->job.document.status.has_value());
  EXPECT_EQ(first->job.document.status->phase, JobPhase::kPending);
  EXPECT_EQ(first->job.document.status->submit_time, clock_.Now());
  EXPECT_THAT(first->job.document.status->tasks,
              ElementsAre(Field(&spec::TaskStatus::name, "main-0"),
                          Field(&spec::TaskStatus::name, "main-1")));
  EXPECT_EQ(service_.Submit(a_, Doc(""))->job.document.spec.name, "job-2");
  EXPECT_THAT(*service_.Events(a_, "1"), ElementsAre(Field(&JobEvent::type, "Submitted")));
}

TEST_F(InMemoryJobServiceTest, TenantsAreIsolated) {
  ASSERT_TRUE(service_.Submit(a_, Doc("x")).ok());
  EXPECT_EQ(service_.Get(b_, "1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(service_.Cancel(b_, "1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(service_.Get(a_, "99").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(service_.Get(admin_, "1").ok());
  EXPECT_TRUE(service_.List(b_, {})->jobs.empty());
  EXPECT_EQ(service_.List(b_, {.tenant = "a"}).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(service_.List(admin_, {.tenant = "a"})->jobs.size(), 1);
}

TEST_F(InMemoryJobServiceTest, RequestIdIsIdempotentAndNamesAreUnique) {
  ASSERT_TRUE(service_.Submit(a_, Doc("x", "r1")).ok());
  absl::StatusOr<SubmitResult> again = service_.Submit(a_, Doc("other", "r1"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.document.metadata.id, "1");
  EXPECT_EQ(service_.Submit(a_, Doc("x")).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(service_.Submit(b_, Doc("x", "r1"))->created);  // another tenant
  ASSERT_TRUE(service_.Cancel(a_, "1").ok());
  EXPECT_TRUE(service_.Submit(a_, Doc("x")).ok());  // the name is free again
}

TEST_F(InMemoryJobServiceTest, ListFiltersAndPages) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(service_.Submit(a_, Doc("")).ok());
  ASSERT_TRUE(service_.Cancel(a_, "3").ok());
  absl::StatusOr<ListJobsResult> page = service_.List(a_, {.limit = 2});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->jobs.size(), 2);
  EXPECT_EQ(page->next_page_token, "2");
  page = service_.List(a_, {.limit = 2, .page_token = "4"});
  ASSERT_EQ(page->jobs.size(), 1);
  EXPECT_EQ(page->next_page_token, "");
  EXPECT_EQ(service_.List(a_, {.phase = JobPhase::kCancelled})->jobs.size(), 1);
  EXPECT_EQ(service_.List(a_, {.name = "job-2"})->jobs.size(), 1);
  EXPECT_EQ(service_.List(a_, {.limit = 0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(service_.List(a_, {.page_token = "x"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(InMemoryJobServiceTest, CancelIsRecordedOnceAndIdempotent) {
  ASSERT_TRUE(service_.Submit(a_, Doc("x")).ok());
  EXPECT_EQ(service_.Cancel(a_, "1")->document.status->phase, JobPhase::kCancelled);
  EXPECT_EQ(service_.Cancel(a_, "1")->document.status->phase, JobPhase::kCancelled);
  EXPECT_THAT(*service_.Events(a_, "1"), ElementsAre(Field(&JobEvent::type, "Submitted"),
                                                     Field(&JobEvent::type, "Cancelled")));
}

TEST_F(InMemoryJobServiceTest, LogsHonourOffsetAndLimit) {
  ASSERT_TRUE(service_.Submit(a_, Doc("x")).ok());
  EXPECT_EQ(service_.Logs(a_, "1", {}).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(service_.SetLog("1", "main-0", LogStream::kStdout, "hello world", true).ok());
  absl::StatusOr<LogChunk> chunk = service_.Logs(a_, "1", {.offset = 6, .limit = 3});
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(chunk->data, "wor");
  EXPECT_EQ(chunk->next_offset, 9);
  EXPECT_FALSE(chunk->end);
  chunk = service_.Logs(a_, "1", {.task = "main-0", .offset = 9});
  EXPECT_EQ(chunk->data, "ld");
  EXPECT_TRUE(chunk->end);
  EXPECT_EQ(service_.Logs(a_, "1", {.task = "nope"}).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(InMemoryJobServiceTest, WatchDeliversLaterEventsAndStopsOnShutdown) {
  ASSERT_TRUE(service_.Submit(a_, Doc("x")).ok());
  absl::StatusOr<std::unique_ptr<EventStream>> mine = service_.Watch(a_, {});
  absl::StatusOr<std::unique_ptr<EventStream>> theirs = service_.Watch(b_, {});
  absl::StatusOr<std::unique_ptr<EventStream>> replay =
      service_.Watch(a_, {.job_id = "1", .after_sequence = 0});
  ASSERT_TRUE(mine.ok() && theirs.ok() && replay.ok());
  EXPECT_EQ((*mine)->Next(Duration{0})->has_value(), false);
  ASSERT_TRUE(service_.AppendEvent("1", "Running", JobPhase::kRunning).ok());
  absl::StatusOr<std::optional<JobEvent>> event = (*mine)->Next(Duration{0});
  ASSERT_TRUE(event.ok() && event->has_value());
  EXPECT_EQ((*event)->type, "Running");
  EXPECT_EQ((*event)->sequence, 2);
  EXPECT_FALSE((*theirs)->Next(Duration{0})->has_value());
  EXPECT_EQ((*(*replay)->Next(Duration{0}))->type, "Submitted");
  EXPECT_EQ((*(*replay)->Next(Duration{0}))->type, "Running");
  service_.Shutdown();
  EXPECT_EQ((*mine)->Next(Duration{0}).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(service_.Watch(a_, {}).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tessera::server::testing

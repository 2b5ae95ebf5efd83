#include "server/event_hub.h"

#include <chrono>

#include "gtest/gtest.h"

namespace tessera::server {
namespace {

using std::chrono::milliseconds;

JobEvent Event(std::string job, int64_t sequence) {
  return {.job_id = std::move(job), .sequence = sequence, .type = "Submitted"};
}

TEST(EventHubTest, TenantsSeeOnlyTheirJobsAndAdminsSeeAll) {
  EventHub hub;
  auto tenant = hub.Subscribe({.tenant = "a"}, "");
  auto admin = hub.Subscribe({.tenant = "root", .admin = true}, "");
  auto one_job = hub.Subscribe({.tenant = "a"}, "2");
  hub.Publish(Event("1", 1), "b");
  hub.Publish(Event("2", 1), "a");
  EXPECT_EQ((*tenant->Next(milliseconds(0)))->job_id, "2");
  EXPECT_FALSE(tenant->Next(milliseconds(0))->has_value());
  EXPECT_EQ((*admin->Next(milliseconds(0)))->job_id, "1");
  EXPECT_EQ((*admin->Next(milliseconds(0)))->job_id, "2");
  EXPECT_EQ((*one_job->Next(milliseconds(0)))->job_id, "2");
}

TEST(EventHubTest, ASlowReaderIsDroppedWithResourceExhausted) {
  EventHub hub(/*max_queued=*/2);
  auto stream = hub.Subscribe({.tenant = "a"}, "");
  for (int i = 1; i <= 3; ++i) hub.Publish(Event("1", i), "a");
  EXPECT_TRUE(stream->Next(milliseconds(0)).ok());
  EXPECT_TRUE(stream->Next(milliseconds(0)).ok());
  EXPECT_EQ(stream->Next(milliseconds(0)).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(EventHubTest, ShutdownCancelsStreams) {
  EventHub hub;
  auto stream = hub.Subscribe({.tenant = "a"}, "");
  hub.Shutdown();
  EXPECT_EQ(stream->Next(milliseconds(1000)).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(hub.Subscribe({.tenant = "a"}, "")->Next(milliseconds(0)).status().code(),
            absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace tessera::server

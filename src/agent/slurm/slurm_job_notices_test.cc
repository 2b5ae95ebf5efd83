#include "agent/slurm/slurm_job_notices.h"

#include <httplib.h>

#include <mutex>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseJobEndedNoticeTest, TakesTheJobIdOfAForm) {
  EXPECT_EQ(*ParseJobEndedNotice("job_id=4211"), 4211);
  EXPECT_EQ(*ParseJobEndedNotice("job_id=4211\n"), 4211);
  EXPECT_EQ(*ParseJobEndedNotice("state=COMPLETED&job_id=7&exit=0"), 7);
}

TEST(ParseJobEndedNoticeTest, RefusesAnythingElseNamingTheField) {
  EXPECT_EQ(ParseJobEndedNotice("").status().message(), "job_id: missing");
  EXPECT_EQ(ParseJobEndedNotice("jobid=4").status().message(), "job_id: missing");
  for (const char* body : {"job_id=", "job_id=0", "job_id=-3", "job_id=+3", "job_id= 3",
                           "job_id=3x", "job_id=99999999999999999999", "job_id=\x01"}) {
    absl::StatusOr<int64_t> parsed = ParseJobEndedNotice(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("job_id: must be a positive integer"));
  }
  EXPECT_EQ(std::string(ParseJobEndedNotice("job_id=\x01").status().message()),
            "job_id: must be a positive integer, not \"\\x01\"")
      << "control bytes are shown escaped";
}

TEST(SlurmJobNoticesTest, HandsEachNoticedJobIdOnAndAnswersBadRequestsClearly) {
  std::mutex mu;
  std::vector<int64_t> heard;
  absl::StatusOr<std::unique_ptr<SlurmJobNotices>> notices =
      SlurmJobNotices::Start({.host = "127.0.0.1", .port = 0}, [&](int64_t job_id) {
        std::lock_guard<std::mutex> lock(mu);
        heard.push_back(job_id);
      });
  ASSERT_TRUE(notices.ok()) << notices.status();
  httplib::Client client("127.0.0.1", (*notices)->port());
  httplib::Result ok =
      client.Post("/slurm/job-ended", "job_id=12", "application/x-www-form-urlencoded");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 204);
  httplib::Result bad =
      client.Post("/slurm/job-ended", "job_id=x", "application/x-www-form-urlencoded");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->body, "job_id: must be a positive integer, not \"x\"\n");
  httplib::Result elsewhere = client.Get("/slurm/job-ended");
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->status, 404);
  notices->reset();  // joins the listener: every call has returned
  EXPECT_THAT(heard, ElementsAre(12));
}

TEST(SlurmJobNoticesTest, AnAddressInUseIsAnErrorNamingIt) {
  absl::StatusOr<std::unique_ptr<SlurmJobNotices>> first =
      SlurmJobNotices::Start({.host = "127.0.0.1", .port = 0}, [](int64_t) {});
  ASSERT_TRUE(first.ok()) << first.status();
  const int port = (*first)->port();
  absl::StatusOr<std::unique_ptr<SlurmJobNotices>> second =
      SlurmJobNotices::Start({.host = "127.0.0.1", .port = port}, [](int64_t) {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(fmt::format("127.0.0.1:{}", port)));
}

}  // namespace
}  // namespace tessera::agent

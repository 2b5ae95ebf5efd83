#include "agent/slurm/slurm_jobcomp_follower.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/slurm/slurm_jobcomp_line.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// As slurmctld's jobcomp/filetxt writes it.
std::string Line(int64_t job_id) {
  return "JobId=" + std::to_string(job_id) +
         " UserId=root(0) GroupId=root(0) Name=t JobState=COMPLETED Partition=gpu "
         "TimeLimit=UNLIMITED StartTime=2026-12-07T19:22:13 EndTime=2026-12-07T19:22:14 "
         "NodeList=node1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= "
         "Tres=cpu=1,mem=100M,node=1,billing=1 Account= QOS= WcKey= Cluster=c "
         "SubmitTime=2026-12-07T19:22:12 EligibleTime=2026-12-07T19:22:12 DerivedExitCode=0:0 "
         "ExitCode=0:0\n";
}

TEST(ParseJobCompLineTest, ReadsTheJobAndItsEnd) {
  absl::StatusOr<SlurmJob> logged = ParseJobCompLine(Line(4211));
  ASSERT_TRUE(logged.ok()) << logged.status();
  EXPECT_EQ(logged->id, 4211);
  EXPECT_EQ(logged->state, "COMPLETED");
  EXPECT_EQ(logged->exit_code, 0);
  std::tm start{.tm_sec = 13,
                .tm_min = 22,
                .tm_hour = 19,
                .tm_mday = 7,
                .tm_mon = 11,
                .tm_year = 126,
                .tm_isdst = -1};
  EXPECT_EQ(logged->start_time, TimePoint(std::chrono::seconds(std::mktime(&start))));
  EXPECT_EQ(logged->end_time, *logged->start_time + std::chrono::seconds(1));
  EXPECT_TRUE(TellsWholeEnd(*logged));
}

TEST(ParseJobCompLineTest, AnEndTheLineCannotTellWholeIsLeftToARead) {
  absl::StatusOr<SlurmJob> bare = ParseJobCompLine("JobId=7");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->id, 7);
  EXPECT_FALSE(TellsWholeEnd(*bare));
  absl::StatusOr<SlurmJob> failed =
      ParseJobCompLine("JobId=8 Name=a JobState=FAILED StartTime=2026-12-07T19:22:13 ExitCode=3:0");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->exit_code, 3 << 8);
  EXPECT_FALSE(TellsWholeEnd(*failed)) << "a failure's reason is read from slurmrestd";
  absl::StatusOr<SlurmJob> killed = ParseJobCompLine(
      "JobId=9 Name=a JobState=CANCELLED StartTime=Unknown DerivedExitCode=0:0 ExitCode=0:15");
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->exit_code, 15);
  EXPECT_FALSE(killed->start_time.has_value());
  EXPECT_FALSE(TellsWholeEnd(*killed));
  for (const char* code : {"ExitCode=x:0", "ExitCode=256:0", "ExitCode=0", "ExitCode=-1:0"}) {
    EXPECT_FALSE(ParseJobCompLine(std::string("JobId=1 ") + code)->exit_code.has_value()) << code;
  }
}

TEST(ParseJobCompLineTest, RefusesAnythingElseNamingTheField) {
  EXPECT_EQ(ParseJobCompLine("").status().message(), "JobId: missing");
  EXPECT_EQ(ParseJobCompLine(" JobId=4").status().message(), "JobId: missing");
  for (const char* line : {"JobId=", "JobId=0 x", "JobId=-3", "JobId=+3", "JobId=3x y",
                           "JobId=99999999999999999999", "JobId=\x01"}) {
    absl::StatusOr<SlurmJob> parsed = ParseJobCompLine(line);
    ASSERT_FALSE(parsed.ok()) << line;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("JobId: must be a positive integer"));
  }
  EXPECT_EQ(std::string(ParseJobCompLine("JobId=\x01").status().message()),
            "JobId: must be a positive integer, not \"\\x01\"")
      << "control bytes are shown escaped";
}

class SlurmJobCompFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("slurm-jobcomp-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "jobcomp.txt").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SlurmJobCompFollower> Follow() {
    return std::make_unique<SlurmJobCompFollower>(
        path_, Duration(5),
        [this](const SlurmJob& logged) {
          std::lock_guard<std::mutex> lock(mu_);
          heard_.push_back(logged.id);
        },
        [this](std::string_view line) {
          std::lock_guard<std::mutex> lock(mu_);
          logged_.emplace_back(line);
        });
  }
  void Append(const std::string& text) {
    std::ofstream(path_, std::ios::app) << text << std::flush;
  }
  std::vector<int64_t> Heard() {
    std::lock_guard<std::mutex> lock(mu_);
    return heard_;
  }
  std::vector<std::string> Logged() {
    std::lock_guard<std::mutex> lock(mu_);
    return logged_;
  }
  bool WaitHeard(size_t count) {
    for (int i = 0; i < 2000; ++i) {
      if (Heard().size() >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::mutex mu_;
  std::vector<int64_t> heard_;
  std::vector<std::string> logged_;
};

TEST_F(SlurmJobCompFollowerTest, HandsOnTheJobsLoggedAfterItStartedLineByLine) {
  Append(Line(1));  // old news
  std::unique_ptr<SlurmJobCompFollower> follower = Follow();
  Append(Line(2));
  ASSERT_TRUE(WaitHeard(1));
  const std::string third = Line(3);
  Append(third.substr(0, 20));  // a line still being written is read once it ends
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Append(third.substr(20));
  Append("JobId=bad x\n");
  Append(Line(4));
  ASSERT_TRUE(WaitHeard(3));
  follower.reset();
  EXPECT_THAT(Heard(), ElementsAre(2, 3, 4));
  ASSERT_EQ(Logged().size(), 1u);
  EXPECT_THAT(Logged()[0], HasSubstr("a line is skipped: JobId: must be a positive integer"));
}

TEST_F(SlurmJobCompFollowerTest, FollowsAFileThatAppearsLaterAndOneThatIsRotated) {
  std::unique_ptr<SlurmJobCompFollower> follower = Follow();
  Append(Line(1));  // a file that appears holds only new lines
  ASSERT_TRUE(WaitHeard(1));
  std::filesystem::rename(path_, path_ + ".1");
  Append(Line(2));
  ASSERT_TRUE(WaitHeard(2));
  follower.reset();
  EXPECT_THAT(Heard(), ElementsAre(1, 2));
}

}  // namespace
}  // namespace tessera::agent

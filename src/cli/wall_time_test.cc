#include "cli/wall_time.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::cli {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

struct Case {
  std::string text;
  std::optional<Duration> want;
};

class WallTimeTest : public ::testing::TestWithParam<Case> {};

TEST_P(WallTimeTest, Parses) {
  absl::StatusOr<std::optional<Duration>> got = ParseWallTime(GetParam().text, "--time");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, WallTimeTest,
    ::testing::Values(Case{"90", minutes(90)},                     // minutes, as sbatch
                      Case{"90:30", minutes(90) + seconds(30)},    // MM:SS
                      Case{"1:30:00", minutes(90)},                // HH:MM:SS
                      Case{"36:00:00", hours(36)},                 // leading field unbounded
                      Case{"2-12", hours(60)},                     // D-HH
                      Case{"2-12:30", hours(60) + minutes(30)},    // D-HH:MM
                      Case{"1-00:00:05", hours(24) + seconds(5)},  // D-HH:MM:SS
                      Case{"1h30m", minutes(90)},                  // Go-style
                      Case{"45s", seconds(45)}, Case{"unlimited", std::nullopt},
                      Case{"INFINITE", std::nullopt}));

struct Bad {
  std::string text;
  std::string error;
};

class WallTimeBadTest : public ::testing::TestWithParam<Bad> {};

TEST_P(WallTimeBadTest, NamesTheFlagAndTheForms) {
  absl::StatusOr<std::optional<Duration>> got = ParseWallTime(GetParam().text, "--time");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("--time: '"));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(Errors, WallTimeBadTest,
                         ::testing::Values(Bad{"", "use minutes (90)"}, Bad{"0", "must be > 0"},
                                           Bad{"0s", "must be > 0"}, Bad{"-5", "use minutes"},
                                           Bad{"1.5", "use minutes"}, Bad{"1:2:3:4", "use minutes"},
                                           Bad{"10:75", "minutes and seconds must be 0..59"},
                                           Bad{"1-25", "hours after 'D-' must be 0..23"},
                                           Bad{"1-:30", "use minutes"}, Bad{"soon", "use minutes"},
                                           Bad{"99999999999", "too long"},
                                           Bad{"1h-5m", "use minutes"}));

}  // namespace
}  // namespace tessera::cli

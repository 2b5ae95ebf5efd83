#include "core/duration.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace tessera {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

struct ValidCase {
  std::string text;
  Duration want;
};

class DurationValid : public ::testing::TestWithParam<ValidCase> {};
TEST_P(DurationValid, Parses) {
  const absl::StatusOr<Duration> got = ParseDuration(GetParam().text, "spec.time_limit");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->count(), GetParam().want.count()) << GetParam().text;
}
INSTANTIATE_TEST_SUITE_P(
    Duration, DurationValid,
    ::testing::Values(
        ValidCase{"90", seconds(90)}, ValidCase{"1.5", milliseconds(1500)},
        ValidCase{"0", Duration{0}}, ValidCase{"0.001", milliseconds(1)},
        ValidCase{"90s", seconds(90)}, ValidCase{"5m", minutes(5)}, ValidCase{"1h30m", minutes(90)},
        ValidCase{"250ms", milliseconds(250)}, ValidCase{"1.5h", minutes(90)},
        ValidCase{"2h45m30.5s", milliseconds(9930500)}, ValidCase{"1500000us", milliseconds(1500)},
        ValidCase{"1000000ns", milliseconds(1)}, ValidCase{"1000\xC2\xB5s", milliseconds(1)},
        ValidCase{"1000\xCE\xBCs", milliseconds(1)}, ValidCase{"0s", Duration{0}},
        ValidCase{"-0", Duration{0}}, ValidCase{"-0s", Duration{0}}, ValidCase{"+5s", seconds(5)},
        ValidCase{" 10m ", minutes(10)}, ValidCase{"1h0.25s", milliseconds(3600250)},
        ValidCase{"1m1m", minutes(2)}, ValidCase{"9223372036854775807ms", milliseconds(INT64_MAX)},
        ValidCase{"2562047788015h", hours(2562047788015)}));

struct InvalidCase {
  std::string text;
  std::string want_message;
};

class DurationInvalid : public ::testing::TestWithParam<InvalidCase> {};
TEST_P(DurationInvalid, FailsWithMessage) {
  const absl::StatusOr<Duration> got = ParseDuration(GetParam().text, "spec.time_limit");
  ASSERT_FALSE(got.ok()) << GetParam().text << " parsed as " << got->count();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), GetParam().want_message);
}

constexpr char kWant[] =
    " is not a duration (want seconds or a string such as \"90s\", \"1h30m\" "
    "or \"250ms\")";

INSTANTIATE_TEST_SUITE_P(
    Duration, DurationInvalid,
    ::testing::Values(
        InvalidCase{"-5s", "spec.time_limit: must be >= 0"},
        InvalidCase{"-1", "spec.time_limit: must be >= 0"},
        InvalidCase{"-1h30m", "spec.time_limit: must be >= 0"},
        InvalidCase{"", std::string("spec.time_limit: \"\"") + kWant},
        InvalidCase{"-", std::string("spec.time_limit: \"-\"") + kWant},
        InvalidCase{"abc", std::string("spec.time_limit: \"abc\"") + kWant},
        InvalidCase{"1h30", std::string("spec.time_limit: \"1h30\"") + kWant},
        InvalidCase{"5 m", std::string("spec.time_limit: \"5 m\"") + kWant},
        InvalidCase{"1d", std::string("spec.time_limit: \"1d\"") + kWant},
        InvalidCase{"h", std::string("spec.time_limit: \"h\"") + kWant},
        InvalidCase{"1.5.5s", std::string("spec.time_limit: \"1.5.5s\"") + kWant},
        InvalidCase{"1e3s", std::string("spec.time_limit: \"1e3s\"") + kWant},
        InvalidCase{"--5s", std::string("spec.time_limit: \"--5s\"") + kWant},
        InvalidCase{"0.5ms", "spec.time_limit: 0.5ms is not a whole number of milliseconds"},
        InvalidCase{"0.0001", "spec.time_limit: 0.0001 is not a whole number of milliseconds"},
        InvalidCase{"1ns", "spec.time_limit: 1ns is not a whole number of milliseconds"},
        InvalidCase{"9223372036854775808ms", "spec.time_limit: 9223372036854775808ms is too large"},
        InvalidCase{"9223372036854775807ms1ms",
                    "spec.time_limit: 9223372036854775807ms1ms is too large"},
        InvalidCase{"99999999999999999999", "spec.time_limit: 99999999999999999999 is too large"}));

struct FormatCase {
  Duration value;
  std::string want;
};

class DurationFormat : public ::testing::TestWithParam<FormatCase> {};
TEST_P(DurationFormat, FormatsAndRoundTrips) {
  EXPECT_EQ(FormatDuration(GetParam().value), GetParam().want);
  if (GetParam().value.count() >= 0) {
    const absl::StatusOr<Duration> back = ParseDuration(GetParam().want, "f");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->count(), GetParam().value.count());
  }
}
INSTANTIATE_TEST_SUITE_P(
    Duration, DurationFormat,
    ::testing::Values(FormatCase{milliseconds(5400000), "1h30m"},
                      FormatCase{milliseconds(1500), "1.5s"}, FormatCase{Duration{0}, "0s"},
                      FormatCase{milliseconds(250), "250ms"}, FormatCase{seconds(90), "1m30s"},
                      FormatCase{hours(48), "48h"}, FormatCase{milliseconds(3600250), "1h0.25s"},
                      FormatCase{milliseconds(61001), "1m1.001s"},
                      FormatCase{milliseconds(-1500), "-1.5s"},
                      FormatCase{milliseconds(INT64_MAX), "2562047788015h12m55.807s"},
                      FormatCase{milliseconds(INT64_MIN), "-2562047788015h12m55.808s"}));

}  // namespace
}  // namespace tessera

#include "core/quantity.h"

#include <cstdint>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = INT64_MAX;

struct ValidCase {
  std::string text;
  int64_t want;
};

struct InvalidCase {
  std::string text;
  std::string want_message;  // the complete message, field included
};

constexpr char kField[] = "spec.tasks[1].resources.x";

class CpuValid : public ::testing::TestWithParam<ValidCase> {};
TEST_P(CpuValid, Parses) {
  const absl::StatusOr<int64_t> got = ParseCpuMillis(GetParam().text, kField);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    Quantity, CpuValid,
    ::testing::Values(ValidCase{"0", 0}, ValidCase{"1", 1000}, ValidCase{"8", 8000},
                      ValidCase{"1.5", 1500}, ValidCase{"0.5", 500}, ValidCase{".5", 500},
                      ValidCase{"2.", 2000}, ValidCase{"0.001", 1}, ValidCase{"500m", 500},
                      ValidCase{"1500m", 1500}, ValidCase{"0m", 0}, ValidCase{"+2", 2000},
                      ValidCase{"-0", 0}, ValidCase{"1e3", 1000000}, ValidCase{"1E3", 1000000},
                      ValidCase{"5e-1", 500}, ValidCase{"1e-3", 1}, ValidCase{"2k", 2000000},
                      ValidCase{"1000000u", 1000}, ValidCase{"1000000n", 1},
                      ValidCase{"000012", 12000}, ValidCase{"1.000000000000000000000000", 1000},
                      ValidCase{" 2 ", 2000}, ValidCase{"\t250m\n", 250},
                      ValidCase{"9223372036854775807m", kMax},
                      ValidCase{"9223372036854775.807", kMax},
                      ValidCase{"0.000000000000000000000000000e999999999999", 0}));

class CpuInvalid : public ::testing::TestWithParam<InvalidCase> {};
TEST_P(CpuInvalid, FailsWithMessage) {
  const absl::StatusOr<int64_t> got = ParseCpuMillis(GetParam().text, kField);
  ASSERT_FALSE(got.ok()) << GetParam().text << " parsed as " << *got;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), GetParam().want_message);
}
INSTANTIATE_TEST_SUITE_P(
    Quantity, CpuInvalid,
    ::testing::Values(
        InvalidCase{"-1", "spec.tasks[1].resources.x: must be >= 0"},
        InvalidCase{"-0.5m", "spec.tasks[1].resources.x: must be >= 0"},
        InvalidCase{"abc", "spec.tasks[1].resources.x: \"abc\" is not a quantity"},
        InvalidCase{"", "spec.tasks[1].resources.x: \"\" is not a quantity"},
        InvalidCase{"   ", "spec.tasks[1].resources.x: \"\" is not a quantity"},
        InvalidCase{".", "spec.tasks[1].resources.x: \".\" is not a quantity"},
        InvalidCase{"1 5", "spec.tasks[1].resources.x: \"1 5\" is not a quantity"},
        InvalidCase{"1 Gi", "spec.tasks[1].resources.x: \"1 Gi\" is not a quantity"},
        InvalidCase{"1.2.3", "spec.tasks[1].resources.x: \"1.2.3\" is not a quantity"},
        InvalidCase{"1e", "spec.tasks[1].resources.x: \"1e\" is not a quantity"},
        InvalidCase{"1e+", "spec.tasks[1].resources.x: \"1e+\" is not a quantity"},
        InvalidCase{"1ki", "spec.tasks[1].resources.x: \"1ki\" is not a quantity"},
        InvalidCase{"1K", "spec.tasks[1].resources.x: \"1K\" is not a quantity"},
        InvalidCase{"1mm", "spec.tasks[1].resources.x: \"1mm\" is not a quantity"},
        InvalidCase{"--1", "spec.tasks[1].resources.x: \"--1\" is not a quantity"},
        InvalidCase{"m", "spec.tasks[1].resources.x: \"m\" is not a quantity"},
        InvalidCase{"0x10", "spec.tasks[1].resources.x: \"0x10\" is not a quantity"},
        InvalidCase{"1\n2", "spec.tasks[1].resources.x: \"1\\n2\" is not a quantity"},
        InvalidCase{"0.5m", "spec.tasks[1].resources.x: 0.5m is not a whole number of millicores"},
        InvalidCase{"0.0001",
                    "spec.tasks[1].resources.x: 0.0001 is not a whole number of millicores"},
        InvalidCase{"1n", "spec.tasks[1].resources.x: 1n is not a whole number of millicores"},
        InvalidCase{
            "1e-999999999999999",
            "spec.tasks[1].resources.x: 1e-999999999999999 is not a whole number of millicores"},
        InvalidCase{"9223372036854775808m",
                    "spec.tasks[1].resources.x: 9223372036854775808m is too large"},
        InvalidCase{"9223372036854776", "spec.tasks[1].resources.x: 9223372036854776 is too large"},
        InvalidCase{"1E", "spec.tasks[1].resources.x: 1E is too large"},
        InvalidCase{"1e999999999999999999999",
                    "spec.tasks[1].resources.x: 1e999999999999999999999 is too large"},
        InvalidCase{
            "99999999999999999999999999999999999999999",
            "spec.tasks[1].resources.x: 99999999999999999999999999999999999999999 is too large"}));

// Measured rates (metrics-server's nanocores) round up to a whole millicore.
class CpuRoundedUp : public ::testing::TestWithParam<ValidCase> {};
TEST_P(CpuRoundedUp, Parses) {
  const absl::StatusOr<int64_t> got = ParseCpuMillisRoundedUp(GetParam().text, kField);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(Quantity, CpuRoundedUp,
                         ::testing::Values(ValidCase{"0", 0}, ValidCase{"0n", 0},
                                           ValidCase{"2", 2000}, ValidCase{"250m", 250},
                                           ValidCase{"123456789n", 124}, ValidCase{"1000000n", 1},
                                           ValidCase{"1000001n", 2}, ValidCase{"1n", 1},
                                           ValidCase{"1500u", 2}, ValidCase{"0.5m", 1},
                                           ValidCase{"1.0001", 1001},
                                           ValidCase{"1e-999999999999999", 1},
                                           ValidCase{"9223372036854775806.5m", kMax}));

TEST(CpuRoundedUpInvalid, FailsLikeParseCpuMillis) {
  for (const auto& [text, message] :
       {std::pair{"-1n", "spec.tasks[1].resources.x: must be >= 0"},
        std::pair{"12x", "spec.tasks[1].resources.x: \"12x\" is not a quantity"},
        std::pair{"9223372036854775807.5m",
                  "spec.tasks[1].resources.x: 9223372036854775807.5m is too large"}}) {
    const absl::StatusOr<int64_t> got = ParseCpuMillisRoundedUp(text, kField);
    ASSERT_FALSE(got.ok()) << text << " parsed as " << *got;
    EXPECT_EQ(got.status().message(), message);
  }
}

class BytesValid : public ::testing::TestWithParam<ValidCase> {};
TEST_P(BytesValid, Parses) {
  const absl::StatusOr<int64_t> got = ParseBytes(GetParam().text, kField);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    Quantity, BytesValid,
    ::testing::Values(ValidCase{"512", 512}, ValidCase{"0", 0}, ValidCase{"1k", 1000},
                      ValidCase{"1M", 1000000}, ValidCase{"1G", 1000000000},
                      ValidCase{"1T", 1000000000000}, ValidCase{"1P", 1000000000000000},
                      ValidCase{"1E", 1000000000000000000}, ValidCase{"16Ki", 16384},
                      ValidCase{"64Mi", 67108864}, ValidCase{"16Gi", 17179869184},
                      ValidCase{"1Ti", 1099511627776}, ValidCase{"1Pi", 1125899906842624},
                      ValidCase{"1Ei", 1152921504606846976}, ValidCase{"7Ei", 8070450532247928832},
                      ValidCase{"1.5Gi", 1610612736}, ValidCase{"0.5Ki", 512},
                      ValidCase{"0.0009765625Ki", 1}, ValidCase{"1000m", 1},
                      ValidCase{"1e9", 1000000000}, ValidCase{"9223372036854775807", kMax}));

class BytesInvalid : public ::testing::TestWithParam<InvalidCase> {};
TEST_P(BytesInvalid, FailsWithMessage) {
  const absl::StatusOr<int64_t> got = ParseBytes(GetParam().text, "node.memory");
  ASSERT_FALSE(got.ok()) << GetParam().text << " parsed as " << *got;
  EXPECT_EQ(got.status().message(), GetParam().want_message);
}
INSTANTIATE_TEST_SUITE_P(
    Quantity, BytesInvalid,
    ::testing::Values(InvalidCase{"0.5", "node.memory: 0.5 is not a whole number of bytes"},
                      InvalidCase{"1m", "node.memory: 1m is not a whole number of bytes"},
                      InvalidCase{"0.1Ki", "node.memory: 0.1Ki is not a whole number of bytes"},
                      InvalidCase{"8Ei", "node.memory: 8Ei is too large"},
                      InvalidCase{"9223372036854775808",
                                  "node.memory: 9223372036854775808 is too large"},
                      InvalidCase{"-16Gi", "node.memory: must be >= 0"},
                      InvalidCase{"16GB", "node.memory: \"16GB\" is not a quantity"},
                      InvalidCase{"16 Gi", "node.memory: \"16 Gi\" is not a quantity"}));

class MilliGpuValid : public ::testing::TestWithParam<ValidCase> {};
TEST_P(MilliGpuValid, Parses) {
  const absl::StatusOr<int64_t> got = ParseMilliGpu(GetParam().text, kField);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(Quantity, MilliGpuValid,
                         ::testing::Values(ValidCase{"1", 1000}, ValidCase{"0.5", 500},
                                           ValidCase{"500m", 500}, ValidCase{"8", 8000},
                                           ValidCase{"0.1", 100}, ValidCase{"0.25", 250},
                                           ValidCase{"1.5", 1500}, ValidCase{"0", 0},
                                           ValidCase{"0.001", 1}));

TEST(MilliGpuInvalid, NamesTheFieldAndTheUnit) {
  EXPECT_EQ(ParseMilliGpu("-1", "spec.tasks[1].resources.gpu").status().message(),
            "spec.tasks[1].resources.gpu: must be >= 0");
  EXPECT_EQ(ParseMilliGpu("0.0005", "g").status().message(),
            "g: 0.0005 is not a whole number of milli-GPU");
  EXPECT_EQ(ParseMilliGpu("one", "g").status().message(), "g: \"one\" is not a quantity");
}

TEST(Count, AcceptsWholeNumbersOnly) {
  EXPECT_EQ(*ParseCount("3", "f"), 3);
  EXPECT_EQ(*ParseCount("0", "f"), 0);
  EXPECT_EQ(*ParseCount("2k", "f"), 2000);
  EXPECT_EQ(*ParseCount("1Ki", "f"), 1024);
  EXPECT_EQ(ParseCount("1.5", "f").status().message(), "f: 1.5 is not a whole number");
  EXPECT_EQ(ParseCount("-3", "f").status().message(), "f: must be >= 0");
  EXPECT_EQ(ParseCount("three", "f").status().message(), "f: \"three\" is not a quantity");
  EXPECT_EQ(ParseCount("10E", "f").status().message(), "f: 10E is too large");
}

TEST(QuantityMessages, EscapeAndShortenHostileInput) {
  const std::string long_garbage(1000, 'x');
  const std::string message(ParseBytes(long_garbage, "f").status().message());
  EXPECT_LT(message.size(), 120u);
  EXPECT_THAT(message, HasSubstr("...\" is not a quantity"));
  EXPECT_EQ(ParseBytes(std::string("1\0", 2), "f").status().message(),
            "f: \"1\\x00\" is not a quantity");
}

TEST(QuantityLongInput, ExactWithManyDigits) {
  // 1 followed by 30 zeros and a fraction of zeros, times 10^-30: exactly one core.
  EXPECT_EQ(*ParseCpuMillis("1000000000000000000000000000000.000e-30", "f"), 1000);
  EXPECT_EQ(*ParseBytes(std::string(5000, '0') + "7", "f"), 7);
}

struct FormatCase {
  int64_t value;
  std::string want;
};

class FormatCpu : public ::testing::TestWithParam<FormatCase> {};
TEST_P(FormatCpu, FormatsAndRoundTrips) {
  EXPECT_EQ(FormatCpuMillis(GetParam().value), GetParam().want);
  if (GetParam().value >= 0) {
    EXPECT_EQ(*ParseCpuMillis(GetParam().want, "f"), GetParam().value);
  }
}
INSTANTIATE_TEST_SUITE_P(Quantity, FormatCpu,
                         ::testing::Values(FormatCase{1500, "1500m"}, FormatCase{2000, "2"},
                                           FormatCase{0, "0"}, FormatCase{1, "1m"},
                                           FormatCase{-500, "-500m"}, FormatCase{-3000, "-3"},
                                           FormatCase{kMax, "9223372036854775807m"}));

class FormatByteCount : public ::testing::TestWithParam<FormatCase> {};
TEST_P(FormatByteCount, FormatsAndRoundTrips) {
  EXPECT_EQ(FormatBytes(GetParam().value), GetParam().want);
  if (GetParam().value >= 0) {
    EXPECT_EQ(*ParseBytes(GetParam().want, "f"), GetParam().value);
  }
}
INSTANTIATE_TEST_SUITE_P(Quantity, FormatByteCount,
                         ::testing::Values(FormatCase{17179869184, "16Gi"}, FormatCase{0, "0"},
                                           FormatCase{512, "512"}, FormatCase{1024, "1Ki"},
                                           FormatCase{1536, "1536"}, FormatCase{1000000000, "1G"},
                                           FormatCase{1500000000, "1500M"},
                                           FormatCase{1610612736, "1536Mi"},
                                           FormatCase{1152921504606846976, "1Ei"},
                                           FormatCase{-1024, "-1Ki"}, FormatCase{INT64_MIN, "-8Ei"},
                                           FormatCase{kMax, "9223372036854775807"}));

class FormatGpu : public ::testing::TestWithParam<FormatCase> {};
TEST_P(FormatGpu, FormatsAndRoundTrips) {
  EXPECT_EQ(FormatMilliGpu(GetParam().value), GetParam().want);
  if (GetParam().value >= 0) {
    EXPECT_EQ(*ParseMilliGpu(GetParam().want, "f"), GetParam().value);
  }
}
INSTANTIATE_TEST_SUITE_P(Quantity, FormatGpu,
                         ::testing::Values(FormatCase{1500, "1.5"}, FormatCase{2000, "2"},
                                           FormatCase{1, "0.001"}, FormatCase{250, "0.25"},
                                           FormatCase{0, "0"}, FormatCase{-500, "-0.5"},
                                           FormatCase{kMax, "9223372036854775.807"}));

}  // namespace
}  // namespace tessera

#include "agent/local/exit_file.h"

#include <string>

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

TEST(ExitFileTest, RoundTrips) {
  for (const ExitRecord& record :
       {ExitRecord{ExitRecord::Kind::kExit, 0}, ExitRecord{ExitRecord::Kind::kExit, 255},
        ExitRecord{ExitRecord::Kind::kSignal, 9}, ExitRecord{ExitRecord::Kind::kExecError, 2},
        ExitRecord{ExitRecord::Kind::kNotStarted, 0}}) {
    const std::string text = FormatExitFile(record);
    std::optional<ExitRecord> parsed = ParseExitFile(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(parsed->kind, record.kind);
    EXPECT_EQ(parsed->value, record.value);
  }
  EXPECT_EQ(FormatExitFile({ExitRecord::Kind::kSignal, 15}), "signal 15\n");
  EXPECT_EQ(FormatExitFile({ExitRecord::Kind::kNotStarted, 0}), "not-started\n");
}

TEST(ExitFileTest, TornOrForeignTextIsNoRecord) {
  for (std::string_view text : {"", "exit 3", "exit \n", "exit -1\n", "exit 3x\n", "quit 3\n",
                                "signal\n", "not-started", "not-started 0\n"}) {
    EXPECT_FALSE(ParseExitFile(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace tessera::agent

#include "agent/common/changed_lines.h"

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

TEST(ChangedLinesTest, ALineIsLoggedWhenItStartsChangesOrReturnsAfterClearing) {
  ChangedLines lines;
  EXPECT_TRUE(lines.Changed("nodes", "connection refused"));
  EXPECT_FALSE(lines.Changed("nodes", "connection refused"));
  EXPECT_TRUE(lines.Changed("jobs", "connection refused")) << "keys are separate";
  EXPECT_TRUE(lines.Changed("nodes", "HTTP 500"));
  EXPECT_FALSE(lines.Changed("nodes", "")) << "clearing logs nothing";
  EXPECT_FALSE(lines.Changed("nodes", ""));
  EXPECT_TRUE(lines.Changed("nodes", "HTTP 500")) << "logged again after it cleared";
}

}  // namespace
}  // namespace tessera::agent

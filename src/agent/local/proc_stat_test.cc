#include "agent/local/proc_stat.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

TEST(ProcStatTest, ParsesFieldsAfterANameWithSpacesAndParentheses) {
  const std::string text =
      "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 "
      "1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
  absl::StatusOr<ProcStat> stat = ParseProcStat(text);
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->pgrp, 4242);
  EXPECT_EQ(stat->session, 4242);
  EXPECT_EQ(stat->start_ticks, 987654u);
}

TEST(ProcStatTest, RejectsTruncatedOrGarbledText) {
  for (const std::string text : {"", "12 (x", "12 (x) S 1 2 3",
                                 "12 (x) S a 2 3 0 0 0 0 0 0 0 0 "
                                 "0 0 0 0 0 0 0 0 0 0 0 0"}) {
    EXPECT_EQ(ParseProcStat(text).status().code(), absl::StatusCode::kDataLoss) << text;
  }
}

TEST(ProcStatTest, ReadsThisProcess) {
  absl::StatusOr<ProcStat> stat = ReadProcStat(::getpid());
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->ppid, ::getppid());
  EXPECT_GT(stat->start_ticks, 0u);
  absl::StatusOr<ProcStat> again = ReadProcStat(::getpid());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->start_ticks, stat->start_ticks);
}

TEST(ProcStatTest, MissingProcessIsNotFound) {
  EXPECT_EQ(ReadProcStat(::getpid(), "/nonexistent-proc").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ProcStatTest, BootIdIsStable) {
  absl::StatusOr<std::string> a = ReadBootId();
  absl::StatusOr<std::string> b = ReadBootId();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->size(), 36u);
  EXPECT_EQ(*a, *b);
}

}  // namespace
}  // namespace tessera::agent

#include "cli/table.h"

#include "gtest/gtest.h"

namespace tessera::cli {
namespace {

TEST(TableTest, AlignsColumnsAndLeavesTheLastUnpadded) {
  Table table({"ID", "NAME", "PHASE"});
  table.AddRow({"1", "train-resnet", "Running"});
  table.AddRow({"12", "x", ""});
  EXPECT_EQ(table.Render(),
            "ID   NAME           PHASE\n"
            "1    train-resnet   Running\n"
            "12   x\n");
}

TEST(TableTest, HeaderOnlyWhenEmpty) { EXPECT_EQ(Table({"A", "B"}).Render(), "A   B\n"); }

TEST(TableTest, PadsShortRowsAndDropsExtraCells) {
  Table table({"A", "B"});
  table.AddRow({"only"});
  table.AddRow({"1", "2", "3"});
  EXPECT_EQ(table.Render(), "A      B\nonly\n1      2\n");
}

TEST(TableTest, CountsUtf8CharactersNotBytes) {
  Table table({"MESSAGE", "X"});
  table.AddRow({"main-0 \xE2\x86\x92 host", "1"});  // "→" is 3 bytes, 1 character
  table.AddRow({"abc", "2"});
  EXPECT_EQ(table.Render(),
            "MESSAGE         X\n"
            "main-0 \xE2\x86\x92 host   1\n"
            "abc             2\n");
}

TEST(TableTest, ControlCharactersCannotBreakTheLayout) {
  Table table({"NAME", "X"});
  table.AddRow({"evil\n\x1b[31mname", "1"});
  EXPECT_EQ(table.Render(), "NAME             X\nevil  [31mname   1\n");
}

TEST(TableTest, LaterRowsKeepTheWidths) {
  Table table({"ID", "PHASE", "AGE"});
  table.AddRow({"1", "Pending", "5s"});
  EXPECT_EQ(FormatRow({"1", "Running", "9s"}, table.Widths()), "1    Running   9s\n");
  EXPECT_EQ(FormatRow({"1234", "Succeeded", "9s"}, table.Widths()), "1234   Succeeded   9s\n");
}

}  // namespace
}  // namespace tessera::cli

#include "store/key_range.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace tessera::store {
namespace {

TEST(PrefixEndTest, IncrementsTheLastByteThatCan) {
  struct Case {
    std::string prefix;
    std::optional<std::string> end;
  };
  const Case cases[] = {
      {"/jobs/", "/jobs0"},
      {"a", "b"},
      {std::string("a\xff"), "b"},
      {std::string("a\xff\xff"), "b"},
      {std::string("\xff"), std::nullopt},
      {"", std::nullopt},
      {std::string("a\x7f"), std::string("a\x80")},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PrefixEnd(c.prefix), c.end) << "prefix \"" << c.prefix << "\"";
  }
}

TEST(HasPrefixTest, MatchesWholePrefixOnly) {
  EXPECT_TRUE(HasPrefix("/jobs/1", "/jobs/"));
  EXPECT_TRUE(HasPrefix("/jobs/1", ""));
  EXPECT_TRUE(HasPrefix("/jobs/", "/jobs/"));
  EXPECT_FALSE(HasPrefix("/jobsx", "/jobs/"));
  EXPECT_FALSE(HasPrefix("/job", "/jobs/"));
}

}  // namespace
}  // namespace tessera::store

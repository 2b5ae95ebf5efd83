#include "agent/kubernetes/watch_event.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::agent::k8s {
namespace {

using ::testing::HasSubstr;

TEST(WatchEventTest, ParsesEveryType) {
  struct Case {
    std::string type;
    WatchEventType expected;
  };
  for (const Case& c : std::vector<Case>{{"ADDED", WatchEventType::kAdded},
                                         {"MODIFIED", WatchEventType::kModified},
                                         {"DELETED", WatchEventType::kDeleted},
                                         {"BOOKMARK", WatchEventType::kBookmark},
                                         {"ERROR", WatchEventType::kError}}) {
    absl::StatusOr<WatchEvent> event = ParseWatchEvent(
        R"({"type":")" + c.type + R"(","object":{"metadata":{"resourceVersion":"42"}}})");
    ASSERT_TRUE(event.ok()) << event.status();
    EXPECT_EQ(event->type, c.expected);
    EXPECT_EQ(ResourceVersionOf(event->object), "42");
  }
}

TEST(WatchEventTest, RefusesMalformedLines) {
  struct Case {
    std::string line;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"", "not a JSON object"},
      {"[1]", "not a JSON object"},
      {R"({"type":"ADDED"})", "object: missing"},
      {R"({"type":"ADDED","object":[]})", "object: missing"},
      {R"({"type":"RENAMED","object":{}})", "unknown type"},
      {R"({"type":7,"object":{}})", "type: must be a string"},
      {R"({"type":"ADDED","object":{}} trailing)", "not a JSON object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    absl::StatusOr<WatchEvent> event = ParseWatchEvent(c.line);
    ASSERT_FALSE(event.ok());
    EXPECT_EQ(event.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(event.status().message()), HasSubstr(c.error));
  }
}

TEST(ObjectListTest, ReadsItemsAndResourceVersion) {
  absl::StatusOr<ObjectList> list = ParseObjectList(
      R"({"kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[{"a":1},2,{"b":2}]})",
      "nodes");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "7");
  EXPECT_EQ(list->items.size(), 2u);  // the entry that is not an object is left out
  absl::StatusOr<ObjectList> empty = ParseObjectList(R"({"metadata":{}})", "pods");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
  EXPECT_FALSE(ParseObjectList(R"({"items":{}})", "pods").ok());
  EXPECT_FALSE(ParseObjectList("nope", "pods").ok());
  EXPECT_EQ(ResourceVersionOf(Json::parse(R"({"metadata":{"resourceVersion":7}})")), "");
}

}  // namespace
}  // namespace tessera::agent::k8s

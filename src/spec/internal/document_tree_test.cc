#include "spec/internal/document_tree.h"

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::spec::internal {
namespace {

using ::testing::HasSubstr;

// "scalar@line:column" for scalars, a bracketed listing for collections.
std::string Show(const DocNode* n) {
  const std::string at =
      "@" + std::to_string(n->position.line) + ":" + std::to_string(n->position.column);
  switch (n->kind) {
    case DocNode::Kind::kNull:
      return "null" + at;
    case DocNode::Kind::kScalar:
      return n->scalar + at;
    case DocNode::Kind::kSequence: {
      std::string out = "[" + at;
      for (const DocNode* item : n->items) out += " " + Show(item);
      return out + "]";
    }
    case DocNode::Kind::kMapping: {
      std::string out = "{" + at;
      for (const auto& [key, value] : n->entries) out += " " + Show(key) + "=" + Show(value);
      return out + "}";
    }
  }
  return "?";
}

std::string ShowYaml(std::string_view text) {
  absl::StatusOr<DocumentTree> tree = ParseYamlTree(text, DocumentLimits{});
  if (!tree.ok()) return std::string(tree.status().message());
  return tree->root() == nullptr ? "<none>" : Show(tree->root());
}

std::string ShowJson(std::string_view text) {
  absl::StatusOr<DocumentTree> tree = ParseJsonTree(text, DocumentLimits{});
  if (!tree.ok()) return std::string(tree.status().message());
  return Show(tree->root());
}

TEST(DocumentTreeTest, YamlNodesAndPositions) {
  EXPECT_EQ(ShowYaml("a: 1\nb: [x, 'y']\nc:\n  d: ~\n"),
            "{@1:1 a@1:1=1@1:4 b@2:1=[@2:4 x@2:5 y@2:8] c@3:1={@4:3 d@4:3=null@4:3}}");
  EXPECT_EQ(ShowYaml(""), "<none>");
  EXPECT_EQ(ShowYaml("a: &x [1]\nb: *x\n"), "{@1:1 a@1:1=[@1:4 1@1:8] b@2:1=[@1:4 1@1:8]}");
}

TEST(DocumentTreeTest, JsonNodesAndPositions) {
  EXPECT_EQ(ShowJson("{\"a\": 1,\n \"b\": [true, \"x\\\"y\", -2.5e3, null],\n\t\"c\": {}}"),
            "{@1:1 a@1:2=1@1:7 b@2:2=[@2:7 true@2:8 x\"y@2:14 -2.5e3@2:22 null@2:30] "
            "c@3:2={@3:7}}");
  EXPECT_EQ(ShowJson("  7 "), "7@1:3");
  EXPECT_EQ(ShowJson("\"\\\\\""), "\\@1:1");
}

// The same text read as JSON and as YAML gives the same tree.
TEST(DocumentTreeTest, JsonAndYamlTreesAgree) {
  for (std::string_view text :
       {"{\"a\": [1, 2.50, {\"b\": null}], \"c\": \"\\u00e9\", \"d\": false}",
        "{\n  \"k\": {\n    \"x\": -0.5e-3\n  }\n}", "[]", "{}"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ShowJson(text), ShowYaml(text));
  }
}

TEST(DocumentTreeTest, Limits) {
  DocumentLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(ParseYamlTree("a: {b: [1]}", limits).ok());
  EXPECT_THAT(ParseYamlTree("a: {b: [[1]]}", limits).status().message(),
              HasSubstr("1:9: nesting is deeper than the limit of 3"));
  EXPECT_TRUE(ParseJsonTree("{\"a\": {\"b\": [1]}}", limits).ok());
  EXPECT_THAT(ParseJsonTree("{\"a\": {\"b\": [[1]]}}", limits).status().message(),
              HasSubstr("1:14: nesting is deeper than the limit of 3"));
  limits = DocumentLimits{};
  limits.max_nodes = 7;
  EXPECT_TRUE(ParseYamlTree("a: &x [1, 2]\nb: 1", limits).ok());  // 7 nodes
  EXPECT_THAT(ParseYamlTree("a: &x [1, 2]\nb: *x", limits).status().message(),
              HasSubstr("2:4: the document has more than 7 nodes"));
  EXPECT_THAT(ParseJsonTree("[1, 2, 3, 4, 5, 6, 7]", limits).status().message(),
              HasSubstr("the document has more than 7 nodes"));
}

TEST(DocumentTreeTest, CheckText) {
  const DocumentLimits limits;
  EXPECT_TRUE(CheckText("plain ascii\ttab\r\n", limits).ok());
  EXPECT_TRUE(CheckText("\xEF\xBB\xBFkey: caf\xC3\xA9 \xE2\x80\xA6 \xF0\x9F\x9A\x80", limits).ok());
  for (std::string_view bad : {std::string_view("\x80", 1), std::string_view("\xC0\xAF", 2),
                               std::string_view("\xED\xA0\x80", 3),      // a surrogate
                               std::string_view("\xF4\x90\x80\x80", 4),  // beyond U+10FFFF
                               std::string_view("\xE2\x80", 2),          // truncated
                               std::string_view("a\x1b[0m", 5), std::string_view("\0", 1)}) {
    EXPECT_FALSE(CheckText(bad, limits).ok()) << testing::PrintToString(bad);
  }
  EXPECT_EQ(CheckText("ab\ncd\x01", limits).message(),
            "2:3: the document is not UTF-8 text (byte 0x01 at offset 5)");
}

TEST(DocumentTreeTest, PositionOfOffset) {
  const std::string_view text = "ab\ncd\n\nef";
  EXPECT_EQ(PositionOfOffset(text, 0).line, 1);
  EXPECT_EQ(PositionOfOffset(text, 0).column, 1);
  EXPECT_EQ(PositionOfOffset(text, 4).line, 2);
  EXPECT_EQ(PositionOfOffset(text, 4).column, 2);
  EXPECT_EQ(PositionOfOffset(text, 7).line, 4);
  EXPECT_EQ(PositionOfOffset(text, 100).column, 3);
  EXPECT_EQ(AtPosition(Position{}, "m"), "m");
  EXPECT_EQ(AtPosition(Position{3, 4}, "m"), "3:4: m");
}

}  // namespace
}  // namespace tessera::spec::internal

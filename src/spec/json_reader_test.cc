#include "spec/json_reader.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::spec {
namespace {

// Reads any value, as a tree decoder would, into a compact text: strings quoted, scalars by
// their literal text. "" once the reader has failed.
std::string Echo(JsonReader& in) {
  std::string out;
  std::string text;
  if (in.AtNull()) return "null";
  if (in.BeginArrayIfNext()) {
    out = "[";
    while (in.NextItem()) out += Echo(in) + ",";
    return in.ok() ? out + "]" : "";
  }
  if (!in.ok()) return "";
  std::string_view key;
  JsonReader probe = in;  // a copy tells objects from scalars without consuming
  if (probe.BeginObject()) {
    in.BeginObject();
    out = "{";
    while (in.NextKey(key)) {
      const std::string name(key);
      out += name + ":" + Echo(in) + ",";
    }
    return in.ok() ? out + "}" : "";
  }
  probe = in;
  if (probe.String(text)) {
    in.String(text);
    return "\"" + text + "\"";
  }
  return in.Scalar(text) ? text : "";
}

std::string ReadAll(std::string_view text) {
  JsonReader in(text);
  const std::string out = Echo(in);
  return in.Finish() ? out : "<fails>";
}

TEST(JsonReaderTest, ReadsValuesAndTheirLiteralText) {
  EXPECT_EQ(ReadAll(R"( {"a": [1, -0.5e+3, true, false, null, "x"], "b": {}, "c": []} )"),
            R"({a:[1,-0.5e+3,true,false,null,"x",],b:{},c:[],})");
  EXPECT_EQ(ReadAll("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), "\"\"\\/\b\f\n\r\t\"");
  EXPECT_EQ(ReadAll(R"("\u00e9\u4E2D\ud83d\ude80")"), "\"\u00e9\u4e2d\U0001F680\"");
  EXPECT_EQ(ReadAll("\"ü😀\""), "\"ü😀\"");
}

TEST(JsonReaderTest, RefusesWhatStrictJsonRefuses) {
  for (std::string_view text : {"",
                                "{",
                                "[1,]",
                                "{\"a\":1,}",
                                "{\"a\" 1}",
                                "{a:1}",
                                "[1 2]",
                                "01",
                                "1.",
                                "-",
                                ".5",
                                "1e",
                                "+1",
                                "tru",
                                "nul",
                                "'a'",
                                "\"a",
                                "\"\\x\"",
                                "\"\\u12\"",
                                "\"\\ud800\"",
                                "\"\\udc00\"",
                                "\"\\ud800\\u0041\"",
                                "\"a\nb\"",
                                "\"\xC3\"",
                                "\"\xED\xA0\x80\"",
                                "\"\xC0\xAF\"",
                                "// c\n1",
                                "1 2",
                                "[1]]",
                                "\xEF\xBB\xBF{}"}) {
    EXPECT_EQ(ReadAll(text), "<fails>") << text;
  }
}

TEST(JsonReaderTest, TypedReadsFailOnOtherValues) {
  int64_t n = 0;
  EXPECT_TRUE(JsonReader("-42").Integer(n));
  EXPECT_EQ(n, -42);
  EXPECT_FALSE(JsonReader("1.0").Integer(n));
  EXPECT_FALSE(JsonReader("1e3").Integer(n));
  EXPECT_FALSE(JsonReader("9223372036854775808").Integer(n));
  EXPECT_FALSE(JsonReader("\"1\"").Integer(n));
  bool b = false;
  EXPECT_TRUE(JsonReader("true").Bool(b));
  EXPECT_TRUE(b);
  EXPECT_FALSE(JsonReader("\"true\"").Bool(b));
  std::string s;
  EXPECT_FALSE(JsonReader("1").String(s));
  EXPECT_FALSE(JsonReader("null").Scalar(s));
  EXPECT_FALSE(JsonReader("{}").Scalar(s));

  JsonReader in("[1]");
  EXPECT_FALSE(in.BeginObject());
  EXPECT_FALSE(in.ok());  // and it stays failed
  EXPECT_FALSE(in.BeginArray());
}

TEST(JsonReaderTest, CountsNodesAndNotesNulCharacters) {
  JsonReader in(R"({"a": [1, "x\u0000"], "b": null})");
  EXPECT_EQ(Echo(in), "{a:[1,\"x" + std::string(1, '\0') + "\",],b:null,}");
  EXPECT_TRUE(in.Finish());
  EXPECT_EQ(in.nodes(), 7);  // the object, two keys, the array, its two items, null
  EXPECT_TRUE(in.saw_nul());
}

TEST(JsonReaderTest, NestingIsBounded) {
  const std::string deep(JsonReader::kMaxDepth, '[');
  EXPECT_EQ(ReadAll(deep + std::string(JsonReader::kMaxDepth, ']')).substr(0, 2), "[[");
  EXPECT_EQ(ReadAll(deep + "[]" + std::string(JsonReader::kMaxDepth, ']')), "<fails>");
}

}  // namespace
}  // namespace tessera::spec

// JsonReader: strict JSON (RFC 8259) read token by token, for decoders that build their values
// straight from the text instead of from a parsed tree (the stored records read back when the
// control plane starts: ParseRenderedJobJson, server/job_record.h).
//
// It takes what nlohmann-json's strict parser takes, less the UTF-8 byte order mark: no comments,
// no trailing commas, strings in valid UTF-8 without raw control characters, "\u" escapes
// paired into characters (a lone surrogate is refused). Anything else, or a value the decoder
// did not expect, fails the reader for good (ok() turns false and every later read returns
// false); such decoders then read the text again with their full parser, whose error messages
// name the line and the field. Nothing here throws or allocates beyond the strings it returns.
// Nesting deeper than kMaxDepth fails the reader.
//
// Not thread-safe; a reader reads one text, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::spec {

class JsonReader {
 public:
  static constexpr int kMaxDepth = 32;

  explicit JsonReader(std::string_view text) : text_(text) {}

  bool ok() const { return ok_; }
  // Fails the reader: the decoder met a value it does not take. Returns false.
  bool Fail() {
    ok_ = false;
    return false;
  }
  // Values and object keys read so far (a container counts once): the node count of
  // spec/internal/document_tree.h for the same text.
  int64_t nodes() const { return nodes_; }
  // Whether a string or key read so far held a NUL character ("\u0000").
  bool saw_nul() const { return saw_nul_; }

  // Consumes a null and returns true when one is next; false (the reader still ok) otherwise.
  bool AtNull();
  // Consumes the '{' of an object; false (and fails) when something else is next.
  bool BeginObject();
  // The next key of the innermost object: true with `key` (valid until the next read), false
  // once its '}' is consumed or the reader has failed (tell them apart with ok()).
  bool NextKey(std::string_view& key);
  // Consumes the '[' of an array; false (and fails) when something else is next.
  bool BeginArray();
  // Consumes the '[' of an array and returns true when one is next; false (the reader still ok)
  // otherwise.
  bool BeginArrayIfNext();
  // True when the innermost array has another item, to be read next; false once its ']' is
  // consumed or the reader has failed.
  bool NextItem();
  // A string value into `out`.
  bool String(std::string& out);
  // A scalar's text as the document tree keeps it: a string's value, or a number's or boolean's
  // literal text ("8", "0.5", "true"). Null, objects and arrays fail.
  bool Scalar(std::string& out);
  // An integer literal in the range of int64_t ("12", "-3"; not "1.0" or "1e3").
  bool Integer(int64_t& out);
  bool Bool(bool& out);
  // True when the whole text has been read: every container closed, nothing but whitespace left.
  bool Finish();

 private:
  void SkipSpace();
  // The next byte after whitespace; '\0' at the end of the text.
  char Peek();
  // Consumes `literal` ("true", "null", ...) or fails.
  bool Literal(std::string_view literal);
  // Reads the string starting at the '"' under the cursor into `out`.
  bool ReadString(std::string& out);
  // Reads a number starting at the cursor; `literal` points into the text.
  bool ReadNumber(std::string_view& literal);
  // The '{' or '[' under the cursor.
  bool Open(bool object);
  // Consumes the ',' before a member of the innermost container (an object or an array, as
  // `object` says), or its closing bracket (then returns false, the reader still ok).
  bool NextMember(bool object);

  std::string_view text_;
  size_t at_ = 0;
  bool ok_ = true;
  bool saw_nul_ = false;
  int64_t nodes_ = 0;
  // Per open container, innermost last: whether a member has been read yet.
  bool started_[kMaxDepth] = {};
  bool object_[kMaxDepth] = {};
  int depth_ = 0;
  std::string key_;
};

}  // namespace tessera::spec

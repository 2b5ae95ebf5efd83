// Reads strict JSON through nlohmann-json's SAX parser (iterative: no recursion to overflow).
// nlohmann reports no positions to a SAX handler, so the input is read through an iterator
// that counts the bytes consumed; when an event arrives the lexer has just read its token, and
// the token's start is found by scanning back from there. Scalars keep their literal text
// (numbers as written), so the decoder sees what a YAML reading of the same text would give.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "spec/internal/document_error.h"
#include "spec/internal/document_tree.h"

namespace tessera::spec::internal {
namespace {

// A forward iterator over the text that publishes how many bytes have been read.
class CountingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* begin, const char* at, size_t* consumed)
      : begin_(begin), at_(at), consumed_(consumed) {}

  reference operator*() const { return *at_; }
  CountingIterator& operator++() {
    ++at_;
    *consumed_ = static_cast<size_t>(at_ - begin_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const CountingIterator& a, const CountingIterator& b) {
    return a.at_ == b.at_;
  }

 private:
  const char* begin_;
  const char* at_;
  size_t* consumed_;
};

// Line and column of increasing offsets in one pass over the text.
class PositionCursor {
 public:
  explicit PositionCursor(std::string_view text) : text_(text) {}

  Position At(size_t offset) {
    offset = std::min(offset, text_.size());
    if (offset < offset_) {  // never expected; stay correct anyway
      offset_ = 0;
      position_ = Position{1, 1};
    }
    for (; offset_ < offset; ++offset_) {
      if (text_[offset_] == '\n') {
        ++position_.line;
        position_.column = 1;
      } else {
        ++position_.column;
      }
    }
    return position_;
  }

 private:
  std::string_view text_;
  size_t offset_ = 0;
  Position position_{1, 1};
};

bool IsNumberChar(char c) {
  return absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
         c == '+' || c == '-';
}

class TreeBuilder final : public nlohmann::json_sax<nlohmann::json> {
 public:
  TreeBuilder(std::string_view text, const size_t* consumed, DocumentTree& tree,
              const DocumentLimits& limits)
      : text_(text), consumed_(consumed), cursor_(text), tree_(tree), limits_(limits) {}

  const absl::Status& status() const { return status_; }

  // A null mapping value takes its key's position, as in the YAML tree (where an empty value
  // has none of its own).
  bool null() override {
    DocNode* node = Add(DocNode::Kind::kNull, LiteralStart());
    if (node == nullptr) return false;
    if (!open_.empty() && open_.back()->IsMapping()) {
      node->position = open_.back()->entries.back().first->position;
    }
    return true;
  }
  bool boolean(bool) override { return AddLiteral(LiteralStart()); }
  bool number_integer(number_integer_t) override { return AddLiteral(NumberStart()); }
  bool number_unsigned(number_unsigned_t) override { return AddLiteral(NumberStart()); }
  bool number_float(number_float_t, const string_t&) override { return AddLiteral(NumberStart()); }
  bool string(string_t& value) override {
    if (!CheckNoNul(value)) return false;
    DocNode* node = Add(DocNode::Kind::kScalar, StringStart());
    if (node == nullptr) return false;
    node->scalar = std::move(value);
    return true;
  }
  bool binary(binary_t&) override { return true; }  // never produced by a JSON text

  bool start_object(std::size_t) override { return Open(DocNode::Kind::kMapping); }
  bool key(string_t& value) override {
    if (!CheckNoNul(value)) return false;
    DocNode* node = NewNode(DocNode::Kind::kScalar, StringStart());
    if (node == nullptr) return false;
    node->scalar = std::move(value);
    pending_key_.back() = node;
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(DocNode::Kind::kSequence); }
  bool end_array() override { return Close(); }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) override {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 9: <detail>".
    std::string_view detail = e.what();
    if (const size_t at = detail.find("parse error"); at != std::string_view::npos) {
      detail.remove_prefix(at);
      if (const size_t colon = detail.find(": "); colon != std::string_view::npos) {
        detail.remove_prefix(colon + 2);
      }
    }
    status_ = DocumentError(PositionOfOffset(text_, position > 0 ? position - 1 : 0), "",
                            fmt::format("invalid JSON: {}", detail));
    return false;
  }

 private:
  // Starts of the token just read; `*consumed_` is just past it (past one more byte of
  // look-ahead for numbers, unless the text ends there).
  size_t StringStart() const {
    size_t i = *consumed_ >= 2 ? *consumed_ - 2 : 0;  // the byte before the closing quote
    for (; i > 0; --i) {
      if (text_[i] != '"') continue;
      size_t backslashes = 0;
      while (backslashes < i && text_[i - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) break;
    }
    return i;
  }
  size_t NumberStart() const {
    size_t i = *consumed_;
    if (i > 0 && !IsNumberChar(text_[i - 1])) --i;  // the look-ahead byte
    while (i > 0 && IsNumberChar(text_[i - 1])) --i;
    return i;
  }
  size_t LiteralStart() const {
    size_t i = *consumed_;
    while (i > 0 && absl::ascii_isalpha(static_cast<unsigned char>(text_[i - 1]))) --i;
    return i;
  }

  bool CheckNoNul(const std::string& value) {
    if (value.find('\0') == std::string::npos) return true;
    Fail(StringStart(), "NUL characters are not allowed");
    return false;
  }

  bool AddLiteral(size_t start) {
    DocNode* node = Add(DocNode::Kind::kScalar, start);
    if (node == nullptr) return false;
    size_t end = start;
    while (end < text_.size() && (IsNumberChar(text_[end]) ||
                                  absl::ascii_isalpha(static_cast<unsigned char>(text_[end])))) {
      ++end;
    }
    node->scalar = std::string(text_.substr(start, end - start));
    return true;
  }

  DocNode* NewNode(DocNode::Kind kind, size_t start) {
    if (++total_ > limits_.max_nodes) {
      return Fail(start, fmt::format("the document has more than {} nodes", limits_.max_nodes));
    }
    DocNode* node = tree_.NewNode();
    node->kind = kind;
    node->position = cursor_.At(start);
    return node;
  }

  DocNode* Add(DocNode::Kind kind, size_t start) {
    DocNode* node = NewNode(kind, start);
    if (node == nullptr) return nullptr;
    if (open_.empty()) {
      tree_.set_root(node);
    } else if (open_.back()->IsSequence()) {
      open_.back()->items.push_back(node);
    } else {
      open_.back()->entries.emplace_back(pending_key_.back(), node);
    }
    return node;
  }

  bool Open(DocNode::Kind kind) {
    const size_t start = *consumed_ > 0 ? *consumed_ - 1 : 0;  // the bracket just read
    if (static_cast<int>(open_.size()) >= limits_.max_depth) {
      Fail(start, fmt::format("nesting is deeper than the limit of {}", limits_.max_depth));
      return false;
    }
    DocNode* node = Add(kind, start);
    if (node == nullptr) return false;
    open_.push_back(node);
    pending_key_.push_back(nullptr);
    return true;
  }

  bool Close() {
    open_.pop_back();
    pending_key_.pop_back();
    return true;
  }

  DocNode* Fail(size_t offset, std::string_view message) {
    status_ = DocumentError(cursor_.At(offset), "", message);
    return nullptr;
  }

  std::string_view text_;
  const size_t* consumed_;
  PositionCursor cursor_;
  DocumentTree& tree_;
  const DocumentLimits& limits_;
  std::vector<DocNode*> open_;
  std::vector<const DocNode*> pending_key_;
  int64_t total_ = 0;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<DocumentTree> ParseJsonTree(std::string_view text, const DocumentLimits& limits) {
  DocumentTree tree;
  size_t consumed = 0;
  TreeBuilder builder(text, &consumed, tree, limits);
  const CountingIterator begin(text.data(), text.data(), &consumed);
  const CountingIterator end(text.data(), text.data() + text.size(), &consumed);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(begin, end, &builder);
  } catch (const std::exception& e) {  // the SAX parser reports through parse_error; be safe
    return DocumentError(Position{}, "", fmt::format("invalid JSON: {}", e.what()));
  }
  if (!ok) {
    if (!builder.status().ok()) return builder.status();
    return DocumentError(Position{}, "", "invalid JSON");
  }
  return tree;
}

}  // namespace tessera::spec::internal

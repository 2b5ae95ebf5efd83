// DocumentTree: a parsed YAML or JSON document as plain nodes, before any schema is applied.
//
// Both syntaxes are read into this one tree (yaml-cpp for YAML, nlohmann-json for JSON), so
// the job decoder sees identical input whichever syntax a client used. A node is null, a
// scalar (its text: JSON numbers and booleans keep their literal text, "8", "0.5", "true"), a
// sequence or a mapping (entries in document order, duplicates kept for the decoder to
// reject). Every node carries the 1-based line and column where it starts (0 when unknown);
// a null mapping value carries its key's (YAML marks an empty value at the next token).
//
// The builders enforce the limits of DocumentLimits while parsing, so hostile input (huge,
// deeply nested, alias bombs, binary) ends in an InvalidArgument error, never a stack overflow
// or an unbounded allocation. Errors read "LINE:COLUMN: message".
// Not a public API. Not thread-safe; a tree is immutable once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace tessera::spec::internal {

struct DocumentLimits {
  size_t max_bytes = 1 << 20;   // size of the text
  int max_depth = 32;           // nesting of sequences and mappings
  int64_t max_nodes = 100'000;  // nodes, counting every use of a YAML alias in full
};

struct Position {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  bool IsKnown() const { return line > 0; }
};

struct DocNode {
  enum class Kind { kNull, kScalar, kSequence, kMapping };

  Kind kind = Kind::kNull;
  Position position;
  std::string scalar;                                              // kScalar
  std::vector<const DocNode*> items;                               // kSequence
  std::vector<std::pair<const DocNode*, const DocNode*>> entries;  // kMapping: key, value

  bool IsNull() const { return kind == Kind::kNull; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsSequence() const { return kind == Kind::kSequence; }
  bool IsMapping() const { return kind == Kind::kMapping; }
};

// Owns the nodes; nodes point at each other (a YAML alias shares its anchor's node), never in
// a cycle.
class DocumentTree {
 public:
  DocumentTree() = default;
  DocumentTree(const DocumentTree&) = delete;
  DocumentTree& operator=(const DocumentTree&) = delete;
  DocumentTree(DocumentTree&&) = default;
  DocumentTree& operator=(DocumentTree&&) = default;

  const DocNode* root() const { return root_; }
  void set_root(const DocNode* root) { root_ = root; }
  DocNode* NewNode() { return &nodes_.emplace_back(); }

 private:
  std::deque<DocNode> nodes_;
  const DocNode* root_ = nullptr;
};

// "LINE:COLUMN: message", or just "message" when the position is unknown.
std::string AtPosition(Position position, std::string_view message);

// The 1-based line and column of byte `offset` of `text`; columns count bytes.
Position PositionOfOffset(std::string_view text, size_t offset);

// Rejects text that is over the size limit, not UTF-8, or holds control characters other than
// tab, line feed and carriage return (binary input).
absl::Status CheckText(std::string_view text, const DocumentLimits& limits);

// Parses one YAML document (JSON included: JSON is YAML). An empty document yields a tree whose
// root is null. REQUIRES: CheckText(text) is OK.
absl::StatusOr<DocumentTree> ParseYamlTree(std::string_view text, const DocumentLimits& limits);

// Parses strict JSON (RFC 8259). REQUIRES: CheckText(text) is OK.
absl::StatusOr<DocumentTree> ParseJsonTree(std::string_view text, const DocumentLimits& limits);

// Copies a node that yaml-cpp has loaded (part of a larger file) into a tree, with the
// positions of its marks; an alias is copied in full. Refused past limits.max_depth and
// limits.max_nodes (max_bytes does not apply).
absl::StatusOr<DocumentTree> CopyYamlNode(const YAML::Node& node, const DocumentLimits& limits);

}  // namespace tessera::spec::internal

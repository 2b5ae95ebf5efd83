// CopyYamlNode (document_tree.h): a loaded yaml-cpp node as a DocumentTree.
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "spec/internal/document_error.h"
#include "spec/internal/document_tree.h"
#include "yaml-cpp/yaml.h"

namespace tessera::spec::internal {
namespace {

Position PositionOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0 || mark.column < 0) return Position{};
  return Position{mark.line + 1, mark.column + 1};
}

class NodeCopier {
 public:
  NodeCopier(DocumentTree& tree, const DocumentLimits& limits) : tree_(tree), limits_(limits) {}

  // `at`: the position to give a null node (its key's, as ParseYamlTree does).
  absl::StatusOr<const DocNode*> Copy(const YAML::Node& from, int depth, Position at) {
    if (++nodes_ > limits_.max_nodes) {
      return DocumentError(PositionOf(from), "",
                           fmt::format("more than {} values", limits_.max_nodes));
    }
    DocNode* node = tree_.NewNode();
    node->position = PositionOf(from);
    if (from.IsNull() || !from.IsDefined()) {
      node->kind = DocNode::Kind::kNull;
      if (at.IsKnown()) node->position = at;
      return node;
    }
    if (from.IsScalar()) {
      node->kind = DocNode::Kind::kScalar;
      node->scalar = from.Scalar();
      return node;
    }
    if (depth >= limits_.max_depth) {
      return DocumentError(node->position, "",
                           fmt::format("nesting too deep (at most {} levels)", limits_.max_depth));
    }
    if (from.IsSequence()) {
      node->kind = DocNode::Kind::kSequence;
      for (const YAML::Node& item : from) {
        absl::StatusOr<const DocNode*> copy = Copy(item, depth + 1, Position{});
        if (!copy.ok()) return copy.status();
        node->items.push_back(*copy);
      }
      return node;
    }
    node->kind = DocNode::Kind::kMapping;
    for (const auto& entry : from) {
      absl::StatusOr<const DocNode*> key = Copy(entry.first, depth + 1, Position{});
      if (!key.ok()) return key.status();
      absl::StatusOr<const DocNode*> value = Copy(entry.second, depth + 1, (*key)->position);
      if (!value.ok()) return value.status();
      node->entries.emplace_back(*key, *value);
    }
    return node;
  }

 private:
  DocumentTree& tree_;
  const DocumentLimits& limits_;
  int64_t nodes_ = 0;
};

}  // namespace

absl::StatusOr<DocumentTree> CopyYamlNode(const YAML::Node& node, const DocumentLimits& limits) {
  DocumentTree tree;
  NodeCopier copier(tree, limits);
  absl::StatusOr<const DocNode*> root = copier.Copy(node, 0, Position{});
  if (!root.ok()) return root.status();
  tree.set_root(*root);
  return tree;
}

}  // namespace tessera::spec::internal

// Reads YAML through yaml-cpp's event parser rather than YAML::Load, so that the limits are
// enforced while parsing: the builder stops yaml-cpp's recursive descent at max_depth (far
// below the depth where its own guard or the stack would give out), and an alias counts the
// full size of the node it repeats, so a "billion laughs" document fails early instead of
// being expanded by the decoder.
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "spec/internal/document_error.h"
#include "spec/internal/document_tree.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace tessera::spec::internal {
namespace {

// Thrown by the builder through yaml-cpp's parser to stop it; caught in ParseYamlTree.
struct Stop {
  Position position;
  std::string message;
};

Position ToPosition(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0 || mark.column < 0) return Position{};
  return Position{mark.line + 1, mark.column + 1};
}

class TreeBuilder final : public YAML::EventHandler {
 public:
  TreeBuilder(DocumentTree& tree, const DocumentLimits& limits) : tree_(tree), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    DocNode* node = NewNode(DocNode::Kind::kNull, mark);
    // An empty value ("queue:") is marked where the next token starts, often on a later
    // line; its key is the better place to point at.
    if (!stack_.empty() && stack_.back().pending_key != nullptr) {
      node->position = stack_.back().pending_key->position;
    }
    Finish(Attach(node), anchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                const std::string& value) override {
    if (value.find('\0') != std::string::npos) {
      throw Stop{ToPosition(mark), "NUL characters are not allowed"};
    }
    DocNode* node = NewNode(DocNode::Kind::kScalar, mark);
    node->scalar = value;
    Finish(Attach(node), anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw Stop{ToPosition(mark), "unknown alias"};
    if (it->second.size < 0) {
      throw Stop{ToPosition(mark), "an alias must not refer to a node that contains it"};
    }
    Count(it->second.size, mark);
    Attach(it->second.node);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    Open(NewNode(DocNode::Kind::kSequence, mark), anchor, mark);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    Open(NewNode(DocNode::Kind::kMapping, mark), anchor, mark);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    DocNode* node;
    YAML::anchor_t anchor;
    const DocNode* pending_key = nullptr;  // mappings: the key waiting for its value
    int64_t size = 1;                      // nodes below, aliases counted in full
  };
  struct Anchored {
    const DocNode* node;
    int64_t size;  // -1 while the node is still open
  };

  DocNode* NewNode(DocNode::Kind kind, const YAML::Mark& mark) {
    Count(1, mark);
    DocNode* node = tree_.NewNode();
    node->kind = kind;
    node->position = ToPosition(mark);
    return node;
  }

  void Count(int64_t nodes, const YAML::Mark& mark) {
    total_ += nodes;
    if (!stack_.empty()) stack_.back().size += nodes;
    if (total_ > limits_.max_nodes) {
      throw Stop{ToPosition(mark),
                 fmt::format("the document has more than {} nodes (aliases count in full)",
                             limits_.max_nodes)};
    }
  }

  // Places `node` in the collection being built (or as the root).
  const DocNode* Attach(const DocNode* node) {
    if (stack_.empty()) {
      tree_.set_root(node);
      return node;
    }
    Frame& parent = stack_.back();
    if (parent.node->kind == DocNode::Kind::kSequence) {
      parent.node->items.push_back(node);
    } else if (parent.pending_key == nullptr) {
      parent.pending_key = node;
    } else {
      parent.node->entries.emplace_back(parent.pending_key, node);
      parent.pending_key = nullptr;
    }
    return node;
  }

  // Records a complete node under its anchor, with its size.
  void Finish(const DocNode* node, YAML::anchor_t anchor, int64_t size = 1) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{node, size};
  }

  void Open(DocNode* node, YAML::anchor_t anchor, const YAML::Mark& mark) {
    Attach(node);
    if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
      throw Stop{ToPosition(mark),
                 fmt::format("nesting is deeper than the limit of {}", limits_.max_depth)};
    }
    // Registered now, still open, so that an alias inside the node finds it and is refused.
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{node, -1};
    stack_.push_back(Frame{node, anchor});
  }

  void Close() {
    const Frame frame = stack_.back();
    stack_.pop_back();
    if (!stack_.empty()) stack_.back().size += frame.size - 1;  // Count() added the 1 already
    Finish(frame.node, frame.anchor, frame.size);
  }

  DocumentTree& tree_;
  const DocumentLimits& limits_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  int64_t total_ = 0;
};

// Refuses a second document in the stream.
class SecondDocument final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    throw Stop{ToPosition(mark), "only one document is allowed (found a second one)"};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

absl::StatusOr<DocumentTree> ParseYamlTree(std::string_view text, const DocumentLimits& limits) {
  DocumentTree tree;
  std::istringstream in{std::string(text)};
  try {
    YAML::Parser parser(in);
    TreeBuilder builder(tree, limits);
    if (!parser.HandleNextDocument(builder)) return tree;  // empty stream: null root
    SecondDocument second;
    parser.HandleNextDocument(second);
  } catch (const Stop& stop) {
    return DocumentError(stop.position, "", stop.message);
  } catch (const YAML::Exception& e) {
    return DocumentError(ToPosition(e.mark), "", fmt::format("invalid YAML: {}", e.msg));
  } catch (const std::exception& e) {
    return DocumentError(Position{}, "", fmt::format("invalid YAML: {}", e.what()));
  }
  return tree;
}

}  // namespace tessera::spec::internal

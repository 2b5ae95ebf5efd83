#include "spec/queue_document.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/cord.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "spec/internal/shown_bound.h"
#include "spec/request_error.h"
#include "yaml-cpp/yaml.h"

namespace tessera::spec {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 32;  // queue tree levels
// yaml-cpp parses flow collections recursively. The deepest tree renders as JSON with two
// brackets a level ("children": [{...}]) inside {"queues": [...]}, plus a quota map.
constexpr int kMaxFlowDepth = 2 * (kMaxDepth + 1) + 2;
constexpr size_t kMaxNameLength = 63;
// The payload that remembers the line of the node at fault.
constexpr char kLinePayload[] = "type.tessera.io/tessera.api.DocumentLine";

absl::Status Error(std::string_view field, std::string_view what) {
  return spec::FieldError(field, what);
}

// The 1-based line of `node`; 0 when it has no mark.
int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? 0 : mark.line + 1;
}

// An error of `field` at `node`, whose line QueueErrorLine reads back.
absl::Status Error(const YAML::Node& node, std::string_view field, std::string_view what) {
  absl::Status status = Error(field, what);
  if (const int line = LineOf(node); line > 0) {
    status.SetPayload(kLinePayload, absl::Cord(std::to_string(line)));
  }
  return status;
}

// A top-level key as a field: the empty key is shown as written, "".
std::string KeyField(const std::string& key) { return key.empty() ? "\"\"" : key; }

absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) return Error(node, field, "must be a single value");
  if (node.Tag() != "?" && node.Tag() != "!" && !node.Tag().empty()) {
    return Error(node, field, fmt::format("YAML tags are not allowed ({})", node.Tag()));
  }
  return node.as<std::string>();
}

absl::Status CheckName(std::string_view name, const std::string& field,
                       const YAML::Node& node = YAML::Node()) {
  const bool valid =
      !name.empty() && name.size() <= kMaxNameLength &&
      std::isalnum(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (valid) return absl::OkStatus();
  return Error(node, field,
               fmt::format("\"{}\" is not a queue name (1 to {} letters, digits, '-', '_' "
                           "or '.', starting with a letter or digit)",
                           name, kMaxNameLength));
}

// Whether `text` is valid UTF-8 without control characters, so that it survives JSON (the
// stored tree, the API's answers) both ways.
bool IsPrintableUtf8(const std::string& text) {
  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; })) {
    return false;
  }
  try {
    (void)Json(text).dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

// Reads queues with one table of keys (camelCase, spelled in the options' style), recording
// the line where each queue starts.
class QueueReader {
 public:
  explicit QueueReader(const QueueTreeOptions& options) : options_(options) {}

  absl::Status ParseList(const YAML::Node& list, const std::string& field,
                         const std::string& parent, int depth) {
    if (!list.IsSequence()) return Error(list, field, "must be a list of queues");
    if (depth > kMaxDepth) {
      return Error(list, field, fmt::format("nests deeper than {} levels", kMaxDepth));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (absl::Status s = ParseQueue(list[i], fmt::format("{}[{}]", field, i), parent, depth);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  // The keys one queue shares in a tree and alone: quotas, weight, priority, ordering.
  absl::Status ParseQueueFields(const YAML::Node& node, const std::string& field,
                                QueueSpec& queue) const {
    for (const auto& [key, target] : std::initializer_list<std::pair<const char*, ResourceList*>>{
             {"guaranteed", &queue.guaranteed},
             {"borrowingLimit", &queue.borrowing_limit},
             {"lendingLimit", &queue.lending_limit}}) {
      const std::string name = Key(key);
      if (!node[name]) continue;
      absl::StatusOr<ResourceList> list =
          ParseResources(node[name], fmt::format("{}.{}", field, name));
      if (!list.ok()) return list.status();
      *target = *std::move(list);
    }
    if (node["weight"]) {
      absl::StatusOr<int32_t> weight =
          Int(node["weight"], field + ".weight", 1, options_.max_weight);
      if (!weight.ok()) return weight.status();
      queue.weight = *weight;
    }
    if (node["priority"]) {
      absl::StatusOr<int32_t> priority =
          Int(node["priority"], field + ".priority", std::numeric_limits<int32_t>::min(),
              std::numeric_limits<int32_t>::max());
      if (!priority.ok()) return priority.status();
      queue.priority = *priority;
    }
    if (node["ordering"]) {
      absl::StatusOr<QueueOrdering> ordering = ParseOrdering(node["ordering"], field + ".ordering");
      if (!ordering.ok()) return ordering.status();
      queue.ordering = *ordering;
    }
    return absl::OkStatus();
  }

  // The keys of a queue in a tree, in the document's style.
  absl::Status CheckKeys(const YAML::Node& node, const std::string& field,
                         std::initializer_list<std::string_view> known) const {
    if (!node.IsMap()) return Error(node, field, "must be a mapping");
    for (const auto& entry : node) {
      absl::StatusOr<std::string> key = Scalar(entry.first, field);
      if (!key.ok()) return key.status();
      if (std::none_of(known.begin(), known.end(),
                       [&](std::string_view k) { return IsSpelledAs(k, *key, options_.style); })) {
        return Error(entry.first, fmt::format("{}.{}", field, *key), "unknown key");
      }
    }
    return absl::OkStatus();
  }

  DecodedQueueTree Take() { return std::move(tree_); }

 private:
  std::string Key(std::string_view camel) const { return StyleKey(camel, options_.style); }

  absl::Status ParseQueue(const YAML::Node& node, const std::string& field,
                          const std::string& parent, int depth) {
    if (absl::Status s = CheckKeys(node, field,
                                   {"name", "children", "guaranteed", "borrowingLimit",
                                    "lendingLimit", "weight", "priority", "ordering"});
        !s.ok()) {
      return s;
    }
    QueueSpec queue{.parent = parent};
    if (!node["name"]) return Error(node, field + ".name", "required");
    absl::StatusOr<std::string> name = Scalar(node["name"], field + ".name");
    if (!name.ok()) return name.status();
    if (absl::Status s = CheckName(*name, field + ".name", node["name"]); !s.ok()) return s;
    if (!names_.insert(*name).second) {
      return Error(node["name"], field + ".name",
                   fmt::format("queue \"{}\" is given twice", *name));
    }
    if (tree_.queues.size() == kMaxQueues) {
      return Error(node, field, fmt::format("more than {} queues", kMaxQueues));
    }
    queue.name = *name;
    if (absl::Status s = ParseQueueFields(node, field, queue); !s.ok()) return s;
    tree_.queues.push_back(std::move(queue));
    tree_.lines.push_back(LineOf(node));
    if (!node["children"]) return absl::OkStatus();
    return ParseList(node["children"], field + ".children", *name, depth + 1);
  }

  absl::StatusOr<int32_t> Int(const YAML::Node& node, const std::string& field, int32_t min,
                              int32_t max) const {
    absl::StatusOr<std::string> text = Scalar(node, field);
    if (!text.ok()) return text.status();
    int32_t value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (text->empty() || ec != std::errc() || end != text->data() + text->size() || value < min) {
      return Error(node, field, fmt::format("must be an integer >= {}, not \"{}\"", min, *text));
    }
    if (value > max) return Error(node, field, fmt::format("must be <= {}", max));
    return value;
  }

  // A quota: resource to quantity.
  absl::StatusOr<ResourceList> ParseResources(const YAML::Node& node,
                                              const std::string& field) const {
    if (!node.IsMap()) return Error(node, field, "must be a mapping of resource to quantity");
    ResourceList out;
    for (const auto& entry : node) {
      absl::StatusOr<std::string> key = Scalar(entry.first, field);
      if (!key.ok()) return key.status();
      const std::string path = fmt::format("{}.{}", field, *key);
      absl::StatusOr<int64_t> value = ParseQuantity(*key, entry.second, path);
      if (!value.ok()) return value.status();
      if (!out.emplace(*key, *value).second) return Error(entry.first, path, "given twice");
    }
    return out;
  }

  absl::StatusOr<int64_t> ParseQuantity(const std::string& key, const YAML::Node& node,
                                        const std::string& path) const {
    absl::StatusOr<std::string> text = Scalar(node, path);
    if (!text.ok()) return text.status();
    absl::StatusOr<int64_t> value;
    int64_t max = 0;
    internal::QuantityKind kind = internal::QuantityKind::kMilliGpu;
    if (key == "cpu") {
      value = ParseCpuMillis(*text, path);
      max = options_.bounds.max_cpu_millis;
      kind = internal::QuantityKind::kCpuMillis;
    } else if (key == "memory") {
      value = ParseBytes(*text, path);
      max = options_.bounds.max_bytes;
      kind = internal::QuantityKind::kBytes;
    } else if (key == "gpu" || (key.starts_with("gpu:") && key.size() > 4)) {
      if (!IsPrintableUtf8(key))
        return Error(node, path, "a GPU model must be printable UTF-8 text");
      value = ParseMilliGpu(*text, path);
      max = options_.bounds.max_milli_gpu;
    } else {
      return Error(node, path, "unknown resource (cpu, memory, gpu or gpu:<MODEL>)");
    }
    if (!value.ok()) return Error(node, path, StripField(value.status(), path));
    if (*value > max) {
      return Error(node, path, fmt::format("must be at most {}", internal::ShownBound(kind, max)));
    }
    return value;
  }

  // A core parser's message without its leading "FIELD: ".
  static std::string StripField(const absl::Status& status, const std::string& field) {
    std::string message(status.message());
    if (message.starts_with(field + ": ")) message.erase(0, field.size() + 2);
    return message;
  }

  absl::StatusOr<QueueOrdering> ParseOrdering(const YAML::Node& node,
                                              const std::string& field) const {
    absl::StatusOr<std::string> text = Scalar(node, field);
    if (!text.ok()) return text.status();
    const std::string best_effort = Key("bestEffortFifo");
    const std::string strict = Key("strictFifo");
    if (*text == best_effort) return QueueOrdering::kBestEffortFifo;
    if (*text == strict) return QueueOrdering::kStrictFifo;
    return Error(node, field,
                 fmt::format("must be {} or {}, not \"{}\"", strict, best_effort, *text));
  }

  const QueueTreeOptions options_;
  DecodedQueueTree tree_;
  std::set<std::string> names_;
};

absl::StatusOr<YAML::Node> Load(std::string_view text) {
  if (FlowDepth(text) > kMaxFlowDepth) {
    return absl::InvalidArgumentError(
        fmt::format("brackets nest deeper than the limit of {}", kMaxFlowDepth));
  }
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}", e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

Json GpuAmount(int64_t milli) {
  if (milli % 1000 == 0) return milli / 1000;
  // A fraction is a JSON number while it reads back exactly; beyond a double's precision, text.
  Json gpus = static_cast<double>(milli) / 1000.0;
  const absl::StatusOr<int64_t> back = ParseMilliGpu(gpus.dump(), "gpu");
  if (back.ok() && *back == milli) return gpus;
  return FormatMilliGpu(milli);
}

}  // namespace

absl::StatusOr<DecodedQueueTree> DecodeQueueTree(const YAML::Node& list, const std::string& field,
                                                 const QueueTreeOptions& options) {
  try {
    QueueReader reader(options);
    if (absl::Status s = reader.ParseList(list, field, "", 0); !s.ok()) return s;
    DecodedQueueTree tree = reader.Take();
    if (tree.queues.empty()) return Error(list, field, "at least one queue is required");
    return tree;
  } catch (const YAML::Exception& e) {
    return Error(field, e.msg);
  }
}

absl::StatusOr<std::vector<QueueSpec>> ParseQueueTree(const YAML::Node& list,
                                                      const std::string& field) {
  absl::StatusOr<DecodedQueueTree> tree = DecodeQueueTree(list, field, QueueTreeOptions{});
  if (!tree.ok()) return tree.status();
  return std::move(tree->queues);
}

std::optional<int> QueueErrorLine(const absl::Status& status) {
  const auto payload = status.GetPayload(kLinePayload);  // an absl::optional<absl::Cord>
  if (!payload.has_value()) return std::nullopt;
  int line = 0;
  const std::string text(*payload);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), line);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return line;
}

absl::StatusOr<std::vector<QueueSpec>> ParseQueueDocument(std::string_view text) {
  absl::StatusOr<YAML::Node> root = Load(text);
  if (!root.ok()) return root.status();
  try {
    if (!root->IsMap())
      return absl::InvalidArgumentError("the document must be {\"queues\": [...]}");
    for (const auto& entry : *root) {
      if (!entry.first.IsScalar())
        return absl::InvalidArgumentError("the document must be {\"queues\": [...]}");
      const std::string key = entry.first.as<std::string>();
      if (key != "queues") {
        return Error(KeyField(key), "unknown key (the document is {\"queues\": [...]})");
      }
    }
    if (!(*root)["queues"]) return Error("queues", "required");
    return ParseQueueTree((*root)["queues"], "queues");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(e.msg);
  }
}

absl::StatusOr<QueueSpec> ParseQueueObject(std::string_view text, std::string_view name) {
  if (absl::Status s = CheckName(name, "name"); !s.ok()) return s;
  QueueSpec queue{.name = std::string(name)};
  absl::StatusOr<YAML::Node> root = Load(text);
  if (!root.ok()) return root.status();
  try {
    if (root->IsNull()) return queue;
    if (!root->IsMap()) return absl::InvalidArgumentError("the body must be one queue (a mapping)");
    for (const auto& entry : *root) {
      if (!entry.first.IsScalar())
        return absl::InvalidArgumentError("the body must be one queue (a mapping)");
      const std::string key = entry.first.as<std::string>();
      static const std::set<std::string, std::less<>> kKnown = {
          "name",         "parent", "guaranteed", "borrowingLimit",
          "lendingLimit", "weight", "priority",   "ordering"};
      if (!kKnown.contains(key)) {
        return Error(KeyField(key), key == "children"
                                        ? "not allowed here: give each child its parent"
                                        : "unknown key");
      }
    }
    if ((*root)["name"]) {
      absl::StatusOr<std::string> given = Scalar((*root)["name"], "name");
      if (!given.ok()) return given.status();
      if (*given != name) {
        return Error("name", fmt::format("\"{}\" differs from the queue of the path (\"{}\")",
                                         *given, name));
      }
    }
    if ((*root)["parent"]) {
      absl::StatusOr<std::string> parent = Scalar((*root)["parent"], "parent");
      if (!parent.ok()) return parent.status();
      if (!parent->empty()) {
        if (absl::Status s = CheckName(*parent, "parent"); !s.ok()) return s;
      }
      queue.parent = *parent;
    }
    if (absl::Status s = QueueReader(QueueTreeOptions{}).ParseQueueFields(*root, "", queue);
        !s.ok()) {
      // Fields of a lone queue have no prefix: ".weight: ..." → "weight: ...".
      std::string message(s.message());
      if (message.starts_with('.')) message.erase(0, 1);
      std::string field = spec::ErrorField(s).value_or("");
      if (field.starts_with('.')) field.erase(0, 1);
      return spec::WithField(absl::InvalidArgumentError(message), field);
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(e.msg);
  }
  return queue;
}

Json ResourceListToJson(const ResourceList& resources) {
  Json out = Json::object();
  for (const auto& [key, value] : resources) {
    if (key == "cpu") {
      out[key] = FormatCpuMillis(value);
    } else if (key == "memory") {
      out[key] = FormatBytes(value);
    } else {
      out[key] = GpuAmount(value);
    }
  }
  return out;
}

std::string_view QueueOrderingName(QueueOrdering ordering) {
  return ordering == QueueOrdering::kStrictFifo ? "strictFifo" : "bestEffortFifo";
}

namespace {

// The queue's own keys (no name, parent or children), limits only when set.
void AddQueueFields(const QueueSpec& queue, Json& out) {
  out["guaranteed"] = ResourceListToJson(queue.guaranteed);
  if (!queue.borrowing_limit.empty()) {
    out["borrowingLimit"] = ResourceListToJson(queue.borrowing_limit);
  }
  if (!queue.lending_limit.empty()) out["lendingLimit"] = ResourceListToJson(queue.lending_limit);
  out["weight"] = queue.weight;
  out["priority"] = queue.priority;
  out["ordering"] = QueueOrderingName(queue.ordering);
}

}  // namespace

Json QueueSpecToJson(const QueueSpec& queue) {
  Json out = Json::object();
  out["name"] = queue.name;
  out["parent"] = queue.parent;
  AddQueueFields(queue, out);
  return out;
}

Json QueueTreeToJson(std::span<const QueueSpec> queues) {
  // Children lists are filled in reverse tree order, so that every child is complete before
  // it is moved into its parent.
  std::vector<Json> nodes(queues.size());
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < queues.size(); ++i) {
    nodes[i] = Json::object();
    nodes[i]["name"] = queues[i].name;
    AddQueueFields(queues[i], nodes[i]);
    index[queues[i].name] = i;
  }
  std::vector<std::vector<size_t>> children(queues.size());
  std::vector<size_t> roots;
  for (size_t i = 0; i < queues.size(); ++i) {
    auto parent = index.find(queues[i].parent);
    if (queues[i].parent.empty() || parent == index.end()) {
      roots.push_back(i);
    } else {
      children[parent->second].push_back(i);
    }
  }
  for (size_t i = queues.size(); i-- > 0;) {
    if (children[i].empty()) continue;
    Json list = Json::array();
    for (size_t child : children[i]) list.push_back(std::move(nodes[child]));
    nodes[i]["children"] = std::move(list);
  }
  Json list = Json::array();
  for (size_t root : roots) list.push_back(std::move(nodes[root]));
  return Json{{"queues", std::move(list)}};
}

std::optional<bool> IsLeafQueue(std::span<const QueueSpec> queues, std::string_view name) {
  bool found = false;
  for (const QueueSpec& queue : queues) {
    if (queue.parent == name) return false;
    found = found || queue.name == name;
  }
  if (!found) return std::nullopt;
  return true;
}

QueueLeafIndex LeafIndex(std::span<const QueueSpec> queues) {
  QueueLeafIndex index;
  for (const QueueSpec& queue : queues) index.emplace(queue.name, true);
  for (const QueueSpec& queue : queues) {
    if (auto parent = index.find(queue.parent); parent != index.end()) parent->second = false;
  }
  return index;
}

namespace {

// `queues` in tree order: depth first from the roots, siblings in their given order. Queues
// whose parent is missing, or that lie on a cycle, are left out.
std::vector<QueueSpec> InTreeOrder(std::vector<QueueSpec> queues) {
  std::map<std::string_view, std::vector<size_t>> children;
  for (size_t i = 0; i < queues.size(); ++i) children[queues[i].parent].push_back(i);
  std::vector<QueueSpec> out;
  out.reserve(queues.size());
  std::vector<size_t> stack;
  const std::vector<size_t>& roots = children[""];
  stack.assign(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    if (auto it = children.find(queues[i].name); it != children.end()) {
      stack.insert(stack.end(), it->second.rbegin(), it->second.rend());
    }
    out.push_back(queues[i]);
  }
  return out;
}

// How many levels `queues` (in tree order) has; the document holds at most kMaxDepth + 1.
int Levels(std::span<const QueueSpec> queues) {
  std::map<std::string_view, int> level;
  int deepest = 0;
  for (const QueueSpec& queue : queues) {
    auto parent = level.find(queue.parent);
    const int own = parent == level.end() ? 1 : parent->second + 1;
    level[queue.name] = own;
    deepest = std::max(deepest, own);
  }
  return deepest;
}

// `ordered` when a document can hold it (so that the stored tree reads back).
absl::StatusOr<std::vector<QueueSpec>> WithinDepth(std::vector<QueueSpec> ordered,
                                                   std::string_view parent) {
  if (Levels(ordered) > kMaxDepth + 1) {
    return Error("parent", fmt::format("under \"{}\" the tree nests deeper than {} levels", parent,
                                       kMaxDepth));
  }
  return ordered;
}

}  // namespace

absl::StatusOr<std::vector<QueueSpec>> UpsertQueue(std::vector<QueueSpec> tree, QueueSpec queue) {
  if (!queue.parent.empty() && !IsLeafQueue(tree, queue.parent).has_value()) {
    return Error("parent", fmt::format("unknown queue \"{}\"", queue.parent));
  }
  auto same = std::find_if(tree.begin(), tree.end(),
                           [&](const QueueSpec& q) { return q.name == queue.name; });
  if (same == tree.end()) {
    const std::string parent = queue.parent;
    tree.push_back(std::move(queue));
    return WithinDepth(InTreeOrder(std::move(tree)), parent);
  }
  const std::string parent = queue.parent;
  const std::string name = queue.name;
  *same = std::move(queue);
  const size_t size = tree.size();
  std::vector<QueueSpec> ordered = InTreeOrder(std::move(tree));
  if (ordered.size() != size) {
    return Error("parent", fmt::format("\"{}\" lies inside queue \"{}\"", parent, name));
  }
  return WithinDepth(std::move(ordered), parent);
}

absl::StatusOr<std::vector<QueueSpec>> RemoveQueue(std::vector<QueueSpec> tree,
                                                   std::string_view name) {
  const std::optional<bool> leaf = IsLeafQueue(tree, name);
  if (!leaf.has_value()) return absl::NotFoundError(fmt::format("queue \"{}\" not found", name));
  if (!*leaf) {
    return absl::FailedPreconditionError(
        fmt::format("queue \"{}\" has child queues: delete or move them first", name));
  }
  if (tree.size() == 1) {
    return absl::FailedPreconditionError(
        fmt::format("queue \"{}\" is the last queue: jobs need one", name));
  }
  std::erase_if(tree, [&](const QueueSpec& q) { return q.name == name; });
  return tree;
}

int FlowDepth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  for (char c : text) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return deepest;
}

}  // namespace tessera::spec

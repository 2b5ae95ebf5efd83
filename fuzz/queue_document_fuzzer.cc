// Feeds arbitrary bytes to the queue document parsers (spec/queue_document.h) and on to the
// queue tree (sched/queue/queue_tree.h), the way the server applies them. The first byte picks
// the entry point, the rest is the input:
//   'Q'  NAME "\n" BODY                  one queue (PUT /api/v1/queues/{name}), upserted into a
//                                        fixed tree, then removed again (DELETE)
//   'U'  TREE "\n%%\n" NAME "\n" BODY    the same, upserted into the tree TREE
//   else DOCUMENT                        a whole tree {"queues": [...]} (PUT /api/v1/queues)
// YAML and JSON go through the same parser (JSON is YAML). Checks: no crash, leak or undefined
// behaviour; every rejection is an InvalidArgument that names its field (or, for text that is not
// YAML at all or not the right shape, says where or what); every accepted tree builds a
// QueueTree in the same order, survives render -> parse unchanged, and answers admission and
// fair-share questions; every accepted queue round-trips and an upsert either builds a tree or
// names "parent".
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "sched/queue/queue_tree.h"
#include "spec/queue_document.h"
#include "spec/request_error.h"

namespace tessera::spec {
namespace {

using ::tessera::fuzz::Require;

constexpr std::string_view kBaseTree = R"({"queues": [
  {"name": "default"},
  {"name": "org", "guaranteed": {"gpu": 16, "cpu": "64", "memory": "512Gi"}, "children": [
    {"name": "team-a", "guaranteed": {"gpu": 8, "gpu:A100": 4}, "borrowingLimit": {"gpu": 4},
     "lendingLimit": {"gpu": 2}, "weight": 2, "priority": 1, "ordering": "strictFifo"},
    {"name": "team-b", "children": [{"name": "b1", "guaranteed": {"gpu": 0.5}}]}]}]})";

// Rejections the parsers cannot pin on one field: text that is not YAML ("3:7: ..."), or a
// document of the wrong shape.
bool IsDocumentLevel(std::string_view message) {
  for (std::string_view whole : {"the document must be {\"queues\": [...]}",
                                 "the body must be one queue (a mapping)"}) {
    if (message == whole) return true;
  }
  if (message.starts_with("brackets nest deeper than the limit of ")) return true;
  size_t i = 0;
  for (int part = 0; part < 2; ++part) {
    const size_t digits = i;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9') ++i;
    if (i == digits || i >= message.size() || message[i] != ':') return false;
    ++i;
  }
  return message.substr(i).starts_with(" ");
}

void CheckRejection(const absl::Status& status, std::string_view input) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "a rejection is InvalidArgument",
          input, status.ToString());
  const std::string message(status.message());
  Require(!message.empty(), "a rejection says why", input);
  Require(message.size() <= input.size() + 512, "a rejection is bounded", input,
          status.ToString());
  if (IsDocumentLevel(message)) return;
  const std::optional<std::string> field = spec::ErrorField(status);
  Require(field.has_value() && !field->empty(), "a rejection names its field", input,
          status.ToString());
  Require(message.starts_with(*field + ": "), "the message opens with the field", input,
          status.ToString() + "\nfield: " + *field);
}

bool SameQueue(const QueueSpec& a, const QueueSpec& b) {
  return a.name == b.name && a.parent == b.parent && a.guaranteed == b.guaranteed &&
         a.borrowing_limit == b.borrowing_limit && a.lending_limit == b.lending_limit &&
         a.weight == b.weight && a.priority == b.priority && a.ordering == b.ordering;
}

bool SameTree(const std::vector<QueueSpec>& a, const std::vector<QueueSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameQueue(a[i], b[i])) return false;
  }
  return true;
}

// Admission and fair share on the built tree: nothing crashes, answers are consistent, and
// admitting then releasing a charge leaves no use behind.
void ExerciseTree(QueueTree& tree, std::string_view input) {
  if (tree.size() > 256) return;
  tree.SetCapacity({{"cpu", 64'000}, {"memory", int64_t{512} << 30}, {"gpu", 16'000}});
  tree.Configure(FairShareMode::kDrf, Duration(std::chrono::hours(1)));
  const ResourceList charge = {{"cpu", 4'000}, {"gpu", 2'000}, {"gpu:A100", 2'000}};
  for (int32_t q = 0; q < tree.size(); ++q) {
    if (!tree.IsLeaf(q)) continue;
    const QueueTree::Verdict ever = tree.CanEverAdmit(q, charge);
    const QueueTree::Verdict now = tree.CanAdmit(q, charge);
    Require(ever.fits || !ever.message.empty(), "a refusal says why", input);
    Require(now.fits || !now.message.empty(), "a refusal says why", input);
    Require(now.fits == ever.fits, "an empty tree admits now what it ever admits", input,
            now.message + " | " + ever.message);
    if (!now.fits) continue;
    tree.Admit(q, charge);
    Require(tree.Share(q) >= 0, "a share is not negative", input);
    tree.AdvanceTime(TimePoint(std::chrono::hours(1)));
    tree.Release(q, charge);
    Require(tree.Usage(q).empty(), "release gives back what admit took", input);
  }
}

// A tree as the parser gave it: it builds a QueueTree that keeps its order, and renders to a
// document that parses back to the same tree.
void CheckTree(const std::vector<QueueSpec>& queues, std::string_view input) {
  Require(!queues.empty() && queues.size() <= spec::kMaxQueues, "a tree has 1 to kMaxQueues queues",
          input);
  absl::StatusOr<QueueTree> tree = QueueTree::Create(queues);
  Require(tree.ok(), "a parsed tree builds", input, tree.status().ToString());
  std::vector<int32_t> order(queues.size());
  std::iota(order.begin(), order.end(), 0);
  Require(tree->TreeOrder() == order, "specs come in tree order", input);
  const std::string rendered = spec::QueueTreeToJson(queues).dump();
  const absl::StatusOr<std::vector<QueueSpec>> back = spec::ParseQueueDocument(rendered);
  Require(back.ok(), "a rendered tree parses", input,
          back.ok() ? rendered : back.status().ToString() + "\n" + rendered);
  Require(SameTree(queues, *back), "render -> parse round-trips", input,
          rendered + "\nvs\n" + spec::QueueTreeToJson(*back).dump());
  ExerciseTree(*tree, input);
}

void FuzzDocument(std::string_view text, std::string_view input) {
  const absl::StatusOr<std::vector<QueueSpec>> queues = spec::ParseQueueDocument(text);
  if (!queues.ok()) return CheckRejection(queues.status(), input);
  CheckTree(*queues, input);
}

// One queue: parsed, round-tripped, upserted into `base` and removed again as the server's
// ApplyQueue and DeleteQueue do.
void FuzzQueue(const std::vector<QueueSpec>& base, std::string_view rest, std::string_view input) {
  const size_t newline = rest.find('\n');
  const std::string_view name = rest.substr(0, newline);
  const std::string_view body = newline == rest.npos ? "" : rest.substr(newline + 1);
  const absl::StatusOr<QueueSpec> queue = spec::ParseQueueObject(body, name);
  if (!queue.ok()) return CheckRejection(queue.status(), input);
  Require(queue->name == name, "the queue has the path's name", input);
  const std::string rendered = spec::QueueSpecToJson(*queue).dump();
  const absl::StatusOr<QueueSpec> back = spec::ParseQueueObject(rendered, name);
  Require(back.ok(), "a rendered queue parses", input,
          back.ok() ? rendered : back.status().ToString() + "\n" + rendered);
  Require(SameQueue(*queue, *back), "render -> parse round-trips", input, rendered);

  const absl::StatusOr<std::vector<QueueSpec>> upserted = spec::UpsertQueue(base, *queue);
  if (!upserted.ok()) {
    CheckRejection(upserted.status(), input);
    Require(spec::ErrorField(upserted.status()) == "parent", "an upsert refusal names parent",
            input, upserted.status().ToString());
    return;
  }
  Require(spec::IsLeafQueue(*upserted, name).has_value(), "the upserted queue is in the tree",
          input);
  CheckTree(*upserted, input);
  const absl::StatusOr<std::vector<QueueSpec>> removed = spec::RemoveQueue(*upserted, name);
  if (!removed.ok()) {
    Require(removed.status().code() == absl::StatusCode::kFailedPrecondition,
            "a removal is refused only for a parent or the last queue", input,
            removed.status().ToString());
    return;
  }
  Require(!spec::IsLeafQueue(*removed, name).has_value(), "the removed queue is gone", input);
  absl::StatusOr<QueueTree> tree = QueueTree::Create(*removed);
  Require(tree.ok(), "a tree without a leaf builds", input, tree.status().ToString());
}

}  // namespace
}  // namespace tessera::spec

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::spec;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.empty()) return 0;
  const std::string_view rest = input.substr(1);
  switch (input[0]) {
    case 'Q': {
      static const std::vector<tessera::QueueSpec> base = *ParseQueueDocument(kBaseTree);
      FuzzQueue(base, rest, input);
      break;
    }
    case 'U': {
      const size_t split = rest.find("\n%%\n");
      if (split == rest.npos) return 0;
      const absl::StatusOr<std::vector<tessera::QueueSpec>> base =
          ParseQueueDocument(rest.substr(0, split));
      if (!base.ok()) return 0;
      FuzzQueue(*base, rest.substr(split + 4), input);
      break;
    }
    default:
      FuzzDocument(rest, input);
  }
  return 0;
}

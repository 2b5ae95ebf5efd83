#include "spec/queue_document.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/request_error.h"
#include "yaml-cpp/yaml.h"

namespace tessera::spec {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kTree = R"(
queues:
  - name: org
    guaranteed: {cpu: "64", memory: 512Gi}
    children:
      - name: team-a
        guaranteed: {gpu: 16, "gpu:H100-80GB": 0.5}
        borrowingLimit: {gpu: 8}
        lendingLimit: {gpu: 4}
        weight: 2
        priority: -3
        ordering: strictFifo
      - name: team-b
  - name: other
)";

TEST(QueueDocumentTest, ParsesATreeInTreeOrder) {
  absl::StatusOr<std::vector<QueueSpec>> queues = ParseQueueDocument(kTree);
  ASSERT_TRUE(queues.ok()) << queues.status();
  ASSERT_EQ(queues->size(), 4u);
  const QueueSpec& org = (*queues)[0];
  EXPECT_EQ(org.name, "org");
  EXPECT_EQ(org.parent, "");
  EXPECT_EQ(org.guaranteed.at("cpu"), 64'000);
  EXPECT_EQ(org.guaranteed.at("memory"), int64_t{512} << 30);
  const QueueSpec& a = (*queues)[1];
  EXPECT_EQ(a.parent, "org");
  EXPECT_EQ(a.guaranteed.at("gpu"), 16'000);
  EXPECT_EQ(a.guaranteed.at("gpu:H100-80GB"), 500);
  EXPECT_EQ(a.borrowing_limit.at("gpu"), 8'000);
  EXPECT_EQ(a.lending_limit.at("gpu"), 4'000);
  EXPECT_EQ(a.weight, 2);
  EXPECT_EQ(a.priority, -3);
  EXPECT_EQ(a.ordering, QueueOrdering::kStrictFifo);
  EXPECT_EQ((*queues)[2].name, "team-b");
  EXPECT_EQ((*queues)[2].parent, "org");
  EXPECT_EQ((*queues)[2].weight, 1);
  EXPECT_EQ((*queues)[3].parent, "");
  EXPECT_EQ(IsLeafQueue(*queues, "org"), false);
  EXPECT_EQ(IsLeafQueue(*queues, "team-a"), true);
  EXPECT_EQ(IsLeafQueue(*queues, "nope"), std::nullopt);
  EXPECT_EQ(LeafIndex(*queues),
            (QueueLeafIndex{{"org", false}, {"team-a", true}, {"team-b", true}, {"other", true}}));
}

TEST(QueueDocumentTest, RenderingParsesBackToTheSameTree) {
  absl::StatusOr<std::vector<QueueSpec>> queues = ParseQueueDocument(kTree);
  ASSERT_TRUE(queues.ok()) << queues.status();
  const std::string json = QueueTreeToJson(*queues).dump();
  absl::StatusOr<std::vector<QueueSpec>> again = ParseQueueDocument(json);
  ASSERT_TRUE(again.ok()) << again.status() << json;
  ASSERT_EQ(again->size(), queues->size());
  for (size_t i = 0; i < queues->size(); ++i) {
    const QueueSpec& want = (*queues)[i];
    const QueueSpec& got = (*again)[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.parent, want.parent);
    EXPECT_EQ(got.guaranteed, want.guaranteed);
    EXPECT_EQ(got.borrowing_limit, want.borrowing_limit);
    EXPECT_EQ(got.lending_limit, want.lending_limit);
    EXPECT_EQ(got.weight, want.weight);
    EXPECT_EQ(got.priority, want.priority);
    EXPECT_EQ(got.ordering, want.ordering);
  }
  EXPECT_EQ(QueueSpecToJson((*queues)[1]).dump(),
            R"({"name":"team-a","parent":"org","guaranteed":{"gpu":16,"gpu:H100-80GB":0.5},)"
            R"("borrowingLimit":{"gpu":8},"lendingLimit":{"gpu":4},"weight":2,"priority":-3,)"
            R"("ordering":"strictFifo"})");
}

TEST(QueueDocumentTest, BadTreesNameTheField) {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"queues: {a: 1}", "queues: must be a list of queues"},
           {"queues: []", "queues: at least one queue is required"},
           {"queue: []", "queue: unknown key"},
           {"- 1", "the document must be"},
           {"queues: [{guaranteed: {gpu: 1}}]", "queues[0].name: required"},
           {"queues: [{name: a}, {name: a}]", "queues[1].name: queue \"a\" is given twice"},
           {"queues: [{name: a, children: [{name: a}]}]",
            "queues[0].children[0].name: queue \"a\" is given twice"},
           {"queues: [{name: 'a b'}]", "queues[0].name: \"a b\" is not a queue name"},
           {"queues: [{name: a, weight: 0}]", "queues[0].weight: must be an integer >= 1"},
           {"queues: [{name: a, priority: high}]", "queues[0].priority: must be an integer"},
           {"queues: [{name: a, ordering: fifo}]",
            "queues[0].ordering: must be strictFifo or bestEffortFifo"},
           {"queues: [{name: a, children: [{name: b, guaranteed: {gpu: -1}}]}]",
            "queues[0].children[0].guaranteed.gpu"},
           {"queues: [{name: a, guaranteed: {disk: 1}}]",
            "queues[0].guaranteed.disk: unknown resource"},
           {"queues: [{name: a, guaranteed: {\"gpu:\": 1}}]", "queues[0].guaranteed.gpu:: unknown"},
           {"queues: [{name: a, lendingLimit: {memory: lots}}]", "queues[0].lendingLimit.memory"},
           {"queues: [{name: a, borrowingLimit: 4}]",
            "queues[0].borrowingLimit: must be a mapping"},
           {"queues: [{name: a, extra: 1}]", "queues[0].extra: unknown key"},
           {"queues: [{name: a, children: {b: 1}}]", "queues[0].children: must be a list"},
           {"queues: [{name: !x a}]", "queues[0].name: YAML tags are not allowed"},
           {"queues: [", "1:"},
       }) {
    absl::StatusOr<std::vector<QueueSpec>> queues = ParseQueueDocument(c.text);
    ASSERT_FALSE(queues.ok()) << c.text;
    EXPECT_EQ(queues.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(queues.status().message(), HasSubstr(c.error)) << c.text;
  }
}

TEST(QueueDocumentTest, DeepTreesAreRefused) {
  std::string text = "queues:\n";
  std::string indent;
  for (int i = 0; i < 40; ++i) {
    text += indent + "  - name: q" + std::to_string(i) + "\n" + indent + "    children:\n";
    indent += "    ";
  }
  text += indent + "  - name: leaf\n";
  absl::StatusOr<std::vector<QueueSpec>> queues = ParseQueueDocument(text);
  ASSERT_FALSE(queues.ok());
  EXPECT_THAT(queues.status().message(), HasSubstr("nests deeper than"));
}

TEST(QueueDocumentTest, OneQueueAlone) {
  absl::StatusOr<QueueSpec> queue =
      ParseQueueObject(R"({"parent": "org", "guaranteed": {"gpu": 2}, "weight": 3})", "team-c");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->name, "team-c");
  EXPECT_EQ(queue->parent, "org");
  EXPECT_EQ(queue->guaranteed.at("gpu"), 2000);
  EXPECT_EQ(queue->weight, 3);
  EXPECT_TRUE(ParseQueueObject("", "root")->parent.empty());

  struct Case {
    const char* text;
    const char* name;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"name": "x"})", "y", "name: \"x\" differs from the queue of the path"},
           {R"({"children": []})", "y", "children: not allowed here"},
           {R"({"weight": 0})", "y", "weight: must be an integer >= 1"},
           {R"({"guaranteed": {"gpu": "x"}})", "y", "guaranteed.gpu"},
           {R"({"parent": "a b"})", "y", "parent: \"a b\" is not a queue name"},
           {R"({})", "a/b", "name: \"a/b\" is not a queue name"},
           {R"([1])", "y", "must be one queue"},
       }) {
    absl::StatusOr<QueueSpec> parsed = ParseQueueObject(c.text, c.name);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.error)) << c.text;
  }
}

// A tree `levels` deep (a chain q0 -> q1 -> ...), each queue with a quota, as block YAML.
std::string Chain(int levels) {
  std::string text = "queues:\n";
  std::string indent;
  for (int i = 0; i < levels; ++i) {
    text += indent + "  - name: q" + std::to_string(i) + "\n";
    text += indent + "    guaranteed: {gpu: 1}\n";
    if (i + 1 < levels) text += indent + "    children:\n";
    indent += "    ";
  }
  return text;
}

TEST(QueueDocumentTest, TheDeepestTreeReadsBackFromItsJson) {
  absl::StatusOr<std::vector<QueueSpec>> queues = ParseQueueDocument(Chain(33));
  ASSERT_TRUE(queues.ok()) << queues.status();
  const std::string json = QueueTreeToJson(*queues).dump();
  absl::StatusOr<std::vector<QueueSpec>> again = ParseQueueDocument(json);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->size(), 33u);
  EXPECT_FALSE(ParseQueueDocument(Chain(34)).ok());
}

TEST(QueueDocumentTest, GpuAmountsBeyondDoublePrecisionReadBack) {
  for (const int64_t milli : {int64_t{1}, int64_t{500}, int64_t{9'007'199'254'740'993},
                              int64_t{9'223'372'036'854'775'807}}) {
    const std::vector<QueueSpec> tree = {{.name = "a", .guaranteed = {{"gpu:T4", milli}}}};
    const std::string json = QueueTreeToJson(tree).dump();
    absl::StatusOr<std::vector<QueueSpec>> again = ParseQueueDocument(json);
    ASSERT_TRUE(again.ok()) << again.status() << json;
    EXPECT_EQ((*again)[0].guaranteed.at("gpu:T4"), milli) << json;
  }
}

TEST(QueueDocumentTest, EveryRejectionCarriesItsField) {
  struct Case {
    const char* text;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{
           {"queues: [{name: a, guaranteed: {cpu: 0.5m}}]", "queues[0].guaranteed.cpu"},
           {"queues: [{name: a, lendingLimit: {memory: 8Ei}}]", "queues[0].lendingLimit.memory"},
           {"\"\": 1", "\"\""},
           {"queues: [{name: a, guaranteed: {\"gpu:T4\\u0000\": 1}}]",
            "queues[0].guaranteed.gpu:T4"},
           {"queues: [{name: a, guaranteed: {\"gpu:\x94\": 1}}]", "queues[0].guaranteed.gpu:"},
       }) {
    absl::StatusOr<std::vector<QueueSpec>> queues = ParseQueueDocument(c.text);
    ASSERT_FALSE(queues.ok()) << c.text;
    EXPECT_EQ(queues.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    const std::optional<std::string> field = spec::ErrorField(queues.status());
    ASSERT_TRUE(field.has_value()) << queues.status();
    EXPECT_THAT(*field, ::testing::StartsWith(c.field)) << queues.status();
    EXPECT_THAT(std::string(queues.status().message()), ::testing::StartsWith(*field + ": "));
  }
  absl::StatusOr<QueueSpec> queue = ParseQueueObject(R"({"guaranteed": {"cpu": "lots"}})", "x");
  ASSERT_FALSE(queue.ok());
  EXPECT_EQ(spec::ErrorField(queue.status()), "guaranteed.cpu");
  EXPECT_EQ(spec::ErrorField(ParseQueueObject(R"({"": 1})", "x").status()), "\"\"");
}

TEST(QueueDocumentTest, KeysThatAreNotTextAreRefusedAsTheWrongShape) {
  EXPECT_EQ(ParseQueueDocument("{[a]: 1, queues: [{name: a}]}").status().message(),
            "the document must be {\"queues\": [...]}");
  EXPECT_EQ(ParseQueueObject("{? [k] : v}", "x").status().message(),
            "the body must be one queue (a mapping)");
}

std::vector<std::string> Names(const std::vector<QueueSpec>& queues) {
  std::vector<std::string> names;
  for (const QueueSpec& queue : queues) names.push_back(queue.parent + "/" + queue.name);
  return names;
}

TEST(QueueDocumentTest, UpsertKeepsTreeOrder) {
  std::vector<QueueSpec> tree = *ParseQueueDocument(kTree);
  // A new leaf under org comes after org's other children.
  absl::StatusOr<std::vector<QueueSpec>> added =
      UpsertQueue(tree, {.name = "team-c", .parent = "org"});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_THAT(Names(*added),
              ::testing::ElementsAre("/org", "org/team-a", "org/team-b", "org/team-c", "/other"));
  // Moving org under other moves its subtree along.
  absl::StatusOr<std::vector<QueueSpec>> moved =
      UpsertQueue(*added, {.name = "org", .parent = "other", .weight = 4});
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_THAT(Names(*moved), ::testing::ElementsAre("/other", "other/org", "org/team-a",
                                                    "org/team-b", "org/team-c"));
  EXPECT_EQ((*moved)[1].weight, 4);

  EXPECT_THAT(UpsertQueue(tree, {.name = "x", .parent = "nope"}).status().message(),
              HasSubstr("parent: unknown queue \"nope\""));
  EXPECT_THAT(UpsertQueue(tree, {.name = "org", .parent = "team-a"}).status().message(),
              HasSubstr("parent: \"team-a\" lies inside queue \"org\""));
}

TEST(QueueDocumentTest, UpsertKeepsTheTreeWithinTheDepthADocumentHolds) {
  std::vector<QueueSpec> tree = *ParseQueueDocument(Chain(33));
  tree.push_back({.name = "side"});
  tree.push_back({.name = "s1", .parent = "side"});
  absl::StatusOr<std::vector<QueueSpec>> below = UpsertQueue(tree, {.name = "x", .parent = "q32"});
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(spec::ErrorField(below.status()), "parent");
  EXPECT_THAT(below.status().message(), HasSubstr("nests deeper than 32 levels"));
  // Moving a queue moves its children: side's child would be the 34th level.
  EXPECT_FALSE(UpsertQueue(tree, {.name = "side", .parent = "q31"}).ok());
  absl::StatusOr<std::vector<QueueSpec>> moved =
      UpsertQueue(tree, {.name = "side", .parent = "q30"});
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_TRUE(ParseQueueDocument(QueueTreeToJson(*moved).dump()).ok());
}

TEST(QueueDocumentTest, RemoveOnlyLeaves) {
  std::vector<QueueSpec> tree = *ParseQueueDocument(kTree);
  absl::StatusOr<std::vector<QueueSpec>> removed = RemoveQueue(tree, "team-b");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_THAT(Names(*removed), ::testing::ElementsAre("/org", "org/team-a", "/other"));
  EXPECT_EQ(RemoveQueue(tree, "org").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(RemoveQueue(tree, "nope").status().code(), absl::StatusCode::kNotFound);
  std::vector<QueueSpec> one = {{.name = "default"}};
  EXPECT_EQ(RemoveQueue(one, "default").status().code(), absl::StatusCode::kFailedPrecondition);
}

// Scenario files write the same tree in snake_case; one decoder reads both.
TEST(QueueDocumentTest, BothKeyStylesDecodeTheSameTree) {
  const YAML::Node snake = YAML::Load(R"(
- name: org
  guaranteed: {cpu: "64", memory: 512Gi}
  children:
    - name: team-a
      guaranteed: {gpu: 16, "gpu:H100-80GB": 0.5}
      borrowing_limit: {gpu: 8}
      lending_limit: {gpu: 4}
      weight: 2
      priority: -3
      ordering: strict_fifo
    - name: team-b
- name: other
)");
  absl::StatusOr<DecodedQueueTree> tree =
      DecodeQueueTree(snake, "queues", {.style = KeyStyle::kSnakeCase});
  ASSERT_TRUE(tree.ok()) << tree.status();
  absl::StatusOr<std::vector<QueueSpec>> camel = ParseQueueDocument(kTree);
  ASSERT_TRUE(camel.ok()) << camel.status();
  EXPECT_EQ(QueueTreeToJson(tree->queues), QueueTreeToJson(*camel));
  EXPECT_EQ(tree->lines, (std::vector<int>{2, 5, 12, 13}));
}

TEST(QueueDocumentTest, SnakeCaseErrorsNameTheKeyAsWrittenAndItsLine) {
  const YAML::Node snake = YAML::Load(
      "- name: q\n  borrowing_limit: {cpu: 1}\n  lending_limit:\n    gpu: 2\n    gpu: 3\n");
  absl::StatusOr<DecodedQueueTree> tree = DecodeQueueTree(
      snake, "queues", {.style = KeyStyle::kSnakeCase, .bounds = {.max_cpu_millis = 500}});
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().message(), "queues[0].borrowing_limit.cpu: must be at most 500m");
  EXPECT_EQ(QueueErrorLine(tree.status()), 2);

  tree = DecodeQueueTree(snake, "queues", {.style = KeyStyle::kSnakeCase});
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().message(), "queues[0].lending_limit.gpu: given twice");
  EXPECT_EQ(QueueErrorLine(tree.status()), 5);
  // camelCase keys are not the snake_case style's.
  tree = DecodeQueueTree(YAML::Load("- {name: q, borrowingLimit: {cpu: 1}}"), "queues",
                         {.style = KeyStyle::kSnakeCase});
  EXPECT_THAT(tree.status().message(), HasSubstr("queues[0].borrowingLimit: unknown key"));
}

}  // namespace
}  // namespace tessera::spec

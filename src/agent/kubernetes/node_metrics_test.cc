#include "agent/kubernetes/node_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::agent::k8s {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A NodeMetricsList as metrics-server answers it, with the given items.
Json MetricsList(Json items) {
  return {{"kind", "NodeMetricsList"},
          {"apiVersion", "metrics.k8s.io/v1beta1"},
          {"metadata", Json::object()},
          {"items", std::move(items)}};
}

Json Item(const std::string& name, Json cpu, Json memory) {
  return {{"metadata", {{"name", name}, {"creationTimestamp", "2024-05-01T10:00:00Z"}}},
          {"timestamp", "2024-05-01T09:59:52Z"},
          {"window", "20.039s"},
          {"usage", {{"cpu", std::move(cpu)}, {"memory", std::move(memory)}}}};
}

struct GoodCase {
  Json cpu;
  Json memory;
  int64_t want_cpu;  // millicores
  int64_t want_memory;
};

class NodeMetricsGood : public ::testing::TestWithParam<GoodCase> {};
TEST_P(NodeMetricsGood, Converts) {
  absl::StatusOr<NodeMetricsList> list = NodeMetricsFromJson(
      MetricsList(Json::array({Item("n1", GetParam().cpu, GetParam().memory)})));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->usage.size(), 1u);
  const NodeUsage& usage = list->usage[0];
  EXPECT_EQ(usage.node, "n1");
  EXPECT_EQ(usage.cpu, GetParam().want_cpu);
  EXPECT_EQ(usage.memory, GetParam().want_memory);
  EXPECT_THAT(usage.gpu_utilization, IsEmpty());
  EXPECT_FALSE(usage.power_watts.has_value());
}
INSTANTIATE_TEST_SUITE_P(
    NodeMetrics, NodeMetricsGood,
    ::testing::Values(GoodCase{"250m", "1Gi", 250, int64_t{1} << 30},
                      GoodCase{"2", "123456Ki", 2000, int64_t{123456} << 10},
                      // metrics-server's nanocores and microcores round up to a millicore.
                      GoodCase{"123456789n", "1024Mi", 124, int64_t{1} << 30},
                      GoodCase{"3000000n", "512M", 3, 512000000}, GoodCase{"1500u", "1k", 2, 1000},
                      GoodCase{"0", "0", 0, 0}, GoodCase{2, 4096, 2000, 4096}));

struct BadCase {
  Json item;
  std::string want_error;
};

class NodeMetricsBad : public ::testing::TestWithParam<BadCase> {};
TEST_P(NodeMetricsBad, SkipsTheEntryNamingTheField) {
  // The bad entry is the third; the good ones around it are kept.
  absl::StatusOr<NodeMetricsList> list = NodeMetricsFromJson(MetricsList(Json::array(
      {Item("a", "1", "1Gi"), Item("b", "2", "2Gi"), GetParam().item, Item("d", "4", "4Gi")})));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, ElementsAre(GetParam().want_error));
  ASSERT_EQ(list->usage.size(), 3u);
  EXPECT_EQ(list->usage[2].node, "d");
}
INSTANTIATE_TEST_SUITE_P(
    NodeMetrics, NodeMetricsBad,
    ::testing::Values(
        BadCase{Item("c", "x", "1Gi"), "items[2].usage.cpu: \"x\" is not a quantity"},
        BadCase{Item("c", "-5m", "1Gi"), "items[2].usage.cpu: must be >= 0"},
        BadCase{Item("c", "1", "1.5"), "items[2].usage.memory: 1.5 is not a whole number of bytes"},
        BadCase{Item("c", "1", "16GB"), "items[2].usage.memory: \"16GB\" is not a quantity"},
        BadCase{Item("c", true, "1Gi"), "items[2].usage.cpu: must be a quantity string"},
        BadCase{Item("c", nullptr, "1Gi"), "items[2].usage.cpu: missing"},
        BadCase{{{"metadata", {{"name", "c"}}}, {"usage", {{"cpu", "1"}}}},
                "items[2].usage.memory: missing"},
        BadCase{{{"metadata", {{"name", "c"}}}}, "items[2].usage: missing or not a map"},
        BadCase{{{"metadata", {{"name", 7}}}, {"usage", {{"cpu", "1"}, {"memory", "1"}}}},
                "items[2].metadata.name: must be a string"},
        BadCase{Item("", "1", "1Gi"), "items[2].metadata.name: missing"},
        BadCase{{{"usage", {{"cpu", "1"}, {"memory", "1"}}}},
                "items[2].metadata: missing or not a map"},
        BadCase{"n1", "items[2]: must be a map"},
        BadCase{Item("a", "1", "1Gi"), "items[2].metadata.name: node \"a\" is listed twice"}));

TEST(NodeMetricsFromJsonTest, AcceptsAnEmptyList) {
  absl::StatusOr<NodeMetricsList> list = NodeMetricsFromJson(
      {{"kind", "NodeMetricsList"}, {"apiVersion", "metrics.k8s.io/v1beta1"}, {"metadata", {}}});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->usage, IsEmpty());
  EXPECT_THAT(list->errors, IsEmpty());
}

TEST(NodeMetricsFromJsonTest, RefusesWhatIsNotAList) {
  EXPECT_EQ(NodeMetricsFromJson(Json::array()).status().message(),
            "node metrics list: not a JSON object");
  EXPECT_EQ(NodeMetricsFromJson({{"items", "n1"}}).status().message(),
            "node metrics list: items: must be a list");
}

TEST(NodeMetricsUnavailableTest, SaysWhatToDo) {
  EXPECT_THAT(NodeMetricsUnavailable(absl::NotFoundError(
                  "GET /apis/metrics.k8s.io/v1beta1/nodes: 404 NotFound: the server could not "
                  "find the requested resource")),
              AllOf(HasSubstr("404 NotFound"), HasSubstr("metrics-server")));
  EXPECT_THAT(NodeMetricsUnavailable(absl::UnavailableError("503 ServiceUnavailable")),
              HasSubstr("metrics-server"));
  EXPECT_THAT(NodeMetricsUnavailable(absl::PermissionDeniedError("403 Forbidden")),
              AllOf(HasSubstr("403 Forbidden"),
                    HasSubstr("get and list on nodes in API group metrics.k8s.io")));
  EXPECT_EQ(NodeMetricsUnavailable(absl::InternalError("GET ...: not JSON")),
            "node usage is not reported: GET ...: not JSON; read again until it answers");
}

}  // namespace
}  // namespace tessera::agent::k8s

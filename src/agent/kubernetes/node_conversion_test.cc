#include "agent/kubernetes/node_conversion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::agent::k8s {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const NodeConversion kConversion{.cluster = "prod",
                                 .cluster_labels = {{"tessera.io/cluster", "prod"}}};

Json GpuNode() {
  return Json::parse(R"({
    "kind": "Node", "apiVersion": "v1",
    "metadata": {"name": "n1", "resourceVersion": "12",
                 "labels": {"tessera.io/pool": "a100", "zone": "eu-1",
                            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                            "nvidia.com/gpu.memory": "81920"}},
    "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                        {"key": "maint", "effect": "NoExecute"}]},
    "status": {
      "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110",
                   "ephemeral-storage": "100Gi", "hugepages-2Mi": "0"},
      "allocatable": {"cpu": "63500m", "memory": "503Gi", "nvidia.com/gpu": "6", "pods": "110",
                      "ephemeral-storage": "90Gi", "hugepages-2Mi": "0"},
      "conditions": [{"type": "MemoryPressure", "status": "False"},
                     {"type": "Ready", "status": "True"}]}})");
}

TEST(NodeFromJsonTest, ConvertsAGpuNode) {
  absl::StatusOr<Node> node = NodeFromJson(GpuNode(), kConversion);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->name, "n1");
  EXPECT_EQ(node->cluster, "prod");
  EXPECT_EQ(node->pool, "a100");
  EXPECT_EQ(node->labels.at("zone"), "eu-1");
  EXPECT_EQ(node->labels.at("tessera.io/cluster"), "prod");
  EXPECT_EQ(node->condition, NodeCondition::kReady);
  EXPECT_FALSE(node->unschedulable);
  ASSERT_EQ(node->taints.size(), 2u);
  EXPECT_EQ(node->taints[0], (Taint{"gpu", "true", TaintEffect::kNoSchedule}));
  EXPECT_EQ(node->taints[1], (Taint{"maint", "", TaintEffect::kNoExecute}));
  EXPECT_EQ(node->capacity.cpu, 64000);
  EXPECT_EQ(node->allocatable.cpu, 63500);
  EXPECT_EQ(node->capacity.memory, int64_t{512} << 30);
  EXPECT_EQ(node->allocatable.memory, int64_t{503} << 30);
  EXPECT_EQ(node->capacity.gpu, 8000);
  EXPECT_EQ(node->allocatable.gpu, 6000);
  EXPECT_EQ(node->allocatable.extended.at("ephemeral-storage"), int64_t{90} << 30);
  EXPECT_FALSE(node->allocatable.extended.contains("pods"));
  EXPECT_FALSE(node->allocatable.extended.contains("hugepages-2Mi"));  // zero
  ASSERT_EQ(node->gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(node->gpus[i].index, i);
    EXPECT_EQ(node->gpus[i].model, "NVIDIA-A100-SXM4-80GB");
    EXPECT_EQ(node->gpus[i].memory, int64_t{81920} << 20);
    EXPECT_EQ(node->gpus[i].healthy, i < 6) << i;  // beyond allocatable: unhealthy
  }
  EXPECT_EQ(node->capacity.gpu_memory, 8 * (int64_t{81920} << 20));
  EXPECT_EQ(node->allocatable.gpu_memory, 6 * (int64_t{81920} << 20));
}

TEST(NodeFromJsonTest, DefaultsAndFallbacks) {
  struct Case {
    std::string name;
    std::function<void(Json&)> change;
    std::function<void(const Node&)> check;
  };
  const std::vector<Case> cases = {
      {"pool from the instance type",
       [](Json& n) {
         n["metadata"]["labels"].erase("tessera.io/pool");
         n["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "p4d.24xlarge";
       },
       [](const Node& n) { EXPECT_EQ(n.pool, "p4d.24xlarge"); }},
      {"no pool label", [](Json& n) { n["metadata"]["labels"].erase("tessera.io/pool"); },
       [](const Node& n) { EXPECT_EQ(n.pool, ""); }},
      {"model fallback", [](Json& n) { n["metadata"]["labels"].erase("nvidia.com/gpu.product"); },
       [](const Node& n) { EXPECT_EQ(n.gpus[0].model, "GPU"); }},
      {"no memory label", [](Json& n) { n["metadata"]["labels"].erase("nvidia.com/gpu.memory"); },
       [](const Node& n) {
         EXPECT_EQ(n.gpus[0].memory, 0);
         EXPECT_EQ(n.capacity.gpu_memory, 0);
       }},
      {"not ready", [](Json& n) { n["status"]["conditions"][1]["status"] = "False"; },
       [](const Node& n) { EXPECT_EQ(n.condition, NodeCondition::kDown); }},
      {"ready unknown", [](Json& n) { n["status"]["conditions"][1]["status"] = "Unknown"; },
       [](const Node& n) { EXPECT_EQ(n.condition, NodeCondition::kDown); }},
      {"no conditions", [](Json& n) { n["status"].erase("conditions"); },
       [](const Node& n) { EXPECT_EQ(n.condition, NodeCondition::kDown); }},
      {"cordoned", [](Json& n) { n["spec"]["unschedulable"] = true; },
       [](const Node& n) { EXPECT_TRUE(n.unschedulable); }},
      {"allocatable missing: capacity", [](Json& n) { n["status"].erase("allocatable"); },
       [](const Node& n) {
         EXPECT_EQ(n.allocatable.cpu, 64000);
         EXPECT_TRUE(n.gpus[7].healthy);
       }},
      {"capacity missing: allocatable", [](Json& n) { n["status"].erase("capacity"); },
       [](const Node& n) {
         EXPECT_EQ(n.capacity.cpu, 63500);
         EXPECT_EQ(n.gpus.size(), 6u);
       }},
      {"binary and milli quantities",
       [](Json& n) {
         n["status"]["allocatable"]["cpu"] = "500m";
         n["status"]["allocatable"]["memory"] = "1000Ki";
       },
       [](const Node& n) {
         EXPECT_EQ(n.allocatable.cpu, 500);
         EXPECT_EQ(n.allocatable.memory, 1024000);
       }},
      {"numbers as quantities", [](Json& n) { n["status"]["allocatable"]["cpu"] = 4; },
       [](const Node& n) { EXPECT_EQ(n.allocatable.cpu, 4000); }},
      {"allocatable gpus above capacity are capped",
       [](Json& n) { n["status"]["allocatable"]["nvidia.com/gpu"] = "12"; },
       [](const Node& n) {
         EXPECT_EQ(n.allocatable.gpu, 8000);
         EXPECT_EQ(n.gpus.size(), 8u);
       }},
      {"no spec, no status",
       [](Json& n) {
         n.erase("spec");
         n.erase("status");
       },
       [](const Node& n) {
         EXPECT_EQ(n.capacity.cpu, 0);
         EXPECT_TRUE(n.gpus.empty());
         EXPECT_EQ(n.condition, NodeCondition::kDown);
       }},
      {"cluster labels win",
       [](Json& n) { n["metadata"]["labels"]["tessera.io/cluster"] = "other"; },
       [](const Node& n) { EXPECT_EQ(n.labels.at("tessera.io/cluster"), "prod"); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json object = GpuNode();
    c.change(object);
    absl::StatusOr<Node> node = NodeFromJson(object, kConversion);
    ASSERT_TRUE(node.ok()) << node.status();
    c.check(*node);
  }
}

TEST(NodeFromJsonTest, MalformedNodesAreRefusedNamingTheField) {
  struct Case {
    std::function<void(Json&)> change;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](Json& n) { n = Json::array(); }, "node: not a JSON object"},
      {[](Json& n) { n.erase("metadata"); }, "node: metadata: missing"},
      {[](Json& n) { n["metadata"].erase("name"); }, "node: metadata.name: missing"},
      {[](Json& n) { n["metadata"]["name"] = 3; }, "node: metadata.name: must be a string"},
      {[](Json& n) { n["metadata"]["labels"] = "x"; }, "node \"n1\": metadata.labels: must be"},
      {[](Json& n) { n["metadata"]["labels"]["zone"] = 1; },
       "node \"n1\": metadata.labels.zone: must be a string"},
      {[](Json& n) { n["spec"] = 1; }, "node \"n1\": spec: must be a map"},
      {[](Json& n) { n["spec"]["taints"] = "x"; }, "node \"n1\": spec.taints: must be a list"},
      {[](Json& n) { n["spec"]["taints"][0]["effect"] = "Sometimes"; },
       "node \"n1\": spec.taints[0].effect: 'Sometimes'"},
      {[](Json& n) { n["spec"]["taints"][1].erase("key"); },
       "node \"n1\": spec.taints[1].key: must be set"},
      {[](Json& n) { n["spec"]["unschedulable"] = "yes"; },
       "node \"n1\": spec.unschedulable: must be true or false"},
      {[](Json& n) { n["status"]["allocatable"]["cpu"] = "lots"; },
       "node \"n1\": status.allocatable.cpu:"},
      {[](Json& n) { n["status"]["capacity"]["memory"] = "-1Gi"; },
       "node \"n1\": status.capacity.memory:"},
      {[](Json& n) { n["status"]["capacity"]["nvidia.com/gpu"] = "0.5"; },
       "node \"n1\": status.capacity.nvidia.com/gpu:"},
      {[](Json& n) { n["status"]["capacity"]["nvidia.com/gpu"] = "129"; }, "more than 128 devices"},
      {[](Json& n) { n["status"]["capacity"]["cpu"] = Json::object(); },
       "status.capacity.cpu: must be a quantity string"},
      {[](Json& n) { n["status"]["capacity"] = Json::array(); },
       "node \"n1\": status.capacity: must be a map"},
      {[](Json& n) { n["status"]["conditions"] = 5; }, "status.conditions: must be a list"},
      {[](Json& n) { n["metadata"]["labels"]["nvidia.com/gpu.memory"] = "80GB"; },
       "metadata.labels.nvidia.com/gpu.memory: '80GB' is not a whole number of MiB"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    Json object = GpuNode();
    c.change(object);
    absl::StatusOr<Node> node = NodeFromJson(object, kConversion);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(node.status().message()), HasSubstr(c.error));
  }
}

TEST(ParseNodeListTest, KeepsGoodNodesAndReportsBadOnes) {
  Json bad = GpuNode();
  bad["metadata"]["name"] = "n2";
  bad["status"]["capacity"]["cpu"] = "x";
  Json list = {{"kind", "NodeList"},
               {"metadata", {{"resourceVersion", "99"}}},
               {"items", Json::array({GpuNode(), bad})}};
  absl::StatusOr<NodeList> nodes = ParseNodeList(list.dump(), kConversion);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->resource_version, "99");
  ASSERT_EQ(nodes->nodes.size(), 1u);
  EXPECT_EQ(nodes->nodes[0].name, "n1");
  ASSERT_EQ(nodes->errors.size(), 1u);
  EXPECT_THAT(nodes->errors[0], StartsWith("node \"n2\": status.capacity.cpu"));
  EXPECT_FALSE(ParseNodeList("{", kConversion).ok());
}

}  // namespace
}  // namespace tessera::agent::k8s

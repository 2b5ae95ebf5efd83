#include "agent/slurm/slurm_inventory.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kMiB = int64_t{1} << 20;

std::string ReadTestData(const std::string& name) {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  std::ifstream file(std::string(root != nullptr ? root : ".") + "/src/agent/slurm/testdata/" +
                     name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

json GoodNode(std::string name = "n1") {
  return {{"name", name},
          {"cpus", 64},
          {"real_memory", 512000},
          {"gres", "gpu:h100:8(S:0-1)"},
          {"partitions", {"gpu", "all"}},
          {"state", "idle"},
          {"state_flags", json::array()},
          {"address", "10.0.0.1"},
          {"cpu_load", 250},
          {"alloc_memory", 1024}};
}

SlurmInventoryOptions Options() {
  return {.cluster = "hpc", .labels = {{"tessera.io/cluster", "hpc"}, {"site", "a"}}};
}

absl::StatusOr<SlurmNodeList> Parse(const std::vector<json>& nodes,
                                    const SlurmInventoryOptions& options = Options()) {
  json list = json::array();
  for (const json& node : nodes) list.push_back(node);
  return ParseSlurmNodes(json{{"nodes", list}, {"errors", json::array()}}.dump(), options);
}

TEST(SlurmInventoryTest, MapsANode) {
  absl::StatusOr<SlurmNodeList> list = Parse({GoodNode()});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->nodes.size(), 1u);
  const Node& node = list->nodes[0].node;
  EXPECT_EQ(node.name, "n1");
  EXPECT_EQ(node.cluster, "hpc");
  EXPECT_EQ(node.pool, "gpu");
  EXPECT_EQ(node.capacity.cpu, 64000);
  EXPECT_EQ(node.capacity.memory, 512000 * kMiB);
  EXPECT_EQ(node.capacity.gpu, 8000);
  EXPECT_EQ(node.allocatable, node.capacity);
  ASSERT_EQ(node.gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(node.gpus[i].index, i);
    EXPECT_EQ(node.gpus[i].model, "H100");
    EXPECT_EQ(node.gpus[i].memory, 0);
    EXPECT_TRUE(node.gpus[i].healthy);
  }
  EXPECT_EQ(node.labels.at("tessera.io/cluster"), "hpc");
  EXPECT_EQ(node.labels.at("site"), "a");
  EXPECT_EQ(node.labels.at("tessera.io/partitions"), "gpu,all");
  EXPECT_EQ(node.labels.at("tessera.io/gpu-model"), "H100");
  EXPECT_EQ(node.labels.at("tessera.io/slurm-node"), "n1");
  EXPECT_EQ(node.condition, NodeCondition::kReady);
  EXPECT_FALSE(node.unschedulable);
  EXPECT_EQ(list->nodes[0].address, "10.0.0.1");
  EXPECT_EQ(list->nodes[0].usage.node, "n1");
  EXPECT_EQ(list->nodes[0].usage.cpu, 2500);
  EXPECT_EQ(list->nodes[0].usage.memory, 1024 * kMiB);
}

TEST(SlurmInventoryTest, WhatSlurmHasAllocated) {
  json busy = GoodNode();
  busy["alloc_cpus"] = 6;
  busy["alloc_memory"] = 4096;
  busy["gres_used"] = "gpu:h100:2(IDX:0-1),gpu:a100:1(IDX:5),mps:0";
  json bare = GoodNode("n2");
  bare.erase("alloc_memory");
  absl::StatusOr<SlurmNodeList> list = Parse({busy, bare});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->nodes.size(), 2u);
  EXPECT_EQ(list->nodes[0].allocated, (SlurmHeld{.cpu = 6000, .memory = 4096 * kMiB, .gpus = 3}));
  EXPECT_EQ(list->nodes[0].usage.memory, 4096 * kMiB);
  // The parser leaves allocatable whole; SlurmCluster offers what others leave (slurm_offer.h).
  EXPECT_EQ(list->nodes[0].node.allocatable, list->nodes[0].node.capacity);
  // Without the fields nothing is allocated.
  EXPECT_EQ(list->nodes[1].allocated, SlurmHeld{});
  EXPECT_FALSE(list->nodes[1].usage.memory.has_value());
}

TEST(SlurmInventoryTest, States) {
  struct Case {
    json state;
    json flags;
    NodeCondition condition;
    bool unschedulable;
  };
  const std::vector<Case> cases = {
      {"idle", json::array(), NodeCondition::kReady, false},
      {"mixed", json::array(), NodeCondition::kReady, false},
      {"allocated", json::array(), NodeCondition::kReady, false},
      {"down", json::array(), NodeCondition::kDown, false},
      {"idle", {"NOT_RESPONDING"}, NodeCondition::kDown, false},
      {"idle", {"FAIL"}, NodeCondition::kDown, false},
      {"future", json::array(), NodeCondition::kDown, false},
      {"idle", {"DRAIN"}, NodeCondition::kReady, true},
      {"mixed", {"DRAINING"}, NodeCondition::kReady, true},
      {"drained", json::array(), NodeCondition::kReady, true},
      {"down", {"DRAIN", "NOT_RESPONDING"}, NodeCondition::kDown, true},
      {"idle+drain", json::array(), NodeCondition::kReady, true},
      {"down*", json::array(), NodeCondition::kDown, false},
      {{"IDLE", "DRAIN"}, nullptr, NodeCondition::kReady, true},  // later API versions
      {{"DOWN"}, nullptr, NodeCondition::kDown, false},
  };
  for (const Case& c : cases) {
    json node = GoodNode();
    node["state"] = c.state;
    node["state_flags"] = c.flags;
    absl::StatusOr<SlurmNodeList> list = Parse({node});
    ASSERT_TRUE(list.ok()) << list.status();
    ASSERT_EQ(list->nodes.size(), 1u) << c.state << " " << c.flags << ": " << list->errors[0];
    EXPECT_EQ(list->nodes[0].node.condition, c.condition) << c.state << " " << c.flags;
    EXPECT_EQ(list->nodes[0].node.unschedulable, c.unschedulable) << c.state << " " << c.flags;
  }
}

TEST(SlurmInventoryTest, MalformedNodesAreSkippedAndNamed) {
  struct Case {
    std::string field;
    json value;  // nullptr removes the field
    std::string error;
  };
  const std::vector<Case> cases = {
      {"cpus", "64", "slurm node n1: cpus: must be an integer, got \"64\""},
      {"cpus", -3, "slurm node n1: cpus: must be a non-negative integer, got -3"},
      {"cpus", 8.5, "slurm node n1: cpus: must be an integer, got 8.5"},
      {"cpus", nullptr, "slurm node n1: cpus: missing"},
      {"cpus", uint64_t{1} << 63, "slurm node n1: cpus: 9223372036854775808 is out of range"},
      {"cpus", int64_t{1} << 40, "slurm node n1: cpus: 1099511627776 is out of range"},
      {"real_memory", nullptr, "slurm node n1: real_memory: missing"},
      {"real_memory", int64_t{1} << 60,
       "slurm node n1: real_memory: 1152921504606846976 MiB is out of range"},
      {"real_memory", json::array(), "slurm node n1: real_memory: must be an integer, got []"},
      {"gres", 8, "slurm node n1: gres: must be a string, got 8"},
      {"gres", "gpu:h100:x",
       "slurm node n1: gres \"gpu:h100:x\": item \"gpu:h100:x\": count \"x\" is not a number"},
      {"gres", "gpu:h100:99999",
       "slurm node n1: gres \"gpu:h100:99999\": item \"gpu:h100:99999\": count 99999 is more than "
       "128 GPUs"},
      {"gres", "gpu:a:100,gpu:b:100",
       "slurm node n1: gres \"gpu:a:100,gpu:b:100\": more than 128 GPUs"},
      {"gres", "gpu::2", "slurm node n1: gres \"gpu::2\": item \"gpu::2\": empty GPU type"},
      {"gres", "gpu:a:b:2",
       "slurm node n1: gres \"gpu:a:b:2\": item \"gpu:a:b:2\": expected gpu[:type][:count]"},
      {"partitions", "gpu", "slurm node n1: partitions: must be a list of strings, got \"gpu\""},
      {"partitions", {"gpu", 3}, "slurm node n1: partitions[1]: must be a string, got 3"},
      {"state", nullptr, "slurm node n1: state: missing"},
      {"state", 1, "slurm node n1: state: must be a string, got 1"},
      {"state_flags",
       {{{"a", 1}}},
       "slurm node n1: state_flags[0]: must be a string, got {\"a\":1}"},
      {"cpu_load", -1, "slurm node n1: cpu_load: must be a non-negative integer, got -1"},
      {"address", false, "slurm node n1: address: must be a string, got false"},
      {"alloc_cpus", -2, "slurm node n1: alloc_cpus: must be a non-negative integer, got -2"},
      {"alloc_cpus", "6", "slurm node n1: alloc_cpus: must be an integer, got \"6\""},
      {"alloc_cpus", int64_t{1} << 40, "slurm node n1: alloc_cpus: 1099511627776 is out of range"},
      {"alloc_memory", -1, "slurm node n1: alloc_memory: must be a non-negative integer, got -1"},
      {"alloc_memory", int64_t{1} << 60,
       "slurm node n1: alloc_memory: 1152921504606846976 MiB is out of range"},
      {"gres_used", 2, "slurm node n1: gres_used: must be a string, got 2"},
      {"gres_used", "gpu:h100:x(IDX:0)",
       "slurm node n1: gres_used \"gpu:h100:x(IDX:0)\": item \"gpu:h100:x(IDX:0)\": count \"x\" "
       "is not a number"},
      {"gres_used", "gpu:a:100(IDX:0-99),gpu:b:100(IDX:0-99)",
       "slurm node n1: gres_used \"gpu:a:100(IDX:0-99),gpu:b:100(IDX:0-99)\": more than 128 GPUs"},
  };
  for (const Case& c : cases) {
    json bad = GoodNode();
    if (c.value.is_null()) {
      bad.erase(c.field);
    } else {
      bad[c.field] = c.value;
    }
    absl::StatusOr<SlurmNodeList> list = Parse({bad, GoodNode("n2")});
    ASSERT_TRUE(list.ok()) << list.status();
    ASSERT_EQ(list->nodes.size(), 1u) << c.field;
    EXPECT_EQ(list->nodes[0].node.name, "n2");
    EXPECT_THAT(list->errors, ElementsAre(c.error)) << c.field;
  }
}

TEST(SlurmInventoryTest, EntriesWithoutANameOrTwiceListed) {
  json nameless = GoodNode();
  nameless.erase("name");
  absl::StatusOr<SlurmNodeList> list =
      Parse({42, nameless, GoodNode("n1"), GoodNode("n1"), json{{"name", 7}}});
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->nodes.size(), 1u);
  EXPECT_THAT(list->errors,
              ElementsAre("slurm nodes[0]: must be an object", "slurm nodes[1]: name: missing",
                          "slurm node n1: listed twice; the first is kept",
                          "slurm nodes[4]: name: must be a string, got 7"));
}

TEST(SlurmInventoryTest, MalformedDocuments) {
  const SlurmInventoryOptions options = Options();
  EXPECT_THAT(ParseSlurmNodes("", options).status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseSlurmNodes("[1]", options).status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseSlurmNodes("{\"nodes\": {}}", options).status().message(),
              HasSubstr("no \"nodes\" list"));
  EXPECT_EQ(ParseSlurmNodes(R"({"errors":[{"error":"Unspecified error","errno":-1}]})", options)
                .status()
                .message(),
            "slurm nodes: the reply has no \"nodes\" list: Unspecified error");
}

TEST(SlurmInventoryTest, PartitionFilter) {
  json other = GoodNode("n2");
  other["partitions"] = {"cpu"};
  json none = GoodNode("n3");
  none.erase("partitions");
  SlurmInventoryOptions options = Options();
  options.partition = "gpu";
  absl::StatusOr<SlurmNodeList> list = Parse({GoodNode("n1"), other, none}, options);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->nodes.size(), 1u);
  EXPECT_EQ(list->nodes[0].node.name, "n1");

  list = Parse({none});
  ASSERT_EQ(list->nodes.size(), 1u);
  EXPECT_EQ(list->nodes[0].node.pool, "default");
  EXPECT_FALSE(list->nodes[0].node.labels.contains("tessera.io/partitions"));
}

TEST(SlurmInventoryTest, DeclaredGpuTypes) {
  SlurmInventoryOptions options = Options();
  options.gpu_types["h100"] = {.model = "H100-80GB", .memory = 80 * 1024 * kMiB};
  absl::StatusOr<SlurmNodeList> list = Parse({GoodNode()}, options);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->nodes[0].node.gpus.size(), 8u);
  EXPECT_EQ(list->nodes[0].node.gpus[7].model, "H100-80GB");
  EXPECT_EQ(list->nodes[0].node.gpus[7].memory, 80 * 1024 * kMiB);
}

TEST(SlurmInventoryTest, GresStrings) {
  struct Case {
    std::string gres;
    std::vector<std::pair<std::string, int32_t>> gpus;
  };
  const std::vector<Case> cases = {
      {"", {}},
      {"(null)", {}},
      {"gpu:h100:8", {{"h100", 8}}},
      {"gpu:h100:8(S:0-1)", {{"h100", 8}}},
      {"gpu:a100:4(S:0,1),gpu:v100:2(S:1)", {{"a100", 4}, {"v100", 2}}},
      {"gpu:2", {{"", 2}}},
      {"gpu", {{"", 1}}},
      {"gpu:tesla", {{"tesla", 1}}},
      {"mps:200,gpu:h100:1,shard:8", {{"h100", 1}}},
      {"gpu:h100:0", {{"h100", 0}}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<GresGpus>> gpus = ParseGpuGres(c.gres);
    ASSERT_TRUE(gpus.ok()) << c.gres << ": " << gpus.status();
    std::vector<std::pair<std::string, int32_t>> got;
    for (const GresGpus& g : *gpus) got.emplace_back(g.type, g.count);
    EXPECT_EQ(got, c.gpus) << c.gres;
  }
}

TEST(SlurmInventoryTest, GpuModels) {
  EXPECT_EQ(GpuModelFromGresType("h100"), "H100");
  EXPECT_EQ(GpuModelFromGresType("a100-80gb"), "A100-80GB");
  EXPECT_EQ(GpuModelFromGresType("nvidia_h100_80gb_hbm3"), "H100-80GB-HBM3");
  EXPECT_EQ(GpuModelFromGresType("nvidia"), "NVIDIA");
  EXPECT_EQ(GpuModelFromGresType(""), "");
}

TEST(SlurmInventoryTest, RealSlurmReply) {
  absl::StatusOr<SlurmNodeList> list =
      ParseSlurmNodes(ReadTestData("nodes-v0.0.38.json"), Options());
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->nodes.size(), 4u);
  const Node& node1 = list->nodes[0].node;
  EXPECT_EQ(node1.name, "node1");
  EXPECT_EQ(node1.pool, "gpu");
  EXPECT_EQ(node1.capacity.cpu, 8000);
  EXPECT_EQ(node1.capacity.memory, 65536 * kMiB);
  EXPECT_EQ(node1.gpus.size(), 8u);
  EXPECT_EQ(node1.GpuModel(), "H100");
  EXPECT_EQ(list->nodes[0].allocated, SlurmHeld{});
  // node2 runs a job of 6 CPUs, 6 GiB and 2 GPUs (state mixed).
  EXPECT_EQ(list->nodes[1].allocated, (SlurmHeld{.cpu = 6000, .memory = 6144 * kMiB, .gpus = 2}));
  EXPECT_EQ(list->nodes[1].node.condition, NodeCondition::kReady);
  EXPECT_EQ(list->nodes[2].node.condition, NodeCondition::kDown);  // state=down
  EXPECT_TRUE(list->nodes[3].node.unschedulable);                  // drained
  EXPECT_EQ(list->nodes[3].node.condition, NodeCondition::kReady);
}

}  // namespace
}  // namespace tessera::agent

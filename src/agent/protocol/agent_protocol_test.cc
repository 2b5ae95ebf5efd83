#include "agent/protocol/agent_protocol.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;

v1::Node GoodNode(std::string name, uint32_t id) {
  Node node;
  node.name = std::move(name);
  node.pool = "gpu";
  node.labels = {{"rack", "r1"}};
  node.taints = {Taint{.key = "dedicated", .value = "infer", .effect = TaintEffect::kNoSchedule}};
  node.capacity = {.cpu = 8000, .memory = 64LL << 30};
  node.allocatable = {.cpu = 7000, .memory = 60LL << 30};
  for (int i = 0; i < 2; ++i) {
    node.gpus.push_back(GpuDevice{.index = i, .model = "H100", .memory = 80LL << 30});
  }
  return NodeToProto(node, id);
}

TEST(AgentProtocolTest, NodeRoundTripAddsClusterLabels) {
  const Labels cluster_labels = {{"region", "east"}, {"tessera.io/cluster", "east-1"}};
  v1::Node proto = GoodNode("gpu-1", 7);
  (*proto.mutable_labels())["tessera.io/cluster"] = "forged";
  absl::StatusOr<Node> node = NodeFromProto(proto, "east-1", cluster_labels, {}, "n");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->name, "gpu-1");
  EXPECT_EQ(node->cluster, "east-1");
  EXPECT_EQ(node->pool, "gpu");
  EXPECT_EQ(node->labels.at("region"), "east");
  EXPECT_EQ(node->labels.at("rack"), "r1");
  EXPECT_EQ(node->labels.at("tessera.io/cluster"), "east-1");
  EXPECT_EQ(node->capacity.cpu, 8000);
  EXPECT_EQ(node->allocatable.cpu, 7000);
  EXPECT_EQ(node->capacity.gpu, 2000);
  EXPECT_EQ(node->allocatable.gpu_memory, 160LL << 30);
  ASSERT_EQ(node->gpus.size(), 2u);
  EXPECT_EQ(node->gpus[1].model, "H100");
  ASSERT_EQ(node->taints.size(), 1u);
  EXPECT_EQ(node->taints[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(node->condition, NodeCondition::kReady);
}

struct BadNodeCase {
  std::string name;
  void (*mutate)(v1::Node&);
  std::string want;
};

TEST(AgentProtocolTest, BadNodesNameTheField) {
  const BadNodeCase cases[] = {
      {"negative cpu", [](v1::Node& n) { n.set_cpu(-8000); }, "n.cpu: must be >= 0, not -8000"},
      {"negative memory", [](v1::Node& n) { n.set_allocatable_memory(-1); },
       "n.allocatableMemory: must be >= 0"},
      {"allocatable above capacity", [](v1::Node& n) { n.set_allocatable_cpu(9000); },
       "n.allocatableCpu: 9000 exceeds the capacity 8000"},
      {"bad name", [](v1::Node& n) { n.set_name("a b"); }, "n.name: \"a b\" is not a node name"},
      {"empty name", [](v1::Node& n) { n.set_name(""); }, "n.name"},
      {"device order", [](v1::Node& n) { n.mutable_gpus(1)->set_index(5); },
       "n.gpus[1].index: must be 1"},
      {"empty model", [](v1::Node& n) { n.mutable_gpus(0)->set_model(""); }, "n.gpus[0].model"},
      {"unknown model", [](v1::Node& n) { n.mutable_gpus(0)->set_model("B300"); },
       "n.gpus[0].model: unknown GPU model \"B300\""},
      {"negative gpu memory", [](v1::Node& n) { n.mutable_gpus(1)->set_memory(-5); },
       "n.gpus[1].memory: must be >= 0"},
      {"taint effect", [](v1::Node& n) { n.mutable_taints(0)->set_effect("Never"); },
       "n.taints[0].effect"},
      {"empty label key", [](v1::Node& n) { (*n.mutable_labels())[""] = "x"; }, "n.labels"},
      {"too many devices",
       [](v1::Node& n) {
         for (int i = 2; i <= kMaxGpusPerNode; ++i) {
           v1::GpuDevice* gpu = n.add_gpus();
           gpu->set_index(i);
           gpu->set_model("H100");
         }
       },
       "n.gpus: 129 devices, more than the 128 a node may have"},
  };
  const InventoryRules rules{.known_gpu_models = {"H100", "A100-80GB"}};
  for (const BadNodeCase& c : cases) {
    v1::Node proto = GoodNode("gpu-1", 1);
    c.mutate(proto);
    absl::StatusOr<Node> node = NodeFromProto(proto, "c", {}, rules, "n");
    ASSERT_FALSE(node.ok()) << c.name;
    EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(node.status().message(), HasSubstr(c.want)) << c.name;
  }
}

TEST(AgentProtocolTest, ANodeMayHaveAsManyDevicesAsTheBound) {
  v1::Node proto = GoodNode("gpu-1", 1);
  for (int i = 2; i < kMaxGpusPerNode; ++i) {
    v1::GpuDevice* gpu = proto.add_gpus();
    gpu->set_index(i);
    gpu->set_model("H100");
  }
  absl::StatusOr<Node> node = NodeFromProto(proto, "c", {}, {}, "n");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->gpus.size(), static_cast<size_t>(kMaxGpusPerNode));
}

TEST(AgentProtocolTest, AnyValidModelWhenNoneAreListed) {
  v1::Node proto = GoodNode("gpu-1", 1);
  proto.mutable_gpus(0)->set_model("B300");
  proto.mutable_gpus(1)->set_model("B300");
  EXPECT_TRUE(NodeFromProto(proto, "c", {}, {}, "n").ok());
}

TEST(AgentProtocolTest, InventoryRefusesDuplicates) {
  v1::Inventory inventory;
  inventory.set_full(true);
  *inventory.add_nodes() = GoodNode("a", 0);
  *inventory.add_nodes() = GoodNode("b", 1);
  EXPECT_TRUE(InventoryFromProto(inventory, "c", {}, {}).ok());

  v1::Inventory same_name = inventory;
  *same_name.add_nodes() = GoodNode("a", 2);
  absl::StatusOr<std::vector<Node>> nodes = InventoryFromProto(same_name, "c", {}, {});
  ASSERT_FALSE(nodes.ok());
  EXPECT_THAT(nodes.status().message(),
              HasSubstr("inventory.nodes[2].name: duplicate node name \"a\""));

  v1::Inventory same_id = inventory;
  *same_id.add_nodes() = GoodNode("c", 1);
  nodes = InventoryFromProto(same_id, "c", {}, {});
  ASSERT_FALSE(nodes.ok());
  EXPECT_THAT(nodes.status().message(), HasSubstr("inventory.nodes[2].id: duplicate node id 1"));

  v1::Inventory removes = inventory;
  removes.add_removed(0);
  EXPECT_FALSE(InventoryFromProto(removes, "c", {}, {}).ok());
}

TEST(AgentProtocolTest, LaunchRoundTrip) {
  TaskLaunchSpec spec;
  spec.launch_id = "j1-worker-0-a1";
  spec.job_id = "j1";
  spec.task_name = "worker-0";
  spec.placement.node = "gpu-1";
  spec.placement.gpus = {0, 1};
  spec.placement.gpu_milli = 1000;
  spec.cpu = 4000;
  spec.memory = int64_t{16} << 30;
  spec.command = {"python", "train.py"};
  spec.args = {"--epochs", "3"};
  spec.env = {{"A", "1"}};
  spec.working_dir = "/work";
  spec.time_limit = Duration(60000);
  spec.termination_grace = Duration(5000);
  spec.peer_nodes = {"gpu-1", "gpu-2"};
  spec.rank = 0;
  absl::StatusOr<TaskLaunchSpec> back = LaunchFromBind(BindFromLaunch(spec, 3));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->launch_id, spec.launch_id);
  EXPECT_EQ(back->placement.node, "gpu-1");
  EXPECT_THAT(back->placement.gpus, ::testing::ElementsAre(0, 1));
  EXPECT_EQ(back->cpu, 4000);
  EXPECT_EQ(back->memory, int64_t{16} << 30);
  EXPECT_EQ(back->command, spec.command);
  EXPECT_EQ(back->args, spec.args);
  EXPECT_EQ(back->env, spec.env);
  EXPECT_EQ(back->time_limit, spec.time_limit);
  EXPECT_EQ(back->termination_grace, spec.termination_grace);
  EXPECT_FALSE(back->duration.has_value());
  EXPECT_EQ(back->peer_nodes, spec.peer_nodes);

  v1::Bind bad = BindFromLaunch(spec, 3);
  bad.set_launch_id("../x");
  EXPECT_THAT(LaunchFromBind(bad).status().message(), HasSubstr("bind.launchId"));
  bad = BindFromLaunch(spec, 3);
  bad.set_time_limit_ms(-1);
  EXPECT_THAT(LaunchFromBind(bad).status().message(), HasSubstr("bind.timeLimitMs"));
  bad = BindFromLaunch(spec, 3);
  bad.set_memory(-1);
  EXPECT_THAT(LaunchFromBind(bad).status().message(), HasSubstr("bind.memory"));
}

TEST(AgentProtocolTest, TaskEndRoundTrip) {
  TaskEnd end{.launch_id = "x-a1",
                      .phase = TaskPhase::kFailed,
                      .exit_code = 3,
                      .reason = "Error",
                      .message = "boom",
                      .time = FromMillis(1234)};
  absl::StatusOr<TaskEnd> back = EndFromUpdate(EndedUpdate(end, 2));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->phase, TaskPhase::kFailed);
  EXPECT_EQ(back->exit_code, 3);
  EXPECT_EQ(back->reason, "Error");
  EXPECT_EQ(back->time, FromMillis(1234));
  EXPECT_FALSE(EndFromUpdate(StartedUpdate("x-a1", FromMillis(1), 2)).ok());
}

TEST(AgentProtocolTest, LogRequestRoundTripAndChecks) {
  v1::LogRequest request =
      LogRequestMessage(4, 9, "j-worker-0-a1", LogStream::kStderr, 10, 100);
  EXPECT_EQ(request.epoch(), 4u);
  EXPECT_EQ(request.request_id(), 9u);
  EXPECT_EQ(LogStreamFromProto(request.stream()), LogStream::kStderr);
  EXPECT_TRUE(CheckLogRequest(request).ok());

  v1::LogRequest bad = request;
  bad.set_launch_id("../etc");
  EXPECT_THAT(CheckLogRequest(bad).message(), HasSubstr("logRequest.launchId"));
  bad = request;
  bad.set_stream(static_cast<v1::LogRequest::Stream>(7));
  EXPECT_THAT(CheckLogRequest(bad).message(), HasSubstr("logRequest.stream"));
  bad = request;
  bad.set_offset(-1);
  EXPECT_THAT(CheckLogRequest(bad).message(), HasSubstr("logRequest.offset"));
  bad = request;
  bad.set_limit(0);
  EXPECT_EQ(CheckLogRequest(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(CheckLogRequest(bad).message(), HasSubstr("logRequest.limit"));
}

TEST(AgentProtocolTest, LogChunkRoundTripAndChecks) {
  const v1::LogChunk chunk =
      LogChunkToProto(LogChunk{.data = "hello", .next_offset = 15, .end = true}, 9, 4);
  EXPECT_EQ(chunk.epoch(), 4u);
  EXPECT_EQ(chunk.request_id(), 9u);
  ASSERT_TRUE(CheckLogChunk(chunk, 10, 100).ok());
  absl::StatusOr<LogChunk> back = LogChunkFromProto(chunk);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data, "hello");
  EXPECT_EQ(back->next_offset, 15);
  EXPECT_TRUE(back->end);

  const v1::LogChunk error =
      LogChunkToProto(absl::NotFoundError("no log for task j-worker-0-a1"), 9, 4);
  ASSERT_TRUE(CheckLogChunk(error, 10, 100).ok());
  EXPECT_EQ(LogChunkFromProto(error).status(),
            absl::NotFoundError("no log for task j-worker-0-a1"));

  EXPECT_THAT(CheckLogChunk(chunk, 10, 4).message(), HasSubstr("logChunk.data"));
  EXPECT_THAT(CheckLogChunk(chunk, 11, 100).message(), HasSubstr("logChunk.nextOffset"));
  EXPECT_THAT(CheckLogChunk(chunk, std::numeric_limits<int64_t>::max() - 2, 100).message(),
              HasSubstr("logChunk.nextOffset"));
  v1::LogChunk bad = error;
  bad.set_data("x");
  EXPECT_THAT(CheckLogChunk(bad, 10, 100).message(), HasSubstr("logChunk.data"));
  bad = error;
  bad.set_error_code(17);
  EXPECT_EQ(CheckLogChunk(bad, 10, 100).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(CheckLogChunk(bad, 10, 100).message(), HasSubstr("logChunk.errorCode"));
  bad.set_error_code(-1);
  EXPECT_THAT(CheckLogChunk(bad, 10, 100).message(), HasSubstr("logChunk.errorCode"));
}

TEST(AgentProtocolTest, ClusterNames) {
  EXPECT_TRUE(IsValidClusterName("east-1"));
  EXPECT_FALSE(IsValidClusterName("East"));
  EXPECT_FALSE(IsValidClusterName("-x"));
  EXPECT_FALSE(IsValidClusterName(""));
  EXPECT_FALSE(IsValidClusterName(std::string(64, 'a')));
}

}  // namespace
}  // namespace tessera::agent

// Agent sessions against a real `tessera server`, driven by a raw AgentService client speaking
// the protocol message by message (proto/tessera/agent/v1/agent.proto): a newer session fences
// the older one, a message naming a stale epoch is refused with FAILED_PRECONDITION, and bad
// input ends that session with INVALID_ARGUMENT naming the field — while another cluster's real
// agent stays connected and its jobs are unaffected. Every wait is bounded and generous.
#include <memory>
#include <string>
#include <vector>

#include "agent_process.h"
#include "agent_server_test.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "rest_api.h"
#include "tessera/agent/v1/agent.grpc.pb.h"

namespace tessera::integration {
namespace {

namespace v1 = ::tessera::agent::v1;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kGood[] = "good";

// One raw session: a Connect stream of its own channel.
class RawSession {
 public:
  RawSession(const std::string& target, const std::string& token)
      : stub_(v1::AgentService::NewStub(
            grpc::CreateChannel(target, grpc::InsecureChannelCredentials()))) {
    context_.AddMetadata("authorization", "Bearer " + token);
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(2));
    stream_ = stub_->Connect(&context_);
  }

  // Registers `cluster`; the epoch the server gives (0 when it answered otherwise).
  uint64_t Register(const std::string& cluster, uint64_t previous_epoch = 0) {
    v1::AgentMessage message;
    v1::Register* request = message.mutable_register_();
    request->set_cluster(cluster);
    request->set_backend("sim");
    request->set_agent_version("raw-test");
    request->set_previous_epoch(previous_epoch);
    v1::ServerMessage reply;
    if (!stream_->Write(message) || !stream_->Read(&reply) || !reply.has_registered()) return 0;
    return reply.registered().epoch();
  }

  bool Send(const v1::AgentMessage& message) { return stream_->Write(message); }
  bool Read(v1::ServerMessage* message) { return stream_->Read(message); }

  // Reads what is left until the server ends the stream; its status.
  grpc::Status End() {
    v1::ServerMessage ignored;
    while (stream_->Read(&ignored)) {
    }
    return stream_->Finish();
  }

 private:
  std::unique_ptr<v1::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>> stream_;
};

// A valid simulated node with `gpus` H100s.
v1::Node RawNode(uint32_t id, const std::string& name, int gpus = 1) {
  v1::Node node;
  node.set_id(id);
  node.set_name(name);
  node.set_cpu(8000);
  node.set_memory(int64_t{64} << 30);
  node.set_allocatable_cpu(8000);
  node.set_allocatable_memory(int64_t{64} << 30);
  node.set_ready(true);
  v1::Taint* taint = node.add_taints();
  taint->set_key("tessera.io/simulated");
  taint->set_value("true");
  taint->set_effect("NoSchedule");
  for (int g = 0; g < gpus; ++g) {
    v1::GpuDevice* gpu = node.add_gpus();
    gpu->set_index(g);
    gpu->set_model("H100");
    gpu->set_memory(int64_t{80} << 30);
    gpu->set_healthy(true);
  }
  return node;
}

v1::AgentMessage FullInventory(uint64_t epoch, const std::vector<v1::Node>& nodes) {
  v1::AgentMessage message;
  v1::Inventory* inventory = message.mutable_inventory();
  inventory->set_epoch(epoch);
  inventory->set_full(true);
  for (const v1::Node& node : nodes) *inventory->add_nodes() = node;
  return message;
}

v1::AgentMessage Heartbeat(uint64_t epoch, uint64_t sequence) {
  v1::AgentMessage message;
  v1::Heartbeat* heartbeat = message.mutable_heartbeat();
  heartbeat->set_epoch(epoch);
  heartbeat->set_sequence(sequence);
  heartbeat->add_node_id(0);
  heartbeat->add_cpu(1000);
  return message;
}

class AgentSessionTest : public AgentServerTest {
 protected:
  AgentSessionTest() : AgentServerTest("tessera-agent-session") {
    agents_extra_ = "  gpuModels: [H100, A100-80GB]\n";
  }

  void SetUp() override {
    AgentServerTest::SetUp();
    if (HasFatalFailure()) return;
    good_ = &AddAgent(kGood, "sim", {"--sim-node-count", "2"});
    const absl::Status registered = good_->Start();
    ASSERT_TRUE(registered.ok()) << registered;
    ASSERT_TRUE(WaitUntil([&] { return ClusterIs(Rest(), kGood, true, 2); }));
  }

  std::unique_ptr<RawSession> Raw() const {
    return std::make_unique<RawSession>(server_->grpc_target(), server_->admin_token());
  }

  // The good agent never lost its session: still running, registered once.
  void ExpectGoodAgentUndisturbed() {
    EXPECT_TRUE(good_->running());
    EXPECT_EQ(good_->AwaitExit(std::chrono::seconds(0)), -1);
    const std::string log = good_->Log();
    EXPECT_EQ(log.find("registered with"), log.rfind("registered with")) << log;
    // Reachable (eventually: a heartbeat delayed past the short timeout by a loaded machine
    // would make it Unreachable for a moment, which is not what this checks).
    EXPECT_TRUE(WaitUntil([&] { return ClusterIs(Rest(), kGood, true, 2); }))
        << ClusterItem(Rest(), kGood).dump();
  }

  AgentProcess* good_ = nullptr;
};

TEST_F(AgentSessionTest, NewerSessionFencesTheOlderAndStaleEpochsAreRefused) {
  const RestApi api = Rest();
  const HttpAnswer submitted = api.Submit(SimGangJob("steady", kGood, 1, 8, ""));
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["metadata"]["id"];
  ASSERT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");

  // Session 1 of "raw": registered, inventory, resync answered, heartbeats.
  std::unique_ptr<RawSession> first = Raw();
  const uint64_t epoch1 = first->Register("raw");
  ASSERT_EQ(epoch1, 1u);
  ASSERT_TRUE(first->Send(FullInventory(epoch1, {RawNode(0, "raw-n0")})));
  v1::ServerMessage resync;
  ASSERT_TRUE(first->Read(&resync));
  ASSERT_TRUE(resync.has_resync()) << resync.DebugString();
  EXPECT_EQ(resync.resync().epoch(), epoch1);
  EXPECT_EQ(resync.resync().launches_size(), 0);
  v1::AgentMessage report;
  report.mutable_resync_report()->set_epoch(epoch1);
  ASSERT_TRUE(first->Send(report));
  ASSERT_TRUE(first->Send(Heartbeat(epoch1, 1)));
  ASSERT_TRUE(WaitUntil([&] { return ClusterNodes(api, "raw").size() == 1; }))
      << ClusterItem(api, "raw").dump();

  // Session 2 fences session 1: its stream ends at its next message.
  std::unique_ptr<RawSession> second = Raw();
  const uint64_t epoch2 = second->Register("raw", epoch1);
  ASSERT_EQ(epoch2, 2u);
  first->Send(Heartbeat(epoch1, 2));
  const grpc::Status fenced = first->End();
  EXPECT_EQ(fenced.error_code(), grpc::FAILED_PRECONDITION) << fenced.error_message();
  EXPECT_THAT(fenced.error_message(), HasSubstr("the session of epoch 1 was superseded"));

  // A message of session 2 that names epoch 1 is refused.
  ASSERT_TRUE(second->Send(Heartbeat(epoch1, 1)));
  const grpc::Status stale = second->End();
  EXPECT_EQ(stale.error_code(), grpc::FAILED_PRECONDITION) << stale.error_message();
  EXPECT_THAT(stale.error_message(), AllOf(HasSubstr("heartbeat"), HasSubstr("stale epoch")));

  ExpectGoodAgentUndisturbed();
  EXPECT_EQ(api.Job(id).body["status"]["phase"], "Running");
  ASSERT_EQ(api.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(id)["status"]["phase"], "Cancelled");
}

TEST_F(AgentSessionTest, BadInventoryEndsThatSessionNamingTheFieldOnly) {
  const RestApi api = Rest();
  const HttpAnswer submitted = api.Submit(SimGangJob("steady", kGood, 1, 8, ""));
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["metadata"]["id"];
  ASSERT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");

  v1::Node negative_cpu = RawNode(0, "bad-cpu-n0");
  negative_cpu.set_cpu(-8000);
  v1::Node unknown_model = RawNode(0, "bad-gpu-n0", 2);
  unknown_model.mutable_gpus(1)->set_model("Z100");
  struct Case {
    std::string cluster;
    std::vector<v1::Node> nodes;
    std::string field;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {"bad-cpu", {negative_cpu}, "inventory.nodes[0].cpu", "must be >= 0, not -8000"},
      {"bad-dup",
       {RawNode(0, "bad-dup-n0"), RawNode(1, "bad-dup-n0")},
       "inventory.nodes[1].name",
       "duplicate node name \"bad-dup-n0\""},
      {"bad-gpu", {unknown_model}, "inventory.nodes[0].gpus[1].model",
       "unknown GPU model \"Z100\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.cluster);
    std::unique_ptr<RawSession> raw = Raw();
    const uint64_t epoch = raw->Register(c.cluster);
    ASSERT_EQ(epoch, 1u);
    ASSERT_TRUE(raw->Send(FullInventory(epoch, c.nodes)));
    const grpc::Status refused = raw->End();
    EXPECT_EQ(refused.error_code(), grpc::INVALID_ARGUMENT) << refused.error_message();
    EXPECT_THAT(refused.error_message(), AllOf(HasSubstr(c.field), HasSubstr(c.detail)));
    EXPECT_TRUE(ClusterNodes(api, c.cluster).empty());
  }

  ExpectGoodAgentUndisturbed();
  EXPECT_EQ(api.Job(id).body["status"]["phase"], "Running");
  const HttpAnswer quick = api.Submit(SimGangJob("quick", kGood, 1, 1, "1s"));
  ASSERT_EQ(quick.status, 201) << quick.text;
  const Json done = api.WaitForEnd(quick.body["metadata"]["id"]);
  EXPECT_EQ(done["status"]["phase"], "Succeeded") << done.dump();
  EXPECT_EQ(done["status"]["cluster"], kGood);
  ASSERT_EQ(api.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(id)["status"]["phase"], "Cancelled");
}

}  // namespace
}  // namespace tessera::integration

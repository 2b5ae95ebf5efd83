// Tessera over a real Slurm, end to end: a real `tessera server` (no cluster of its own), a real
// `tessera agent --backend slurm` and a real single-host Slurm (slurmctld, four slurmd virtual
// nodes with eight fake H100s each, slurmrestd with JWT) started by scripts/slurm. A gang
// submitted through Tessera's REST API runs as Slurm batch jobs on the nodes Tessera chose and
// succeeds; a cancel reaches Slurm; a Slurm node set DOWN is NotReady in Tessera and Ready
// again after resume. Needs root (the Slurm daemons); TESSERA_SLURM_E2E_INSTANCE (default 7)
// picks the Slurm instance.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/slurm/testing/real_slurm.h"
#include "agent_process.h"
#include "agent_server_test.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rest_api.h"

namespace tessera::integration {
namespace {

using agent::testing::RealSlurm;
using ::testing::HasSubstr;

constexpr char kCluster[] = "hpc";

std::string Instance() {
  const char* instance = std::getenv("TESSERA_SLURM_E2E_INSTANCE");
  return instance != nullptr ? instance : "7";
}

// A job of `replicas` tasks with `gpus` GPUs each running `script`, on cluster `kCluster`.
Json SlurmJob(std::string_view name, int replicas, int gpus, std::string_view script) {
  return ClusterGpuJob(name, kCluster, replicas, gpus, script);
}

class AgentSlurmE2eTest : public AgentServerTest {
 protected:
  AgentSlurmE2eTest() : AgentServerTest("tessera-agent-slurm") {}

  void SetUp() override {
    slurm_ = std::make_unique<RealSlurm>(Instance(), 4, 8);
    ASSERT_TRUE(slurm_->error().empty()) << slurm_->error();
    AgentServerTest::SetUp();
    if (HasFatalFailure()) return;
    agent_ = &AddAgent(kCluster, "slurm",
                       {"--slurm-url", slurm_->Var("SLURM_REST_URL"), "--slurm-jwt",
                        slurm_->Var("SLURM_JWT"), "--slurm-user", slurm_->Var("SLURM_REST_USER"),
                        "--slurm-log-dir", slurm_->Var("SLURM_TEST_DIR") + "/jobs", "--label",
                        "site=test"});
    ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  }

  void TearDown() override {
    AgentServerTest::TearDown();  // the agent and the server before Slurm
    slurm_.reset();
  }

  std::unique_ptr<RealSlurm> slurm_;
  AgentProcess* agent_ = nullptr;
};

TEST_F(AgentSlurmE2eTest, JobsRunOnTheChosenSlurmNodesAndNodeStateFollowsSlurm) {
  const RestApi api = Rest();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }))
      << ClusterItem(api, kCluster).dump();
  const Json cluster = ClusterItem(api, kCluster);
  EXPECT_EQ(cluster["backend"], "slurm");
  EXPECT_EQ(cluster["labels"]["site"], "test");
  for (const Json& node : ClusterNodes(api, kCluster)) {
    EXPECT_EQ(node["gpus"].size(), 8u) << node.dump();
    EXPECT_EQ(node["gpus"][0]["model"], "H100") << node.dump();
  }

  // A gang of two 4-GPU tasks: each writes the Slurm node it ran on and its GPUs.
  const std::string id = SubmitOk(SlurmJob(
      "hello", 2, 4, "echo \"ran-on=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES\""));
  const Json done = api.WaitForEnd(id);
  ASSERT_EQ(done["status"]["phase"], "Succeeded") << done.dump();
  EXPECT_EQ(done["status"]["cluster"], kCluster);
  std::set<std::string> nodes;
  for (const Json& task : done["status"]["tasks"]) {
    const std::string node = task.value("node", "");
    nodes.insert(node);
    // The batch job's output file, named after the launch (docs/agents/slurm.md).
    const std::string path = fmt::format("{}/jobs/tessera-{}-{}-a0.stdout.log",
                                         slurm_->Var("SLURM_TEST_DIR"), id,
                                         task.value("name", ""));
    std::ifstream file(path);
    std::string line;
    ASSERT_TRUE(std::getline(file, line)) << path;
    EXPECT_THAT(line, HasSubstr("ran-on=" + node)) << path;
    EXPECT_THAT(line, HasSubstr("gpus=0,1,2,3")) << path;
  }
  EXPECT_EQ(nodes.size(), 2u) << done.dump();

  // A long job is cancelled through Tessera: Slurm's job ends, the job is Cancelled.
  const std::string long_id = SubmitOk(SlurmJob("long", 1, 1, "sleep 600"));
  ASSERT_EQ(api.WaitForPhase(long_id, {"Running"})["status"]["phase"], "Running");
  ASSERT_EQ(api.Post("/api/v1/jobs/" + long_id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(long_id)["status"]["phase"], "Cancelled");
  EXPECT_TRUE(WaitUntil([&] {
    std::optional<std::string> queue = agent::testing::Shell(fmt::format(
        "env -u SLURM_JWT SLURM_CONF={} squeue -h -n {}-main-0-a0 -t all -o %T",
        slurm_->Var("SLURM_CONF"), long_id));
    return queue.has_value() && (queue->empty() || queue->find("CANCELLED") != std::string::npos);
  }));

  // A node set DOWN in Slurm is NotReady in Tessera, and Ready again after resume.
  ASSERT_TRUE(slurm_->Scontrol("update nodename=node3 state=down reason=e2e"));
  EXPECT_TRUE(WaitUntil([&] { return NodeReady(api, kCluster, "node3", false); }))
      << Json(ClusterNodes(api, kCluster)).dump();
  ASSERT_TRUE(slurm_->Scontrol("update nodename=node3 state=resume"));
  EXPECT_TRUE(WaitUntil([&] { return NodeReady(api, kCluster, "node3", true); }))
      << Json(ClusterNodes(api, kCluster)).dump();
}

}  // namespace
}  // namespace tessera::integration

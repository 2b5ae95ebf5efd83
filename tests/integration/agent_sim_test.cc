// A simulated fleet behind a real `tessera agent --backend sim` process, connected to a real
// `tessera server` that has no cluster of its own: a job submitted before the cluster registers
// waits for it; the cluster registers and its nodes appear, a gang job runs there; when the agent dies the nodes go NotReady and the cluster unreachable,
// after the grace the running job is requeued whole, and when the agent comes back the job runs
// again. A server restart leaves the cluster and its running gang in place: the agent rejoins.
// Every wait is bounded and generous; nothing asserts on timing.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent_process.h"
#include "agent_server_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rest_api.h"

namespace tessera::integration {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kCluster[] = "sim-a";

class AgentSimTest : public AgentServerTest {
 protected:
  AgentSimTest() : AgentServerTest("tessera-agent-sim") {}

  void SetUp() override {
    AgentServerTest::SetUp();
    if (HasFatalFailure()) return;
    agent_ = &AddAgent(kCluster, "sim", {"--sim-node-count", "4"});
  }

  // The events after the last one of type `type` (all of them when there is none).
  std::vector<Json> EventsAfterLast(const std::string& id, std::string_view type) const {
    const Json events = Events(id);
    std::vector<Json> after;
    for (const Json& event : events) {
      if (event.value("type", "") == type) {
        after.clear();
      } else {
        after.push_back(event);
      }
    }
    return after;
  }

  AgentProcess* agent_ = nullptr;
};

TEST_F(AgentSimTest, FleetRegistersRunsGangsAndIsRequeuedWholeWhenItsAgentDies) {
  const RestApi api = Rest();
  // A job submitted before any cluster has registered waits for one.
  const std::string early_id = SubmitOk(SimGangJob("early", kCluster, 2, 8, "1s"));
  Json early;
  ASSERT_TRUE(WaitUntil([&] {  // a scheduling cycle has judged it
    early = api.Get("/api/v1/jobs/" + early_id).body;
    return !early["status"].value("reason", "").empty();
  })) << early.dump();
  ASSERT_EQ(early["status"]["phase"], "Pending") << early.dump();
  EXPECT_EQ(early["status"]["reason"], "InsufficientResources") << early.dump();
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  const Json early_done = api.WaitForEnd(early_id);
  EXPECT_EQ(early_done["status"]["phase"], "Succeeded") << early_done.dump();

  // The cluster and its nodes.
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }))
      << ClusterItem(api, kCluster).dump();
  const Json cluster = ClusterItem(api, kCluster);
  EXPECT_EQ(cluster["backend"], "sim");
  EXPECT_EQ(cluster["nodes"], 4);
  EXPECT_EQ(cluster["labels"]["tessera.io/cluster"], kCluster);
  const std::vector<Json> nodes = ClusterNodes(api, kCluster);
  ASSERT_EQ(nodes.size(), 4u);
  for (const Json& node : nodes) {
    EXPECT_TRUE(node["ready"].get<bool>()) << node.dump();
    EXPECT_EQ(node["labels"]["tessera.io/cluster"], kCluster) << node.dump();
    EXPECT_EQ(node["gpus"].size(), 8u) << node.dump();
  }

  // A gang of two 8-GPU tasks runs there and ends.
  const std::string short_id = SubmitOk(SimGangJob("short", kCluster, 2, 8, "1s"));
  const Json done = api.WaitForEnd(short_id);
  ASSERT_EQ(done["status"]["phase"], "Succeeded") << done.dump();
  EXPECT_EQ(done["status"]["cluster"], kCluster);

  // A long gang runs; its agent dies.
  const std::string id = SubmitOk(SimGangJob("long", kCluster, 2, 8, ""));
  const Json running = api.WaitForPhase(id, {"Running"});
  ASSERT_EQ(running["status"]["phase"], "Running") << running.dump();
  EXPECT_EQ(running["status"]["cluster"], kCluster);
  std::set<std::string> tasks;
  for (const Json& task : running["status"]["tasks"]) tasks.insert(task["name"]);
  ASSERT_EQ(tasks.size(), 2u);
  agent_->Kill();

  // Unreachable: the nodes NotReady, then the tasks lost and the gang requeued whole.
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, false, 0); }))
      << ClusterItem(api, kCluster).dump();
  for (const Json& node : ClusterNodes(api, kCluster)) {
    EXPECT_FALSE(node["ready"].get<bool>()) << node.dump();
  }
  ASSERT_TRUE(WaitUntil([&] {
    for (const Json& event : Events(id)) {
      if (event.value("type", "") == "Requeued") return true;
    }
    return false;
  })) << Events(id).dump();
  int lost = 0;
  for (const Json& event : Events(id)) {
    if (event.value("type", "") == "TaskEnded" && event.value("reason", "") == "Lost") ++lost;
    if (event.value("type", "") == "Requeued") {
      EXPECT_EQ(event["reason"], "Lost") << event.dump();
    }
  }
  EXPECT_EQ(lost, 2) << Events(id).dump();
  const Json requeued = api.Job(id).body;
  EXPECT_EQ(requeued["status"]["phase"], "Pending") << requeued.dump();

  // The agent comes back: the nodes are Ready and the gang runs again, both tasks bound anew.
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }))
      << ClusterItem(api, kCluster).dump();
  const Json again = api.WaitForPhase(id, {"Running"});
  ASSERT_EQ(again["status"]["phase"], "Running") << again.dump();
  EXPECT_EQ(again["status"]["cluster"], kCluster);
  std::vector<std::string> bound;
  for (const Json& event : EventsAfterLast(id, "Requeued")) {
    if (event.value("type", "") == "Bound") bound.push_back(event.value("message", ""));
  }
  ASSERT_EQ(bound.size(), 1u) << Events(id).dump();
  for (const std::string& task : tasks) EXPECT_THAT(bound[0], HasSubstr(task + " → "));

  ASSERT_EQ(api.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(id)["status"]["phase"], "Cancelled");
}

TEST_F(AgentSimTest, ADecommissionedClusterIsDeletedAndItsNameStartsAfresh) {
  const RestApi api = Rest();
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }))
      << ClusterItem(api, kCluster).dump();
  const std::string id = SubmitOk(SimGangJob("long", kCluster, 2, 8, ""));
  ASSERT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");

  const std::string path = std::string("/api/v1/clusters/") + kCluster;
  const HttpAnswer connected = api.Delete(path);
  EXPECT_EQ(connected.status, 409) << connected.text;
  EXPECT_THAT(connected.text, HasSubstr("stop the agent first"));
  const std::string tenant = api.IssueToken("team-a");
  EXPECT_EQ(api.WithToken(tenant).Delete(path).status, 403);

  // The agent stops: its cluster is unreachable at once, and can then be deleted. The running
  // gang's tasks end Lost and the job waits for another cluster.
  agent_->Stop();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, false, 0); }))
      << ClusterItem(api, kCluster).dump();
  const HttpAnswer deleted = api.Delete(path);
  ASSERT_EQ(deleted.status, 200) << deleted.text;
  EXPECT_TRUE(ClusterItem(api, kCluster).is_null());
  EXPECT_TRUE(WaitUntil([&] { return ClusterNodes(api, kCluster).empty(); }));
  const auto lost = [&] {
    int count = 0;
    for (const Json& event : Events(id)) {
      count += event.value("type", "") == "TaskEnded" && event.value("reason", "") == "Lost";
    }
    return count;
  };
  EXPECT_TRUE(WaitUntil([&] { return lost() == 2; })) << Events(id).dump();
  const Json requeued = api.WaitForPhase(id, {"Pending"});
  EXPECT_EQ(requeued["status"]["phase"], "Pending") << requeued.dump();
  EXPECT_EQ(api.Delete(path).status, 404);

  // An agent registering the name again starts a new cluster, and the job runs there.
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }))
      << ClusterItem(api, kCluster).dump();
  EXPECT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");
  ASSERT_EQ(api.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(id)["status"]["phase"], "Cancelled");
}

// A server restart while the agent is connected: the agent rejoins the restarted server (its
// gRPC port is kept) in a new epoch, and the gang it runs is neither lost nor requeued. The
// grace is a minute so that only a failure to rejoin, not a slow machine, can lose the tasks.
class AgentSimRestartTest : public AgentSimTest {
 protected:
  AgentSimRestartTest() { lost_grace_ = "1m"; }
};

TEST_F(AgentSimRestartTest, AnAgentRejoinsARestartedServerAndItsGangKeepsRunning) {
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  const std::string id = [&] {
    const RestApi api = Rest();
    EXPECT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }));
    return SubmitOk(SimGangJob("long", kCluster, 2, 8, ""));
  }();
  ASSERT_EQ(Rest().WaitForPhase(id, {"Running"})["status"]["phase"], "Running");

  ASSERT_EQ(server_->Stop(), 0);
  ASSERT_TRUE(server_->Start().ok());
  const RestApi api = Rest();
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(agent_->Log(), "(epoch 2)"); }))
      << agent_->Log();
  EXPECT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 4); }))
      << ClusterItem(api, kCluster).dump();
  EXPECT_EQ(api.Get("/api/v1/jobs/" + id).body["status"]["phase"], "Running");
  for (const Json& event : Events(id)) {
    EXPECT_NE(event.value("type", ""), "TaskEnded") << event.dump();
  }
  // The lease still holds: a cancel reaches the agent through its new session.
  ASSERT_EQ(api.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(id)["status"]["phase"], "Cancelled");
}

}  // namespace
}  // namespace tessera::integration

// RemoteCluster and AgentClusters: registration and epochs, bindings as leases, heartbeats,
// unreachable clusters and lost tasks, resync, bad input, inventory deltas, deletion and the
// store across restarts.
#include "server/agent/remote_cluster.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/testing/remote_cluster_fixture.h"

namespace tessera::server {
namespace {

namespace v1 = agent::v1;
using testing::Answer;
using testing::FullInventory;
using testing::Hello;
using testing::Launch;
using testing::LogRequestChannel;
using testing::ProtoNode;
using testing::RecordingChannel;
using testing::RemoteClusterTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST_F(RemoteClusterTest, RegistrationGivesEpochsAndTheInventoryReachesTheScheduler) {
  MakeClusters();
  RecordingChannel first;
  auto [cluster, epoch] = Connect(first, "east", 3);
  EXPECT_EQ(epoch, 1u);
  EXPECT_THAT(attached_, ElementsAre(cluster));
  EXPECT_EQ(cluster->backend(), "sim");
  EXPECT_EQ(cluster->labels().at("region"), "east");
  EXPECT_EQ(cluster->labels().at("tessera.io/cluster"), "east");
  ASSERT_THAT(observer_.changes, SizeIs(3));
  EXPECT_EQ(observer_.changes[0].cluster, "east");
  EXPECT_EQ(observer_.changes[0].labels.at("region"), "east");
  EXPECT_EQ(observer_.changes[0].capacity.gpu, 8000);
  ASSERT_THAT(first.sent, SizeIs(1));
  EXPECT_TRUE(first.sent[0].has_resync());
  EXPECT_THAT(first.sent[0].resync().launches(), IsEmpty());

  // A second session fences the first; the first one's messages are refused from then on.
  RecordingChannel second;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> again =
      clusters_->Attach(&second, Hello("east", 1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->second, 2u);
  EXPECT_EQ(first.closed.code(), absl::StatusCode::kFailedPrecondition);
  absl::Status stale = cluster->OnHeartbeat(1, Beat(1, 3));
  EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stale.message(), HasSubstr("stale epoch 1"));
  // A message naming an old epoch on the new session is refused too.
  EXPECT_EQ(cluster->OnHeartbeat(2, Beat(1, 3)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(attached_, SizeIs(1));  // the job manager is told once
}

TEST_F(RemoteClusterTest, BindingsAreLeasesOfTheSessionAndWaitForTheResync) {
  MakeClusters();
  RecordingChannel channel;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> attached =
      clusters_->Attach(&channel, Hello("east"));
  ASSERT_TRUE(attached.ok());
  auto [cluster, epoch] = *attached;
  ASSERT_TRUE(cluster->OnInventory(epoch, FullInventory(epoch, 2, "east-n")).ok());
  cluster->Launch(Launch("a-w-a1", "east-n0"));
  ASSERT_THAT(channel.sent, SizeIs(1));  // only the resync: the bind waits for its report
  v1::ResyncReport report;
  report.set_epoch(epoch);
  ASSERT_TRUE(cluster->OnResyncReport(epoch, report).ok());
  ASSERT_THAT(channel.sent, SizeIs(2));
  ASSERT_TRUE(channel.sent[1].has_bind());
  EXPECT_EQ(channel.sent[1].bind().epoch(), epoch);
  EXPECT_EQ(channel.sent[1].bind().node(), "east-n0");

  v1::TaskUpdate started;
  started.set_epoch(epoch);
  started.set_launch_id("a-w-a1");
  started.set_state(v1::TaskUpdate::STARTED);
  ASSERT_TRUE(cluster->OnTaskUpdate(epoch, started).ok());
  EXPECT_THAT(observer_.started, ElementsAre("a-w-a1"));
  cluster->Cancel("a-w-a1", Duration(5000));
  ASSERT_THAT(channel.sent, SizeIs(3));
  EXPECT_EQ(channel.sent[2].cancel().grace_ms(), 5000);
  v1::TaskUpdate ended = started;
  ended.set_state(v1::TaskUpdate::CANCELLED);
  ASSERT_TRUE(cluster->OnTaskUpdate(epoch, ended).ok());
  ASSERT_THAT(observer_.ended, SizeIs(1));
  EXPECT_EQ(observer_.ended[0].phase, TaskPhase::kCancelled);
}

TEST_F(RemoteClusterTest, UsageIsTheLatestHeartbeatsOnly) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 3);
  v1::Heartbeat full = Beat(epoch, 3);
  for (int i = 0; i < 3; ++i) full.add_memory(int64_t{1} << 30);
  ASSERT_TRUE(cluster->OnHeartbeat(epoch, full).ok());
  ASSERT_THAT(cluster->Usage(), SizeIs(3));
  EXPECT_EQ(cluster->Usage()[1].cpu, 1000);
  EXPECT_EQ(cluster->Usage()[1].memory, int64_t{1} << 30);

  // The next heartbeat measures two nodes, and no memory: the rest is not reported from before.
  ASSERT_TRUE(cluster->OnHeartbeat(epoch, Beat(epoch, 2)).ok());
  const std::vector<NodeUsage> usage = cluster->Usage();
  ASSERT_THAT(usage, SizeIs(2));
  EXPECT_EQ(usage[0].node, "east-n0");
  EXPECT_EQ(usage[1].node, "east-n1");
  EXPECT_EQ(usage[1].cpu, 1000);
  EXPECT_EQ(usage[1].memory, std::nullopt);

  // A heartbeat refused for a bad node id changes nothing.
  v1::Heartbeat bad = Beat(epoch, 1);
  bad.add_node_id(7);
  bad.add_cpu(5);
  EXPECT_FALSE(cluster->OnHeartbeat(epoch, bad).ok());
  EXPECT_THAT(cluster->Usage(), SizeIs(2));
}

TEST_F(RemoteClusterTest, SilenceMakesTheClusterUnreachableThenItsTasksLost) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 2);
  cluster->Launch(Launch("a-w-a1", "east-n0"));
  observer_.changes.clear();

  clock_.Set(clock_.Now() + Duration(2999));
  cluster->CheckLiveness();
  EXPECT_TRUE(cluster->reachable());
  ASSERT_TRUE(cluster->OnHeartbeat(epoch, Beat(epoch, 2)).ok());
  EXPECT_EQ(cluster->Usage().size(), 2u);
  EXPECT_EQ(cluster->node_updates(), 2u);

  clock_.Set(clock_.Now() + Duration(3000));
  cluster->CheckLiveness();
  EXPECT_FALSE(cluster->reachable());
  ASSERT_THAT(observer_.changes, SizeIs(2));
  EXPECT_EQ(observer_.changes[0].condition, NodeCondition::kDown);
  for (const Node& node : cluster->Inventory()) EXPECT_EQ(node.condition, NodeCondition::kDown);
  EXPECT_THAT(observer_.ended, IsEmpty());

  clock_.Set(clock_.Now() + Duration(10000));
  cluster->CheckLiveness();
  ASSERT_THAT(observer_.ended, SizeIs(1));
  EXPECT_EQ(observer_.ended[0].launch_id, "a-w-a1");
  EXPECT_EQ(observer_.ended[0].phase, TaskPhase::kFailed);
  EXPECT_EQ(observer_.ended[0].reason, "Lost");

  // The agent returns: its resync no longer lists the lost task, so the agent kills it; the
  // nodes are Ready again.
  observer_.changes.clear();
  RecordingChannel back;
  auto [same, new_epoch] = Connect(back, "east", 2, {}, epoch);
  EXPECT_EQ(same, cluster);
  EXPECT_EQ(new_epoch, epoch + 1);
  ASSERT_TRUE(back.sent[0].has_resync());
  EXPECT_THAT(back.sent[0].resync().launches(), IsEmpty());
  EXPECT_TRUE(cluster->reachable());
  ASSERT_FALSE(observer_.changes.empty());
  EXPECT_EQ(observer_.changes.back().condition, NodeCondition::kReady);
}

TEST_F(RemoteClusterTest, AnEndedStreamMakesTheClusterUnreachableAtOnceButTasksWaitTheGrace) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 2);
  cluster->Launch(Launch("a-w-a1", "east-n0"));
  observer_.changes.clear();

  cluster->Detach(epoch + 1);  // not this session's epoch: nothing happens
  EXPECT_TRUE(cluster->reachable());
  cluster->Detach(epoch);
  EXPECT_FALSE(cluster->reachable());
  ASSERT_THAT(observer_.changes, SizeIs(2));
  for (const Node& node : observer_.changes) EXPECT_EQ(node.condition, NodeCondition::kDown);
  EXPECT_THAT(observer_.ended, IsEmpty());

  // Lost only when the heartbeats have been missing for the timeout and the grace.
  clock_.Set(clock_.Now() + Duration(3000 + 10000 - 1));
  cluster->CheckLiveness();
  EXPECT_THAT(observer_.ended, IsEmpty());
  clock_.Set(clock_.Now() + Duration(1));
  cluster->CheckLiveness();
  ASSERT_THAT(observer_.ended, SizeIs(1));
  EXPECT_EQ(observer_.ended[0].reason, "Lost");
}

TEST_F(RemoteClusterTest, ASupersededSessionsEndLeavesTheClusterReachable) {
  MakeClusters();
  RecordingChannel first;
  auto [cluster, epoch] = Connect(first, "east", 2);
  RecordingChannel second;
  auto [same, next] = Connect(second, "east", 2, {}, epoch);
  EXPECT_EQ(same, cluster);
  cluster->Detach(epoch);
  EXPECT_TRUE(cluster->reachable());
}

TEST_F(RemoteClusterTest, ResyncEndsWhatTheAgentNoLongerRuns) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 2);
  cluster->Launch(Launch("kept-a1", "east-n0"));
  cluster->Launch(Launch("gone-a1", "east-n1"));
  cluster->Detach(epoch);

  RecordingChannel back;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> attached =
      clusters_->Attach(&back, Hello("east", epoch));
  ASSERT_TRUE(attached.ok());
  const uint64_t next = attached->second;
  ASSERT_TRUE(cluster->OnInventory(next, FullInventory(next, 2, "east-n")).ok());
  ASSERT_TRUE(back.sent[0].has_resync());
  EXPECT_THAT(back.sent[0].resync().launches(), SizeIs(2));
  v1::ResyncReport report;
  report.set_epoch(next);
  report.add_running("kept-a1");
  ASSERT_TRUE(cluster->OnResyncReport(next, report).ok());
  ASSERT_THAT(observer_.ended, SizeIs(1));
  EXPECT_EQ(observer_.ended[0].launch_id, "gone-a1");
  EXPECT_EQ(observer_.ended[0].reason, "Lost");
  // A second report in one session is bad input.
  EXPECT_EQ(cluster->OnResyncReport(next, report).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RemoteClusterTest, BadInputEndsOnlyThatSession) {
  MakeClusters();
  RecordingChannel good;
  auto [east, east_epoch] = Connect(good, "east", 2);

  RecordingChannel bad;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> west = clusters_->Attach(&bad, Hello("west"));
  ASSERT_TRUE(west.ok());
  auto [cluster, epoch] = *west;
  v1::Inventory negative = FullInventory(epoch, 2, "west-n");
  negative.mutable_nodes(1)->set_cpu(-8000);
  absl::Status status = cluster->OnInventory(epoch, negative);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("inventory.nodes[1].cpu: must be >= 0, not -8000"));

  v1::Inventory unknown_model = FullInventory(epoch, 1, "west-n");
  unknown_model.mutable_nodes(0)->mutable_gpus(0)->set_model("Z9");
  EXPECT_THAT(cluster->OnInventory(epoch, unknown_model).message(),
              HasSubstr("unknown GPU model \"Z9\""));

  v1::Inventory duplicate = FullInventory(epoch, 2, "west-n");
  duplicate.mutable_nodes(1)->set_name("west-n0");
  EXPECT_THAT(cluster->OnInventory(epoch, duplicate).message(), HasSubstr("duplicate node name"));

  // A node name another cluster owns.
  v1::Inventory taken = FullInventory(epoch, 1, "east-n");
  EXPECT_THAT(cluster->OnInventory(epoch, taken).message(),
              HasSubstr("node name \"east-n0\" belongs to cluster \"east\""));

  v1::Inventory delta;
  delta.set_epoch(epoch);
  EXPECT_THAT(cluster->OnInventory(epoch, delta).message(), HasSubstr("must be full"));

  v1::Register wrong_name = Hello("West!");
  EXPECT_THAT(clusters_->Attach(&bad, wrong_name).status().message(),
              HasSubstr("register.cluster"));
  v1::Register wrong_backend = Hello("east");
  wrong_backend.set_backend("slurm");
  EXPECT_THAT(clusters_->Attach(&bad, wrong_backend).status().message(),
              HasSubstr("register.backend: cluster east is a sim cluster"));

  // West never got an inventory accepted: nothing of it is stored or scheduled on, and a later
  // registration may name another backend.
  EXPECT_THAT(attached_, ElementsAre(east));
  v1::Register as_slurm = Hello("west");
  as_slurm.set_backend("slurm");
  EXPECT_TRUE(clusters_->Attach(&bad, as_slurm).ok());
  // Cluster labels are checked.
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"bad key", "v"}, {"region", "a b"}, {"tessera.io/cluster", "other"}, {"-x", "1"}}) {
    v1::Register labelled = Hello("south");
    (*labelled.mutable_labels())[key] = value;
    EXPECT_THAT(clusters_->Attach(&bad, labelled).status().message(),
                HasSubstr("register.labels")) << key << "=" << value;
  }
  v1::Register fine = Hello("south");
  (*fine.mutable_labels())["tessera.io/cost-tier"] = "1";
  (*fine.mutable_labels())["empty"] = "";
  EXPECT_TRUE(clusters_->Attach(&bad, fine).ok());

  // East is unaffected.
  EXPECT_TRUE(east->OnHeartbeat(east_epoch, Beat(east_epoch, 2)).ok());
  EXPECT_THAT(east->Inventory(), SizeIs(2));
  EXPECT_TRUE(good.closed.ok());
}

TEST_F(RemoteClusterTest, ACancelMadeWhileTheAgentIsAwayReachesTheNextSession) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 2);
  cluster->Launch(Launch("a-w-a1", "east-n0"));
  cluster->Detach(epoch);
  cluster->Cancel("a-w-a1", Duration(7000));
  EXPECT_THAT(observer_.ended, IsEmpty());  // it still runs there

  RecordingChannel back;
  auto [same, next] = Connect(back, "east", 2, {"a-w-a1"}, epoch);
  ASSERT_THAT(back.sent, SizeIs(2));
  EXPECT_TRUE(back.sent[0].has_resync());
  ASSERT_TRUE(back.sent[1].has_cancel());
  EXPECT_EQ(back.sent[1].cancel().launch_id(), "a-w-a1");
  EXPECT_EQ(back.sent[1].cancel().epoch(), next);
  EXPECT_EQ(back.sent[1].cancel().grace_ms(), 7000);
}

TEST_F(RemoteClusterTest, ANodeThatLeavesTakesItsTasks) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 3);
  cluster->Launch(Launch("on-n2-a1", "east-n2"));
  cluster->Launch(Launch("on-n0-a1", "east-n0"));
  ASSERT_TRUE(cluster->OnInventory(epoch, FullInventory(epoch, 2, "east-n")).ok());
  ASSERT_THAT(observer_.ended, SizeIs(1));
  EXPECT_EQ(observer_.ended[0].launch_id, "on-n2-a1");
  EXPECT_EQ(observer_.ended[0].reason, "Lost");
  ASSERT_TRUE(channel.sent.back().has_cancel());  // in case it still runs somewhere
  EXPECT_EQ(channel.sent.back().cancel().launch_id(), "on-n2-a1");
}

TEST_F(RemoteClusterTest, HeartbeatColumnsMustMatch) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 2);
  v1::Heartbeat beat = Beat(epoch, 2);
  beat.add_memory(5);
  EXPECT_THAT(cluster->OnHeartbeat(epoch, beat).message(), HasSubstr("every usage column"));
  beat = Beat(epoch, 2);
  beat.set_node_id(1, 9);
  EXPECT_THAT(cluster->OnHeartbeat(epoch, beat).message(),
              HasSubstr("heartbeat.nodeId[1]: node id 9 is not in the inventory"));
}

TEST_F(RemoteClusterTest, DeltasChangeAndRemoveNodes) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 3);
  observer_.changes.clear();
  v1::Inventory delta;
  delta.set_epoch(epoch);
  v1::Node drained = ProtoNode("east-n1", 1);
  drained.set_unschedulable(true);
  *delta.add_nodes() = drained;
  delta.add_removed(2);
  ASSERT_TRUE(cluster->OnInventory(epoch, delta).ok());
  ASSERT_THAT(observer_.changes, SizeIs(2));
  EXPECT_TRUE(observer_.changes[0].unschedulable);
  EXPECT_TRUE(observer_.changes[1].removed);
  EXPECT_EQ(observer_.changes[1].name, "east-n2");
  EXPECT_THAT(cluster->Inventory(), SizeIs(2));
  v1::Inventory again;
  again.set_epoch(epoch);
  again.add_removed(2);
  EXPECT_THAT(cluster->OnInventory(epoch, again).message(), HasSubstr("node id 2 is unknown"));
}

TEST_F(RemoteClusterTest, AFullInventoryMayComeInParts) {
  MakeClusters();
  RecordingChannel channel;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> attached =
      clusters_->Attach(&channel, Hello("east"));
  ASSERT_TRUE(attached.ok());
  auto [cluster, epoch] = *attached;
  v1::Inventory whole = FullInventory(epoch, 5, "east-n");
  v1::Inventory first = whole;
  first.mutable_nodes()->DeleteSubrange(3, 2);
  first.set_more(true);
  v1::Inventory last = whole;
  last.mutable_nodes()->DeleteSubrange(0, 3);
  ASSERT_TRUE(cluster->OnInventory(epoch, first).ok());
  EXPECT_THAT(observer_.changes, IsEmpty());  // nothing applies before the last part
  EXPECT_THAT(channel.sent, IsEmpty());
  ASSERT_TRUE(cluster->OnInventory(epoch, last).ok());
  EXPECT_THAT(observer_.changes, SizeIs(5));
  EXPECT_THAT(cluster->Inventory(), SizeIs(5));
  ASSERT_THAT(channel.sent, SizeIs(1));
  EXPECT_TRUE(channel.sent[0].has_resync());

  // A delta between the parts, or a delta marked `more`, is bad input.
  ASSERT_TRUE(cluster->OnInventory(epoch, first).ok());
  v1::Inventory delta;
  delta.set_epoch(epoch);
  EXPECT_THAT(cluster->OnInventory(epoch, delta).message(),
              HasSubstr("a delta came before the last part"));
  delta.set_more(true);
  EXPECT_THAT(cluster->OnInventory(epoch, delta).message(),
              HasSubstr("inventory.more: only a full inventory is split"));
}

TEST_F(RemoteClusterTest, ADeletedClusterLeavesTheSchedulerAndTheStore) {
  MakeClusters();
  RecordingChannel channel;
  auto [cluster, epoch] = Connect(channel, "east", 2);
  RecordingChannel other_channel;
  Connect(other_channel, "west", 1);
  cluster->Launch(Launch("a-w-a1", "east-n0"));

  EXPECT_EQ(clusters_->Delete("nowhere").code(), absl::StatusCode::kNotFound);
  const absl::Status connected = clusters_->Delete("east");
  EXPECT_EQ(connected.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(connected.message(), HasSubstr("stop the agent first"));
  EXPECT_THAT(observer_.ended, IsEmpty());

  cluster->Detach(epoch);
  observer_.changes.clear();
  ASSERT_TRUE(clusters_->Delete("east").ok());
  ASSERT_THAT(observer_.changes, SizeIs(2));
  for (const Node& node : observer_.changes) EXPECT_TRUE(node.removed) << node.name;
  ASSERT_THAT(observer_.ended, SizeIs(1));
  EXPECT_EQ(observer_.ended[0].launch_id, "a-w-a1");
  EXPECT_EQ(observer_.ended[0].reason, "Lost");
  EXPECT_THAT(observer_.ended[0].message, HasSubstr("deleted"));
  // Inert afterwards: a late launch ends at once, a late registration is told to reconnect.
  cluster->Launch(Launch("late-a1", "east-n1"));
  ASSERT_THAT(observer_.ended, SizeIs(2));
  EXPECT_EQ(observer_.ended[1].launch_id, "late-a1");
  RecordingChannel late;
  EXPECT_EQ(cluster->Attach(&late, Hello("east")).status().code(),
            absl::StatusCode::kUnavailable);

  // Gone from the store (the other cluster stays), and its name starts afresh.
  clusters_.reset();
  MakeClusters();
  ASSERT_THAT(clusters_->clusters(), SizeIs(1));
  EXPECT_EQ(clusters_->clusters()[0]->name(), "west");
  RecordingChannel again;
  auto [fresh, fresh_epoch] = Connect(again, "east", 2);
  EXPECT_EQ(fresh_epoch, 1u);
  EXPECT_THAT(fresh->Inventory(), SizeIs(2));
}

TEST_F(RemoteClusterTest, AConfigFileClustersNameCannotBeRegistered) {
  reserved_ = {"inproc"};
  MakeClusters();
  RecordingChannel channel;
  const absl::Status refused = clusters_->Attach(&channel, Hello("inproc")).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("register.cluster"));
  EXPECT_THAT(refused.message(), HasSubstr("config file"));
}

TEST_F(RemoteClusterTest, StoredNodesWithoutTheirClusterAreRemovedAtLoad) {
  ASSERT_TRUE(store_
                  ->Commit(store::Txn::Unconditional(
                      {store::Op::Put("/tessera/clusters/ghost/nodes/g0", "{\"name\": \"g0\"}")}))
                  .ok());
  MakeClusters();
  EXPECT_THAT(clusters_->clusters(), IsEmpty());
  absl::StatusOr<store::RangeResult> left = store_->Range({.prefix = "/tessera/clusters/"});
  ASSERT_TRUE(left.ok());
  EXPECT_THAT(left->kvs, IsEmpty());
}

TEST_F(RemoteClusterTest, TheStoreKeepsEpochsAndNodesAcrossRestarts) {
  MakeClusters();
  {
    RecordingChannel channel;
    auto [cluster, epoch] = Connect(channel, "east", 2);
    cluster->Detach(epoch);
  }
  clusters_.reset();
  attached_.clear();
  MakeClusters();
  std::vector<Cluster*> loaded = clusters_->clusters();
  ASSERT_THAT(loaded, SizeIs(1));
  EXPECT_EQ(loaded[0]->name(), "east");
  EXPECT_EQ(loaded[0]->backend(), "sim");
  EXPECT_THAT(loaded[0]->Inventory(), SizeIs(2));
  EXPECT_EQ(loaded[0]->labels().at("region"), "east");
  RecordingChannel channel;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> again =
      clusters_->Attach(&channel, Hello("east", 1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->second, 2u);   // epochs never repeat
  EXPECT_THAT(attached_, IsEmpty());  // the job manager had it from the start
  // An agent that remembers an epoch this store never gave (its control plane started afresh)
  // still gets the next one.
  RecordingChannel other;
  absl::StatusOr<std::pair<RemoteCluster*, uint64_t>> fresh =
      clusters_->Attach(&other, Hello("east", 7));
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->second, 3u);
}

}  // namespace
}  // namespace tessera::server

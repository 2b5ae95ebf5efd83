#include "server/job_manager_internal.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::server {
namespace {

JobSpec TwoGroups() {
  JobSpec spec;
  spec.cluster_selector = {{"tessera.io/cluster", "east"}};
  TaskGroup workers{.name = "worker", .replicas = 3};
  workers.request.cpu = 1000;
  workers.request.node_selector = {{"zone", "a"}};
  TaskGroup server{.name = "server", .replicas = 2};
  server.request.cpu = 250;
  server.request.tolerations = {{.key = "dedicated", .value = "ps"}};
  spec.tasks = {workers, server};
  return spec;
}

TEST(TaskRequestOfTest, IsTheTaskRequestsEntryForEveryTask) {
  const JobSpec spec = TwoGroups();
  const std::vector<TaskRequest> all = TaskRequests(spec);
  ASSERT_EQ(all.size(), 5u);
  for (int32_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    const TaskRequest one = TaskRequestOf(spec, i);
    EXPECT_EQ(one.cpu, all[i].cpu);
    EXPECT_EQ(one.node_selector, all[i].node_selector);
    EXPECT_EQ(one.tolerations.size(), all[i].tolerations.size());
  }
}

TEST(TaskRequestOfTest, TheClusterSelectorIsOneMoreNodeSelector) {
  const JobSpec spec = TwoGroups();
  EXPECT_EQ(TaskRequestOf(spec, 0).node_selector,
            (Labels{{"tessera.io/cluster", "east"}, {"zone", "a"}}));
  const TaskRequest server = TaskRequestOf(spec, 4);
  EXPECT_EQ(server.cpu, 250);
  EXPECT_EQ(server.node_selector, (Labels{{"tessera.io/cluster", "east"}}));
  ASSERT_EQ(server.tolerations.size(), 1u);
  EXPECT_EQ(server.tolerations[0].key, "dedicated");
}

TEST(TaskRequestOfTest, GroupOfCountsReplicasInTaskOrder) {
  const JobSpec spec = TwoGroups();
  EXPECT_EQ(GroupOf(spec, 0)->name, "worker");
  EXPECT_EQ(GroupOf(spec, 2)->name, "worker");
  EXPECT_EQ(GroupOf(spec, 3)->name, "server");
  EXPECT_EQ(GroupOf(spec, 4)->name, "server");
  EXPECT_EQ(GroupOf(spec, 5), nullptr);
}

TEST(TaskRequestOfTest, PastTheLastTaskIsAnEmptyRequest) {
  const TaskRequest none = TaskRequestOf(TwoGroups(), 5);
  EXPECT_EQ(none.cpu, 0);
  EXPECT_TRUE(none.node_selector.empty());
}

TEST(PeersOfTest, EveryTasksNodeInTaskOrderSharedByItsCopies) {
  JobRecord record = NewJobRecord(7, "t", {.spec = TwoGroups()}, TimePoint());
  for (size_t i = 0; i < record.tasks.size(); ++i) {
    record.tasks[i].placement.node = "n" + std::to_string(i % 2);
  }
  const PeerNodes peers = PeersOf(record);
  EXPECT_EQ(peers, (PeerNodes{"n0", "n1", "n0", "n1", "n0"}));
  const PeerNodes copy = peers;  // what each of the job's launches holds
  EXPECT_EQ(&copy[4], &peers[4]);
}

TEST(PeersOfTest, ASingleTaskHasNoPeers) {
  JobSpec spec;
  spec.tasks = {TaskGroup{.name = "solo"}};
  EXPECT_TRUE(PeersOf(NewJobRecord(8, "t", {.spec = spec}, TimePoint())).empty());
}

}  // namespace
}  // namespace tessera::server

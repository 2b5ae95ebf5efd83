#include "agent/kubernetes/rendezvous.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/kubernetes/pod_names.h"

namespace tessera::agent::k8s {
namespace {

using ::testing::HasSubstr;

const PodTemplate kTemplate{
    .kube_namespace = "tessera", .default_image = "busybox:1.36", .cluster = "prod"};

TaskLaunchSpec GangTask(int32_t rank) {
  TaskLaunchSpec spec;
  spec.launch_id = "train7-worker-" + std::to_string(rank) + "-a1";
  spec.job_id = "train7";
  spec.placement.node = "n" + std::to_string(rank);
  spec.peer_nodes = {"n0", "n1", "n1"};
  spec.rank = rank;
  return spec;
}

TEST(RendezvousTest, OnlyJobsOfSeveralTasksMeet) {
  TaskLaunchSpec spec = GangTask(0);
  EXPECT_TRUE(IsMultiTask(spec));
  spec.peer_nodes = {"n0"};
  EXPECT_FALSE(IsMultiTask(spec));
  spec.peer_nodes.clear();
  EXPECT_FALSE(IsMultiTask(spec));
  absl::StatusOr<EnvMap> env = RendezvousEnv(spec);
  EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(env.status().message()), HasSubstr("peer_nodes"));
}

TEST(RendezvousTest, EveryRankIsNamedThroughTheJobsService) {
  EXPECT_EQ(RendezvousAddress("train7", 2), "train7-2.train7");
  absl::StatusOr<EnvMap> env = RendezvousEnv(GangTask(2));
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("MASTER_ADDR"), "train7-0.train7");
  EXPECT_EQ(env->at("MASTER_PORT"), "29500");
  EXPECT_EQ(env->at("WORLD_SIZE"), "3");
  EXPECT_EQ(env->at("RANK"), "2");
  // Each pod has its own address, even where two share a node.
  EXPECT_EQ(env->at("LOCAL_RANK"), "0");
  EXPECT_EQ(env->at("LOCAL_WORLD_SIZE"), "1");
  EXPECT_EQ(env->at("GROUP_RANK"), "2");
  EXPECT_EQ(Json::parse(env->at("TF_CONFIG")), Json::parse(R"({
      "cluster":{"worker":["train7-0.train7:29500","train7-1.train7:29500",
                           "train7-2.train7:29500"]},
      "task":{"type":"worker","index":2}})"));
}

TEST(RendezvousTest, ARankOutsideThePeersIsRefused) {
  for (int32_t rank : {-1, 3}) {
    absl::StatusOr<EnvMap> env = RendezvousEnv(GangTask(rank));
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(env.status().message()),
                HasSubstr(std::to_string(rank) + " is outside 0..2"));
    EXPECT_THAT(std::string(env.status().message()), HasSubstr("rank:"));
  }
}

TEST(RendezvousTest, TheServiceIsHeadlessAndSelectsTheJobsPods) {
  const Json service = BuildRendezvousService("Train_7", kTemplate);
  EXPECT_EQ(service["kind"], "Service");
  const Json& metadata = service["metadata"];
  EXPECT_EQ(metadata["name"], ServiceNameForJob("Train_7"));
  EXPECT_EQ(metadata["namespace"], "tessera");
  EXPECT_EQ(metadata["labels"], Json::parse(R"({"app.kubernetes.io/managed-by":"tessera",
      "tessera.io/job":"Train_7","tessera.io/cluster":"prod"})"));
  EXPECT_EQ(metadata["annotations"]["tessera.io/job"], "Train_7");
  const Json& spec = service["spec"];
  EXPECT_EQ(spec["clusterIP"], "None");
  EXPECT_EQ(spec["publishNotReadyAddresses"], true);
  EXPECT_EQ(spec["selector"],
            Json::parse(R"({"tessera.io/job":"Train_7","tessera.io/cluster":"prod"})"));
  EXPECT_EQ(spec["ports"], Json::parse(R"([{"name":"rendezvous","port":29500,
      "targetPort":29500,"protocol":"TCP"}])"));
  EXPECT_EQ(RendezvousServiceSelector("prod"),
            "app.kubernetes.io/managed-by=tessera,tessera.io/job,tessera.io/cluster=prod");
}

}  // namespace
}  // namespace tessera::agent::k8s

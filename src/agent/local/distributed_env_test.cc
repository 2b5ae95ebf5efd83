#include "agent/local/distributed_env.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;

DistributedTask TwoNodesFourTasks(int32_t index) {
  return {
      .tasks = {{"10.0.0.1", 29500}, {"10.0.0.1", 29501}, {"10.0.0.2", 29500}, {"10.0.0.2", 29501}},
      .index = index};
}

TEST(DistributedEnvTest, TorchVariablesForEveryRank) {
  struct Case {
    int32_t index;
    std::string local_rank;
    std::string group_rank;
  };
  for (const Case& c :
       {Case{0, "0", "0"}, Case{1, "1", "0"}, Case{2, "0", "1"}, Case{3, "1", "1"}}) {
    SCOPED_TRACE(c.index);
    absl::StatusOr<EnvMap> env = DistributedEnv(TwoNodesFourTasks(c.index));
    ASSERT_TRUE(env.ok()) << env.status();
    EXPECT_EQ(env->at("MASTER_ADDR"), "10.0.0.1");
    EXPECT_EQ(env->at("MASTER_PORT"), "29500");
    EXPECT_EQ(env->at("WORLD_SIZE"), "4");
    EXPECT_EQ(env->at("RANK"), std::to_string(c.index));
    EXPECT_EQ(env->at("LOCAL_RANK"), c.local_rank);
    EXPECT_EQ(env->at("LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(env->at("GROUP_RANK"), c.group_rank);
  }
}

TEST(DistributedEnvTest, TfConfigListsEveryWorkerAndThisTask) {
  absl::StatusOr<EnvMap> env = DistributedEnv(TwoNodesFourTasks(2));
  ASSERT_TRUE(env.ok()) << env.status();
  const nlohmann::json config = nlohmann::json::parse(env->at("TF_CONFIG"));
  EXPECT_EQ(config["cluster"]["worker"], nlohmann::json({"10.0.0.1:29500", "10.0.0.1:29501",
                                                         "10.0.0.2:29500", "10.0.0.2:29501"}));
  EXPECT_EQ(config["task"]["type"], "worker");
  EXPECT_EQ(config["task"]["index"], 2);
  EXPECT_EQ(config.size(), 2u);
}

TEST(DistributedEnvTest, SingleTask) {
  absl::StatusOr<EnvMap> env = DistributedEnv({.tasks = {{"localhost", 1234}}, .index = 0});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("WORLD_SIZE"), "1");
  EXPECT_EQ(env->at("RANK"), "0");
  EXPECT_EQ(env->at("LOCAL_RANK"), "0");
}

TEST(DistributedEnvTest, Ipv6AddressesAreBracketedInHostPort) {
  EXPECT_EQ(HostPort({"::1", 29500}), "[::1]:29500");
  EXPECT_EQ(HostPort({"[::1]", 29500}), "[::1]:29500");
  EXPECT_EQ(HostPort({"node-3", 80}), "node-3:80");
  absl::StatusOr<EnvMap> env = DistributedEnv({.tasks = {{"::1", 7}}, .index = 0});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("MASTER_ADDR"), "::1");  // torch takes the bare address
  EXPECT_THAT(env->at("TF_CONFIG"), HasSubstr("[::1]:7"));
}

TEST(DistributedEnvTest, BadInputNamesTheField) {
  struct Case {
    DistributedTask task;
    std::string field;
  };
  const Case cases[] = {
      {{.tasks = {}, .index = 0}, "distributed.tasks"},
      {{.tasks = {{"a", 1}}, .index = 1}, "distributed.index"},
      {{.tasks = {{"a", 1}}, .index = -1}, "distributed.index"},
      {{.tasks = {{"a", 1}, {"", 2}}, .index = 0}, "distributed.tasks[1].address"},
      {{.tasks = {{"a", 0}}, .index = 0}, "distributed.tasks[0].port"},
      {{.tasks = {{"a", 70000}}, .index = 0}, "distributed.tasks[0].port"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<EnvMap> env = DistributedEnv(c.task);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(env.status().message()), HasSubstr(c.field + ":"));
  }
}

}  // namespace
}  // namespace tessera::agent

#include "agent/local/task_env.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

TEST(TaskEnvTest, LayersBaseThenTaskThenTessera) {
  const EnvMap base = {{"PATH", "/usr/bin"}, {"HOME", "/root"}, {"CUDA_VISIBLE_DEVICES", "0,1,2"}};
  TaskLaunch launch{.task_id = "j1.worker-0",
                    .command = {"python"},
                    .env = {{"HOME", "/work"}, {"CUDA_VISIBLE_DEVICES", "7"}, {"X", "1"}},
                    .gpus = {1, 3}};
  absl::StatusOr<EnvMap> env = TaskEnvironment(base, launch);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("PATH"), "/usr/bin");
  EXPECT_EQ(env->at("HOME"), "/work");
  EXPECT_EQ(env->at("X"), "1");
  EXPECT_EQ(env->at("CUDA_VISIBLE_DEVICES"), "1,3");  // the task cannot widen its placement
  EXPECT_EQ(env->at("NVIDIA_VISIBLE_DEVICES"), "1,3");
  EXPECT_EQ(env->at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(env->at("TESSERA_TASK_ID"), "j1.worker-0");
  EXPECT_FALSE(env->contains("RANK"));
}

TEST(TaskEnvTest, CpuOnlyTaskSeesNoGpu) {
  absl::StatusOr<EnvMap> env =
      TaskEnvironment({{"CUDA_VISIBLE_DEVICES", "0"}}, {.task_id = "t", .command = {"x"}});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(env->at("NVIDIA_VISIBLE_DEVICES"), "void");
}

TEST(TaskEnvTest, DistributedVariablesAreAdded) {
  TaskLaunch launch{.task_id = "t",
                    .command = {"x"},
                    .env = {{"RANK", "99"}},
                    .distributed = DistributedTask{.tasks = {{"h", 1}, {"h", 2}}, .index = 1}};
  absl::StatusOr<EnvMap> env = TaskEnvironment({}, launch);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("RANK"), "1");
  EXPECT_EQ(env->at("WORLD_SIZE"), "2");
  EXPECT_EQ(env->at("LOCAL_RANK"), "1");
  EXPECT_TRUE(env->contains("TF_CONFIG"));
}

TEST(TaskEnvTest, BadDistributedLayoutIsAnError) {
  TaskLaunch launch{
      .task_id = "t", .command = {"x"}, .distributed = DistributedTask{.tasks = {}, .index = 0}};
  EXPECT_EQ(TaskEnvironment({}, launch).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TaskEnvTest, EnvStringsAndProcessEnvironment) {
  EXPECT_EQ(ToEnvStrings({{"A", "1"}, {"B", ""}}), (std::vector<std::string>{"A=1", "B="}));
  ::setenv("TESSERA_TASK_ENV_TEST", "a=b", 1);
  EXPECT_EQ(ProcessEnvironment().at("TESSERA_TASK_ENV_TEST"), "a=b");
  ::setenv("TESSERA_TOKEN", "tsr_admin", 1);
  EXPECT_FALSE(ProcessEnvironment().contains("TESSERA_TOKEN")) << "credentials are not inherited";
  ::unsetenv("TESSERA_TOKEN");
  EXPECT_EQ(DeviceList({0, 2, 5}), "0,2,5");
  EXPECT_EQ(DeviceList({}), "");
}

TEST(TaskLaunchTest, ValidationNamesTheField) {
  struct Case {
    TaskLaunch launch;
    std::string field;
  };
  const Case cases[] = {
      {{.task_id = "", .command = {"x"}}, "task_id"},
      {{.task_id = "a/b", .command = {"x"}}, "task_id"},
      {{.task_id = ".hidden", .command = {"x"}}, "task_id"},
      {{.task_id = std::string(201, 'a'), .command = {"x"}}, "task_id"},
      {{.task_id = "t", .command = {}}, "command"},
      {{.task_id = "t", .command = {""}}, "command"},
      {{.task_id = "t", .command = {"x"}, .gpus = {0, -1}}, "gpus[1]"},
      {{.task_id = "t", .command = {"x"}, .time_limit = Duration(0)}, "time_limit"},
      {{.task_id = "t", .command = {"x"}, .termination_grace = Duration(-1)}, "termination_grace"},
      {{.task_id = "t", .command = {"x"}, .env = {{"A=B", "1"}}}, "env"},
      {{.task_id = "t", .command = {"x"}, .args = {"ok", std::string("a\0b", 3)}}, "args[1]"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateTaskLaunch(c.launch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.field)) << c.field;
  }
  EXPECT_TRUE(ValidateTaskLaunch({.task_id = "job-1.worker_0", .command = {"x"}}).ok());
}

}  // namespace
}  // namespace tessera::agent

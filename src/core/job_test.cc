#include "core/job.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/node.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TaskRequest WholeGpus(int32_t count) {
  TaskRequest r;
  r.cpu = 4000;
  r.memory = 16 * kGi;
  r.gpu_count = count;
  r.gpu_milli = kMilliGpuPerDevice;
  return r;
}

TaskRequest Share(int64_t milli) {
  TaskRequest r = WholeGpus(1);
  r.gpu_milli = milli;
  return r;
}

JobSpec ValidJob() {
  JobSpec job;
  job.name = "train-resnet.v2";
  job.queue = "research";
  TaskGroup master;
  master.name = "master";
  master.request.cpu = 1000;
  TaskGroup worker;
  worker.name = "worker";
  worker.replicas = 4;
  worker.request = WholeGpus(8);
  job.tasks = {master, worker};
  return job;
}

TEST(TolerationTest, KubernetesSemantics) {
  const Taint gpu_taint{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule};
  struct Case {
    Toleration toleration;
    bool want;
  };
  const std::vector<Case> cases = {
      {{"nvidia.com/gpu", "present", false, std::nullopt}, true},
      {{"nvidia.com/gpu", "absent", false, std::nullopt}, false},
      {{"nvidia.com/gpu", "", true, std::nullopt}, true},
      {{"other", "", true, std::nullopt}, false},
      {{"", "", true, std::nullopt}, true},
      {{"", "", true, TaintEffect::kNoExecute}, false},
      {{"", "", false, std::nullopt}, false},
      {{"nvidia.com/gpu", "present", false, TaintEffect::kNoSchedule}, true},
      {{"nvidia.com/gpu", "present", false, TaintEffect::kPreferNoSchedule}, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].toleration.Tolerates(gpu_taint), cases[i].want) << "case " << i;
  }
}

TEST(TaskRequestTest, SharingAndResources) {
  EXPECT_TRUE(Share(500).IsSharing());
  EXPECT_FALSE(WholeGpus(1).IsSharing());
  EXPECT_FALSE(TaskRequest{}.NeedsGpu());
  TaskRequest r = WholeGpus(4);
  r.gpu_memory = 10 * kGi;
  r.extended["rdma/hca"] = 1;
  const Resources res = r.AsResources();
  EXPECT_EQ(res.cpu, 4000);
  EXPECT_EQ(res.memory, 16 * kGi);
  EXPECT_EQ(res.gpu, 4000);
  EXPECT_EQ(res.gpu_memory, 40 * kGi);
  EXPECT_EQ(res.extended.at("rdma/hca"), 1);
  EXPECT_EQ(Share(250).AsResources().gpu, 250);
}

TEST(TaskRequestTest, AllowsModel) {
  TaskRequest r = WholeGpus(1);
  EXPECT_TRUE(r.AllowsModel("A100"));
  r.gpu_models = {"A100", "H100"};
  EXPECT_TRUE(r.AllowsModel("H100"));
  EXPECT_FALSE(r.AllowsModel("V100"));
  EXPECT_FALSE(r.AllowsModel(""));
}

TEST(EquivalenceKeyTest, IgnoresOrderOfUnorderedLists) {
  TaskRequest a = WholeGpus(2);
  a.gpu_models = {"A100", "H100"};
  a.tolerations = {{"a", "1", false, std::nullopt}, {"b", "", true, TaintEffect::kNoSchedule}};
  TaskRequest b = a;
  b.gpu_models = {"H100", "A100", "H100"};
  b.tolerations = {a.tolerations[1], a.tolerations[0], a.tolerations[1]};
  EXPECT_EQ(a.EquivalenceKey(), b.EquivalenceKey());
}

TEST(EquivalenceKeyTest, ValueOfAnExistsTolerationDoesNotMatter) {
  TaskRequest a = WholeGpus(1);
  a.tolerations = {{"k", "", true, std::nullopt}};
  TaskRequest b = a;
  b.tolerations[0].value = "ignored";
  EXPECT_EQ(a.EquivalenceKey(), b.EquivalenceKey());
}

TEST(EquivalenceKeyTest, EveryPlacementFieldChangesTheKey) {
  const TaskRequest base = [] {
    TaskRequest r = WholeGpus(1);
    r.gpu_models = {"A100"};
    r.extended["rdma/hca"] = 1;
    r.node_selector["zone"] = "a";
    r.tolerations = {{"k", "v", false, std::nullopt}};
    return r;
  }();
  const std::vector<std::function<void(TaskRequest&)>> changes = {
      [](TaskRequest& r) { r.cpu += 1; },
      [](TaskRequest& r) { r.memory += 1; },
      [](TaskRequest& r) { r.gpu_count = 2; },
      [](TaskRequest& r) { r.gpu_milli = 500; },
      [](TaskRequest& r) { r.gpu_memory = 1; },
      [](TaskRequest& r) { r.gpu_models.push_back("H100"); },
      [](TaskRequest& r) { r.gpu_models.clear(); },
      [](TaskRequest& r) { r.extended["rdma/hca"] = 2; },
      [](TaskRequest& r) { r.extended["other"] = 1; },
      [](TaskRequest& r) { r.node_selector["zone"] = "b"; },
      [](TaskRequest& r) { r.node_selector.clear(); },
      [](TaskRequest& r) { r.tolerations[0].value = "w"; },
      [](TaskRequest& r) { r.tolerations[0].exists = true; },
      [](TaskRequest& r) { r.tolerations[0].effect = TaintEffect::kNoExecute; },
      [](TaskRequest& r) { r.tolerations.clear(); },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    TaskRequest changed = base;
    changes[i](changed);
    EXPECT_NE(changed.EquivalenceKey(), base.EquivalenceKey()) << "change " << i;
  }
}

TEST(EquivalenceKeyTest, StringsCannotCollideThroughSeparators) {
  TaskRequest a;
  a.node_selector = {{"a", "b;c"}};
  TaskRequest b;
  b.node_selector = {{"a;b", "c"}};
  EXPECT_NE(a.EquivalenceKey(), b.EquivalenceKey());
  TaskRequest c;
  c.gpu_models = {"A1", "00"};
  TaskRequest d;
  d.gpu_models = {"A100"};
  EXPECT_NE(c.EquivalenceKey(), d.EquivalenceKey());
  TaskRequest e;
  e.extended = {{"x=1,y", 1}};
  TaskRequest f;
  f.extended = {{"x", 1}, {"y", 1}};
  EXPECT_NE(e.EquivalenceKey(), f.EquivalenceKey());
}

struct RequestCase {
  std::string name;
  std::function<void(TaskRequest&)> change;
  std::string want_message;  // empty: valid
};

class TaskRequestValidateTest : public ::testing::TestWithParam<RequestCase> {};
TEST_P(TaskRequestValidateTest, NamesTheField) {
  TaskRequest r = WholeGpus(2);
  GetParam().change(r);
  const absl::Status status = r.Validate("spec.tasks[1]");
  if (GetParam().want_message.empty()) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), GetParam().want_message);
  }
}
INSTANTIATE_TEST_SUITE_P(
    Job, TaskRequestValidateTest,
    ::testing::Values(
        RequestCase{"whole_gpus", [](TaskRequest&) {}, ""},
        RequestCase{"cpu_only",
                    [](TaskRequest& r) {
                      r.gpu_count = 0;
                      r.gpu_milli = 0;
                    },
                    ""},
        RequestCase{"share", [](TaskRequest& r) { r = Share(1); }, ""},
        RequestCase{"share_with_memory",
                    [](TaskRequest& r) {
                      r = Share(300);
                      r.gpu_memory = 8 * kGi;
                    },
                    ""},
        RequestCase{"negative_cpu", [](TaskRequest& r) { r.cpu = -1; },
                    "spec.tasks[1].resources.cpu: must be >= 0"},
        RequestCase{"negative_memory", [](TaskRequest& r) { r.memory = -1; },
                    "spec.tasks[1].resources.memory: must be >= 0"},
        RequestCase{"negative_gpu", [](TaskRequest& r) { r.gpu_count = -1; },
                    "spec.tasks[1].resources.gpu: must be >= 0"},
        RequestCase{"milli_zero", [](TaskRequest& r) { r.gpu_milli = 0; },
                    "spec.tasks[1].resources.gpu: milli-GPU per device must be in 1..1000, got 0"},
        RequestCase{"milli_too_big", [](TaskRequest& r) { r.gpu_milli = 1001; },
                    "spec.tasks[1].resources.gpu: milli-GPU per device must be in 1..1000, got "
                    "1001"},
        RequestCase{"milli_without_gpu",
                    [](TaskRequest& r) {
                      r.gpu_count = 0;
                      r.gpu_milli = 500;
                    },
                    "spec.tasks[1].resources.gpu: milli-GPU per device is 500 but no device is "
                    "requested (gpu_count 0)"},
        RequestCase{"share_of_two", [](TaskRequest& r) { r.gpu_milli = 500; },
                    "spec.tasks[1].resources.gpu: a share of a GPU (500 milli-GPU) is only "
                    "possible for one device, got 2 devices"},
        RequestCase{"most_gpus_a_node_has", [](TaskRequest& r) { r.gpu_count = kMaxGpusPerNode; },
                    ""},
        RequestCase{"more_gpus_than_any_node", [](TaskRequest& r) { r.gpu_count = 536870912; },
                    "spec.tasks[1].resources.gpu: at most 128 GPUs per task (a task runs on one "
                    "node, which has at most 128), got 536870912"},
        RequestCase{"gpu_memory_without_gpu",
                    [](TaskRequest& r) {
                      r.gpu_count = 0;
                      r.gpu_milli = 0;
                      r.gpu_memory = 1;
                    },
                    "spec.tasks[1].resources.gpu_memory: needs a GPU (gpu_count > 0)"},
        RequestCase{"negative_gpu_memory", [](TaskRequest& r) { r.gpu_memory = -1; },
                    "spec.tasks[1].resources.gpu_memory: must be >= 0"},
        RequestCase{"gpu_memory_overflows",
                    [](TaskRequest& r) { r.gpu_memory = std::numeric_limits<int64_t>::max(); },
                    "spec.tasks[1].resources.gpu_memory: too large"},
        RequestCase{"empty_model",
                    [](TaskRequest& r) {
                      r.gpu_models = {"A100", ""};
                    },
                    "spec.tasks[1].gpu_models[1]: must not be empty"},
        RequestCase{"negative_extended", [](TaskRequest& r) { r.extended["rdma/hca"] = -1; },
                    "spec.tasks[1].resources.rdma/hca: must be >= 0"},
        RequestCase{"unnamed_extended", [](TaskRequest& r) { r.extended[""] = 1; },
                    "spec.tasks[1].resources: extended resource names must not be empty"},
        RequestCase{"empty_selector_key", [](TaskRequest& r) { r.node_selector[""] = "x"; },
                    "spec.tasks[1].node_selector: keys must not be empty"},
        RequestCase{"toleration_without_key",
                    [](TaskRequest& r) {
                      r.tolerations = {{"", "v", false, std::nullopt}};
                    },
                    "spec.tasks[1].tolerations[0].key: must not be empty unless the operator is "
                    "Exists"},
        RequestCase{
            "toleration_exists_with_value",
            [](TaskRequest& r) {
              r.tolerations = {{"k", "", true, std::nullopt}, {"k", "v", true, std::nullopt}};
            },
            "spec.tasks[1].tolerations[1].value: must be empty when the operator is "
            "Exists"},
        RequestCase{"tolerate_everything",
                    [](TaskRequest& r) {
                      r.tolerations = {{"", "", true, std::nullopt}};
                    },
                    ""}),
    [](const auto& info) { return info.param.name; });

struct JobCase {
  std::string name;
  std::function<void(JobSpec&)> change;
  std::string want_message;  // empty: valid
};

class JobValidateTest : public ::testing::TestWithParam<JobCase> {};
TEST_P(JobValidateTest, NamesTheField) {
  JobSpec job = ValidJob();
  GetParam().change(job);
  const absl::Status status = job.Validate("spec");
  if (GetParam().want_message.empty()) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), GetParam().want_message);
  }
}
INSTANTIATE_TEST_SUITE_P(
    Job, JobValidateTest,
    ::testing::Values(
        JobCase{"valid", [](JobSpec&) {}, ""},
        JobCase{"generated_name", [](JobSpec& j) { j.name.clear(); }, ""},
        JobCase{"gang_of_two", [](JobSpec& j) { j.min_available = 2; }, ""},
        JobCase{"gang_of_all", [](JobSpec& j) { j.min_available = 5; }, ""},
        JobCase{"upper_case_name", [](JobSpec& j) { j.name = "Train"; },
                "spec.name: \"Train\" is not a valid name (lowercase letters, digits, '-' and '.', "
                "starting and ending with a letter or digit, at most 253 characters)"},
        JobCase{"name_ends_with_dash", [](JobSpec& j) { j.name = "train-"; },
                "spec.name: \"train-\" is not a valid name (lowercase letters, digits, '-' and "
                "'.', starting and ending with a letter or digit, at most 253 characters)"},
        JobCase{"name_too_long", [](JobSpec& j) { j.name = std::string(254, 'a'); },
                "spec.name: \"" + std::string(64, 'a') +
                    "...\" is not a valid name (lowercase letters, digits, '-' and '.', starting "
                    "and ending with a letter or digit, at most 253 characters)"},
        JobCase{"empty_label_key", [](JobSpec& j) { j.labels[""] = "x"; },
                "spec.labels: keys must not be empty"},
        JobCase{"empty_queue", [](JobSpec& j) { j.queue.clear(); },
                "spec.queue: must not be empty"},
        JobCase{"zero_time_limit", [](JobSpec& j) { j.time_limit = Duration{0}; },
                "spec.time_limit: must be > 0"},
        JobCase{"negative_min_runtime", [](JobSpec& j) { j.min_runtime = Duration{-1}; },
                "spec.min_runtime: must be >= 0"},
        JobCase{"negative_grace", [](JobSpec& j) { j.termination_grace = Duration{-1}; },
                "spec.termination_grace: must be >= 0"},
        JobCase{"negative_restarts", [](JobSpec& j) { j.restart_policy.max_restarts = -1; },
                "spec.restart_policy.max_restarts: must be >= 0"},
        JobCase{"empty_cluster_selector_key", [](JobSpec& j) { j.cluster_selector[""] = "x"; },
                "spec.cluster_selector: keys must not be empty"},
        JobCase{"no_tasks", [](JobSpec& j) { j.tasks.clear(); },
                "spec.tasks: must have at least one task group"},
        JobCase{"unnamed_group", [](JobSpec& j) { j.tasks[1].name.clear(); },
                "spec.tasks[1].name: must not be empty"},
        JobCase{"bad_group_name", [](JobSpec& j) { j.tasks[1].name = "work.er"; },
                "spec.tasks[1].name: \"work.er\" is not a valid name (lowercase letters, digits "
                "and '-', starting and ending with a letter or digit, at most 63 characters)"},
        JobCase{"duplicate_group", [](JobSpec& j) { j.tasks[1].name = "master"; },
                "spec.tasks[1].name: duplicate task group name \"master\" (also spec.tasks[0])"},
        JobCase{"zero_replicas", [](JobSpec& j) { j.tasks[1].replicas = 0; },
                "spec.tasks[1].replicas: must be >= 1"},
        JobCase{"bad_request", [](JobSpec& j) { j.tasks[1].request.gpu_count = -1; },
                "spec.tasks[1].resources.gpu: must be >= 0"},
        JobCase{"empty_env_name", [](JobSpec& j) { j.tasks[0].env[""] = "x"; },
                "spec.tasks[0].env: names must not be empty"},
        JobCase{"too_many_tasks",
                [](JobSpec& j) { j.tasks[0].replicas = std::numeric_limits<int32_t>::max(); },
                "spec.tasks: total replicas 2147483651 exceed the limit of 4096 tasks per job"},
        JobCase{"one_task_too_many", [](JobSpec& j) { j.tasks[0].replicas = 4093; },
                "spec.tasks: total replicas 4097 exceed the limit of 4096 tasks per job"},
        JobCase{"min_available_zero", [](JobSpec& j) { j.min_available = 0; },
                "spec.min_available: must be in 1..5 (the job's task count), got 0"},
        JobCase{"min_available_above_total", [](JobSpec& j) { j.min_available = 6; },
                "spec.min_available: must be in 1..5 (the job's task count), got 6"}),
    [](const auto& info) { return info.param.name; });

TEST(JobSpecTest, TotalTasksAndGangSize) {
  JobSpec job = ValidJob();
  EXPECT_EQ(job.TotalTasks(), 5);
  EXPECT_EQ(job.GangSize(), 5);
  job.min_available = 3;
  EXPECT_EQ(job.GangSize(), 3);
  job.tasks[0].replicas = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(job.TotalTasks(), std::numeric_limits<int32_t>::max());
}

}  // namespace
}  // namespace tessera

#include "sim/alibaba/target_workload_builder.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sim::alibaba {
namespace {

TraceTask Task(int64_t cpu, int32_t gpus, int64_t milli, std::string spec = "",
               int64_t memory = 0) {
  TraceTask t;
  t.request.cpu = cpu;
  t.request.memory = memory;
  t.request.gpu_count = gpus;
  t.request.gpu_milli = milli;
  if (!spec.empty()) t.request.gpu_models = {spec};
  t.gpu_spec = spec;
  return t;
}

std::vector<TraceTask> Repeat(const TraceTask& t, int n) { return std::vector<TraceTask>(n, t); }

void Append(std::vector<TraceTask>& to, const std::vector<TraceTask>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

TEST(TargetWorkloadTest, KeepsTheMostCommonClassesUpToTheThresholdAndRenormalizes) {
  std::vector<TraceTask> tasks;
  Append(tasks, Repeat(Task(4000, 1, 500), 60));
  Append(tasks, Repeat(Task(8000, 1, 1000), 30));
  Append(tasks, Repeat(Task(2000, 0, 0), 6));
  Append(tasks, Repeat(Task(1000, 8, 1000), 4));
  TargetWorkloadStats stats;
  const TargetWorkload m = BuildTargetWorkload(tasks, {}, &stats);
  // 60 + 30 = 90 < 95; + 6 = 96 >= 95: three classes.
  ASSERT_EQ(m.classes.size(), 3u);
  EXPECT_EQ(stats.distinct_classes, 4);
  EXPECT_EQ(stats.kept_classes, 3);
  EXPECT_DOUBLE_EQ(stats.covered_pct, 96.0);
  EXPECT_EQ(m.classes[0].request.gpu_milli, 500);
  EXPECT_DOUBLE_EQ(m.classes[0].probability, 60.0 / 96.0);
  EXPECT_DOUBLE_EQ(m.classes[1].probability, 30.0 / 96.0);
  EXPECT_EQ(m.classes[2].request.gpu_count, 0);  // CPU-only included
  EXPECT_DOUBLE_EQ(m.classes[2].probability, 6.0 / 96.0);
}

TEST(TargetWorkloadTest, KeyIgnoresMemoryButNotTheGpuSpec) {
  std::vector<TraceTask> tasks;
  Append(tasks, Repeat(Task(4000, 1, 500, "", 1 << 20), 5));
  Append(tasks, Repeat(Task(4000, 1, 500, "", 2 << 20), 5));
  Append(tasks, Repeat(Task(4000, 1, 500, "T4"), 3));
  TargetWorkloadStats stats;
  const TargetWorkload m = BuildTargetWorkload(tasks, {.popularity_threshold_pct = 100}, &stats);
  ASSERT_EQ(m.classes.size(), 2u);
  EXPECT_DOUBLE_EQ(m.classes[0].probability, 10.0 / 13.0);
  EXPECT_EQ(m.classes[0].request.memory, 0);
  EXPECT_EQ(m.classes[1].request.gpu_models, std::vector<std::string>{"T4"});
}

TEST(TargetWorkloadTest, CanLeaveCpuOnlyTasksOut) {
  std::vector<TraceTask> tasks;
  Append(tasks, Repeat(Task(2000, 0, 0), 50));
  Append(tasks, Repeat(Task(4000, 1, 500), 10));
  const TargetWorkload m = BuildTargetWorkload(tasks, {.include_cpu_only = false});
  ASSERT_EQ(m.classes.size(), 1u);
  EXPECT_DOUBLE_EQ(m.classes[0].probability, 1.0);
}

TEST(TargetWorkloadTest, EqualCountsAreOrderedByKey) {
  std::vector<TraceTask> tasks = {Task(3000, 1, 200), Task(1000, 1, 200), Task(2000, 1, 200)};
  const TargetWorkload m = BuildTargetWorkload(tasks, {.popularity_threshold_pct = 50});
  ASSERT_EQ(m.classes.size(), 2u);
  EXPECT_EQ(m.classes[0].request.cpu, 1000);
  EXPECT_EQ(m.classes[1].request.cpu, 2000);
  EXPECT_DOUBLE_EQ(m.classes[0].probability + m.classes[1].probability, 1.0);
}

std::string WritePods(const std::string& name, const std::string& rows) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "target_workload_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n" << rows;
  return path;
}

TEST(LoadTargetWorkloadTest, ReadsAPodListWithoutItsNodeList) {
  const std::string path = WritePods("pods.csv",
                                     "a,4000,1024,1,500\n"
                                     "b,4000,2048,1,500\n"
                                     "c,8000,1024,2,1000\n");
  TargetWorkloadStats stats;
  absl::StatusOr<TargetWorkload> m = LoadTargetWorkload(path, {}, &stats);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->classes.size(), 2u);
  EXPECT_DOUBLE_EQ(m->classes[0].probability, 2.0 / 3.0);
  EXPECT_EQ(stats.kept_classes, 2);

  // gpu_spec models need no node list to be known.
  const std::string models = (std::filesystem::path(::testing::TempDir()) /
                              "target_workload_test" / "models.csv").string();
  std::ofstream(models) << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                           "creation_time,deletion_time,scheduled_time\n"
                           "a,4000,1024,1,500,T4|V100M16,LS,Running,0,,0\n";
  absl::StatusOr<TargetWorkload> pinned = LoadTargetWorkload(models);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_THAT(pinned->classes[0].request.gpu_models, ::testing::ElementsAre("T4", "V100M16"));
}

TEST(LoadTargetWorkloadTest, BadFilesAreErrorsNamingThem) {
  EXPECT_EQ(LoadTargetWorkload("/nonexistent/pods.csv").status().code(),
            absl::StatusCode::kNotFound);
  const std::string bad = WritePods("bad.csv", "a,4000,1024,1,lots\n");
  EXPECT_THAT(LoadTargetWorkload(bad).status().message(),
              ::testing::HasSubstr(bad + ":2: gpu_milli"));
  const std::string cpu_only = WritePods("cpu.csv", "a,4000,1024,0,0\n");
  EXPECT_THAT(LoadTargetWorkload(cpu_only, {.include_cpu_only = false}).status().message(),
              ::testing::HasSubstr("no GPU task"));
}

}  // namespace
}  // namespace tessera::sim::alibaba

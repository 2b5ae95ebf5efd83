#include "cli/job_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/jobspec.h"

namespace tessera::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

JobFlags WithCommand() {
  JobFlags f;
  f.command = {"python", "train.py", "--epochs", "10"};
  return f;
}

TEST(JobFlagsTest, DefaultsToOneTaskWithOneCpu) {
  absl::StatusOr<spec::JobDocument> doc = BuildJobDocument(WithCommand());
  ASSERT_TRUE(doc.ok()) << doc.status();
  const JobSpec& spec = doc->spec;
  EXPECT_EQ(spec.queue, "default");
  EXPECT_FALSE(spec.time_limit.has_value());
  ASSERT_EQ(spec.tasks.size(), 1u);
  const TaskGroup& g = spec.tasks[0];
  EXPECT_EQ(g.name, "main");
  EXPECT_EQ(g.replicas, 1);
  EXPECT_EQ(g.request.cpu, 1000);
  EXPECT_EQ(g.request.memory, 0);
  EXPECT_EQ(g.request.gpu_count, 0);
  EXPECT_THAT(g.command, ElementsAre("python", "train.py", "--epochs", "10"));
  EXPECT_TRUE(doc->metadata.request_id.empty());
}

TEST(JobFlagsTest, EveryFlagLandsInItsField) {
  JobFlags f = WithCommand();
  f.name = "resnet";
  f.queue = "team-a";
  f.cluster = "slurm-a";
  f.priority = "100";
  f.time = "1-00:30:00";
  f.nodes = 4;
  f.cpus = "8";
  f.mem = "64Gi";
  f.gpus = "8";
  f.gpu_models = {"H100-80GB,A100-80GB"};
  f.env = {"NCCL_DEBUG=INFO", "EMPTY="};
  f.labels = {"team=vision"};
  f.workdir = "/work";
  f.request_id = "abc-1";
  absl::StatusOr<spec::JobDocument> doc = BuildJobDocument(f);
  ASSERT_TRUE(doc.ok()) << doc.status();
  const JobSpec& spec = doc->spec;
  EXPECT_EQ(spec.name, "resnet");
  EXPECT_EQ(spec.labels.at("team"), "vision");
  EXPECT_EQ(doc->metadata.request_id, "abc-1");
  EXPECT_EQ(spec.queue, "team-a");
  EXPECT_THAT(spec.cluster_selector, ElementsAre(Pair("tessera.io/cluster", "slurm-a")));
  EXPECT_EQ(spec.priority, 100);
  EXPECT_EQ(spec.time_limit, std::chrono::minutes(24 * 60 + 30));
  EXPECT_EQ(spec.TotalTasks(), 4);
  EXPECT_EQ(spec.GangSize(), 4);
  const TaskRequest& r = spec.tasks[0].request;
  EXPECT_EQ(r.cpu, 8000);
  EXPECT_EQ(r.memory, int64_t{64} << 30);
  EXPECT_EQ(r.gpu_count, 8);
  EXPECT_EQ(r.gpu_milli, 1000);
  EXPECT_THAT(r.gpu_models, ElementsAre("H100-80GB", "A100-80GB"));
  EXPECT_EQ(spec.tasks[0].env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(spec.tasks[0].env.at("EMPTY"), "");
  EXPECT_EQ(spec.tasks[0].working_dir, "/work");
}

TEST(JobFlagsTest, FractionalGpuIsAShareOfOneDevice) {
  JobFlags f = WithCommand();
  f.gpus = "0.5";
  absl::StatusOr<spec::JobDocument> doc = BuildJobDocument(f);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->spec.tasks[0].request.gpu_count, 1);
  EXPECT_EQ(doc->spec.tasks[0].request.gpu_milli, 500);
}

TEST(JobFlagsTest, PriorityClassNamesAreAccepted) {
  JobFlags f = WithCommand();
  f.priority = "high";
  absl::StatusOr<spec::JobDocument> doc = BuildJobDocument(f);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->spec.priority, 100);
}

TEST(JobFlagsTest, TheDocumentRoundTrips) {
  JobFlags f = WithCommand();
  f.gpus = "2";
  f.time = "90";
  absl::StatusOr<spec::JobDocument> doc = BuildJobDocument(f);
  ASSERT_TRUE(doc.ok()) << doc.status();
  absl::StatusOr<spec::JobDocument> again = spec::ParseJobDocument(spec::RenderJobJson(*doc));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(spec::RenderJobJson(*again), spec::RenderJobJson(*doc));
  EXPECT_THAT(spec::RenderJobJson(*doc), HasSubstr(R"("timeLimit": "1h30m")"));
}

TEST(JobFlagsTest, ClusterNames) {
  const std::vector<std::string> valid = {"a", "slurm-a", "k8s.eu_west-1", "0",
                                          std::string(63, 'c')};
  for (const std::string& name : valid) {
    EXPECT_TRUE(CheckClusterName(name, "--cluster").ok()) << name;
  }
  const std::vector<std::string> invalid = {
      "", "Slurm", "-a", ".a", "a b", "a/b", std::string(64, 'c')};
  for (const std::string& name : invalid) {
    EXPECT_EQ(CheckClusterName(name, "--cluster").code(), absl::StatusCode::kInvalidArgument)
        << name;
  }
}

struct BadFlags {
  std::string name;
  std::function<void(JobFlags&)> set;
  std::string error;
};

class JobFlagsErrorTest : public ::testing::TestWithParam<BadFlags> {};

TEST_P(JobFlagsErrorTest, NamesTheFlag) {
  JobFlags f = WithCommand();
  GetParam().set(f);
  absl::StatusOr<spec::JobDocument> doc = BuildJobDocument(f);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JobFlagsErrorTest,
    ::testing::Values(
        BadFlags{"NoCommand", [](JobFlags& f) { f.command.clear(); },
                 "no command: give it after --, e.g. tessera submit --gpus 1 -- python train.py"},
        BadFlags{"NegativeGpus", [](JobFlags& f) { f.gpus = "-1"; }, "--gpus: must be >= 0"},
        BadFlags{"GpusNotANumber", [](JobFlags& f) { f.gpus = "two"; },
                 "--gpus: \"two\" is not a quantity"},
        BadFlags{"GpusAboveOneNotWhole", [](JobFlags& f) { f.gpus = "1.5"; },
                 "--gpus: must be a whole number of GPUs, or a share of one GPU below 1 (0.5 = "
                 "half a GPU), not 1.5"},
        BadFlags{"MemWithoutUnit", [](JobFlags& f) { f.mem = "4096"; },
                 "--mem: '4096': give a unit: 512Mi, 1Gi, 64Gi"},
        BadFlags{"MemNotAQuantity", [](JobFlags& f) { f.mem = "lots"; },
                 "--mem: \"lots\" is not a quantity"},
        BadFlags{"CpusTooFine", [](JobFlags& f) { f.cpus = "0.0001"; },
                 "--cpus: 0.0001 is not a whole number of millicores"},
        BadFlags{"ZeroNodes", [](JobFlags& f) { f.nodes = 0; }, "--nodes: must be >= 1, got 0"},
        BadFlags{"BadTime", [](JobFlags& f) { f.time = "1:99"; },
                 "--time: '1:99': minutes and seconds must be 0..59"},
        BadFlags{"BadName", [](JobFlags& f) { f.name = "My_Job"; },
                 "--name: \"My_Job\" is not a valid name (lowercase letters, digits, '-' and "
                 "'.', starting and ending with a letter or digit, at most 253 characters)"},
        BadFlags{"EmptyQueue", [](JobFlags& f) { f.queue = ""; }, "--queue: must not be empty"},
        BadFlags{"ClusterNotAName", [](JobFlags& f) { f.cluster = "Slurm_A"; },
                 "--cluster: 'Slurm_A' is not a cluster name (lowercase letters, digits, '.', "
                 "'_' and '-', starting with a letter or digit, at most 63 characters)"},
        BadFlags{"EmptyCluster", [](JobFlags& f) { f.cluster = ""; },
                 "--cluster: '' is not a cluster name (lowercase letters, digits, '.', '_' and "
                 "'-', starting with a letter or digit, at most 63 characters)"},
        BadFlags{"UnknownPriorityClass", [](JobFlags& f) { f.priority = "urgent"; },
                 "--priority: unknown priority class \"urgent\" (known: critical, high, low, "
                 "normal)"},
        BadFlags{"EnvWithoutEquals", [](JobFlags& f) { f.env = {"PATH"}; },
                 "--env: expected KEY=VALUE, got 'PATH'"},
        BadFlags{"LabelWithoutKey", [](JobFlags& f) { f.labels = {"=x"}; },
                 "--label: expected KEY=VALUE, got '=x'"},
        BadFlags{"CommandNotUtf8",
                 [](JobFlags& f) {
                   f.command = {"echo", "\xff"};
                 },
                 "a flag value or the command is not valid UTF-8"},
        BadFlags{"ModelWithoutGpu", [](JobFlags& f) { f.gpu_models = {"H100"}; },
                 "--gpu-model: needs gpu > 0"}),
    [](const ::testing::TestParamInfo<BadFlags>& info) { return info.param.name; });

}  // namespace
}  // namespace tessera::cli

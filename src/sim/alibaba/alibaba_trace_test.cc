#include "sim/alibaba/alibaba_trace.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::sim::alibaba {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "node-0,64000,262144,2,P100\n"
    "node-1,96000,786432,8,V100M32\r\n"  // CRLF tolerated
    "node-2,32000,131072,0,nan\n"
    "\n";

constexpr std::string_view kFullHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

const std::vector<std::string> kModels = {"P100", "T4", "V100M16", "V100M32"};

// Writes `text` to a fresh file in the test's temporary directory.
std::string WriteTemp(const std::string& name, std::string_view text) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "alibaba_trace_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(NodeListTest, ParsesNodesDevicesPoolsAndLabels) {
  absl::StatusOr<NodeList> list = ParseNodeList(kNodes, "nodes.csv");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->nodes.size(), 3u);
  const Node& n1 = list->nodes[1];
  EXPECT_EQ(n1.name, "node-1");
  EXPECT_EQ(n1.pool, "V100M32");
  EXPECT_EQ(n1.labels.at(std::string(kGpuModelLabel)), "V100M32");
  EXPECT_EQ(n1.capacity.cpu, 96000);
  EXPECT_EQ(n1.capacity.memory, int64_t{786432} << 20);
  EXPECT_EQ(n1.capacity.gpu, 8000);
  EXPECT_EQ(n1.allocatable, n1.capacity);
  ASSERT_EQ(n1.gpus.size(), 8u);
  EXPECT_EQ(n1.gpus[7].index, 7);
  EXPECT_EQ(n1.gpus[7].model, "V100M32");
  EXPECT_EQ(n1.gpus[7].FreeMilli(), 1000);
  const Node& n2 = list->nodes[2];
  EXPECT_EQ(n2.pool, kCpuPool);
  EXPECT_TRUE(n2.gpus.empty());
  EXPECT_FALSE(n2.labels.contains(std::string(kGpuModelLabel)));
  EXPECT_THAT(list->models, ElementsAre("P100", "V100M32"));
  EXPECT_EQ(list->total_gpu_milli, 10000);
  EXPECT_EQ(list->total_cpu_milli, 192000);
}

TEST(PodListTest, ParsesTheElevenColumnForm) {
  const std::string text = std::string(kFullHeader) +
                           "pod-0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                           "pod-1,6000,12288,1,460,V100M32|V100M16|V100M32,BE,Running,5,9,7\n"
                           "pod-2,88000,327680,8,1000,nan,Burstable,Succeeded,10,20,11\n"
                           "pod-3,4000,0,0,0,,BE,Pending,30,40,\n";
  absl::StatusOr<PodList> list = ParsePodList(text, "pods.csv", kModels);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->has_times);
  ASSERT_EQ(list->tasks.size(), 4u);
  const TraceTask& t1 = list->tasks[1];
  EXPECT_EQ(t1.name, "pod-1");
  EXPECT_EQ(t1.line, 3);
  EXPECT_EQ(t1.request.cpu, 6000);
  EXPECT_EQ(t1.request.memory, int64_t{12288} << 20);
  EXPECT_EQ(t1.request.gpu_count, 1);
  EXPECT_EQ(t1.request.gpu_milli, 460);
  EXPECT_TRUE(t1.request.IsSharing());
  EXPECT_THAT(t1.request.gpu_models, ElementsAre("V100M16", "V100M32"));
  EXPECT_EQ(t1.gpu_spec, "V100M16|V100M32");
  EXPECT_EQ(t1.qos, "BE");
  EXPECT_EQ(t1.creation_time, 5);
  EXPECT_EQ(t1.deletion_time, 9);
  EXPECT_EQ(t1.scheduled_time, 7);
  EXPECT_TRUE(list->tasks[2].request.gpu_models.empty());
  EXPECT_EQ(list->tasks[2].request.TotalGpuMilli(), 8000);
  const TraceTask& t3 = list->tasks[3];
  EXPECT_FALSE(t3.request.NeedsGpu());
  EXPECT_EQ(t3.phase, "Pending");
  EXPECT_FALSE(t3.scheduled_time.has_value());
}

TEST(PodListTest, ParsesTheFiveColumnForm) {
  absl::StatusOr<PodList> list = ParsePodList(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\npod-0,12000,16384,2,1000\n", "m.csv", kModels);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_FALSE(list->has_times);
  ASSERT_EQ(list->tasks.size(), 1u);
  EXPECT_EQ(list->tasks[0].request.gpu_count, 2);
  EXPECT_FALSE(list->tasks[0].creation_time.has_value());
}

TEST(PodListTest, GpuSpecModelsReadsTheSixthColumn) {
  const std::string pods = std::string(kFullHeader) +
                           "pod-b,6000,12288,1,460,,LS,Running,1000,5000,1010\n"
                           "pod-a,12000,16384,2,1000,V100M32|G2,LS,Succeeded,100,3700,100\r\n"
                           "pod-c,4000,4096,0,0,nan,BE,Pending,2000,2600,\n"
                           "pod-d,4000,4096,1,1000,G2,BE,Running,3000,,3000\n";
  EXPECT_THAT(GpuSpecModels(pods), ElementsAre("G2", "V100M32"));
  EXPECT_TRUE(GpuSpecModels("name,cpu\nshort,1\n").empty());
  // With them as the known models, the pod list parses without its node list.
  EXPECT_TRUE(ParsePodList(pods, "p.csv", GpuSpecModels(pods)).ok());
}

struct BadInput {
  std::string name;
  std::string text;
  std::string error;  // expected substring
};

class BadNodeListTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadNodeListTest, IsRejectedWithFileLineAndField) {
  absl::StatusOr<NodeList> list = ParseNodeList(GetParam().text, "nodes.csv");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(list.status().message(), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadNodeListTest,
    ::testing::Values(
        BadInput{"Empty", "", "nodes.csv: empty file"},
        BadInput{"Blank", "\n\n", "nodes.csv: empty file"},
        BadInput{"HeaderOnly", "sn,cpu_milli,memory_mib,gpu,model\n", "no data rows"},
        BadInput{"WrongHeader", "sn,cpu,memory_mib,gpu,model\nn,1,1,1,T4\n",
                 "nodes.csv:1: header: expected 'sn,cpu_milli,memory_mib,gpu,model'"},
        BadInput{"TooFewFields", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1\n",
                 "nodes.csv:2: expected 5 fields, got 4"},
        BadInput{"NegativeCpu", "sn,cpu_milli,memory_mib,gpu,model\nn,-1,1,1,T4\n",
                 "nodes.csv:2: cpu_milli: must be >= 0, got -1"},
        BadInput{"NonNumericMemory", "sn,cpu_milli,memory_mib,gpu,model\nn,1,lots,1,T4\n",
                 "nodes.csv:2: memory_mib: not an integer: 'lots'"},
        BadInput{"HugeMemory", "sn,cpu_milli,memory_mib,gpu,model\nn,1,9000000000000000,1,T4\n",
                 "memory_mib: too large"},
        BadInput{"MissingModel", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,\n",
                 "nodes.csv:2: model: required when gpu > 0"},
        BadInput{"TooManyGpus", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,100,T4\n",
                 "nodes.csv:2: gpu: must be <= 64"},
        BadInput{"ModelWithSpecSeparator", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1,T4|V100\n",
                 "nodes.csv:2: model: must not contain '|'"},
        BadInput{"Duplicate", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1,T4\nn,1,1,1,T4\n",
                 "nodes.csv:3: sn: duplicate node 'n' (first on line 2)"}),
    [](const auto& info) { return info.param.name; });

class BadPodListTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadPodListTest, IsRejectedWithFileLineAndField) {
  absl::StatusOr<PodList> list = ParsePodList(GetParam().text, "pods.csv", kModels);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(list.status().message(), HasSubstr(GetParam().error));
}

std::string Row(std::string_view row) { return std::string(kFullHeader) + std::string(row) + "\n"; }

INSTANTIATE_TEST_SUITE_P(
    Table, BadPodListTest,
    ::testing::Values(
        BadInput{"Empty", "", "pods.csv: empty file"},
        BadInput{"WrongHeader", "name,cpu\np,1\n", "pods.csv:1: header: expected"},
        BadInput{"HeaderOnly", std::string(kFullHeader), "no data rows"},
        BadInput{"TooManyFields", Row("p,1,1,1,1000,,LS,Running,0,1,0,extra"),
                 "pods.csv:2: expected 11 fields, got 12"},
        BadInput{"NegativeGpuMilli", Row("p,1,1,1,-5,,LS,Running,0,1,0"),
                 "pods.csv:2: gpu_milli: must be >= 0, got -5"},
        BadInput{"FloatCpu", Row("p,1.5,1,1,1000,,LS,Running,0,1,0"),
                 "pods.csv:2: cpu_milli: not an integer: '1.5'"},
        BadInput{"GpuMilliAboveOneGpu", Row("p,1,1,1,1500,,LS,Running,0,1,0"),
                 "gpu_milli: must be <= 1000"},
        BadInput{"CpuOnlyWithGpuMilli", Row("p,1,1,0,300,,LS,Running,0,1,0"),
                 "gpu_milli: must be 0 when num_gpu is 0"},
        BadInput{"GpuWithoutMilli", Row("p,1,1,2,0,,LS,Running,0,1,0"),
                 "gpu_milli: must be > 0 when num_gpu > 0"},
        BadInput{"SharedMultiGpu", Row("p,1,1,2,500,,LS,Running,0,1,0"),
                 "a task with num_gpu > 1 takes whole GPUs"},
        BadInput{"UnknownModel", Row("p,1,1,1,1000,T4|H100,LS,Running,0,1,0"),
                 "pods.csv:2: gpu_spec: unknown GPU model 'H100' (the node list has: P100, T4, "
                 "V100M16, V100M32)"},
        BadInput{"EmptyModel", Row("p,1,1,1,1000,T4||P100,LS,Running,0,1,0"),
                 "gpu_spec: empty model name"},
        BadInput{"BadTime", Row("p,1,1,1,1000,,LS,Running,soon,1,0"),
                 "pods.csv:2: creation_time: not an integer: 'soon'"},
        BadInput{"DeletedBeforeCreated", Row("p,1,1,1,1000,,LS,Running,10,5,10"),
                 "deletion_time: before creation_time"},
        BadInput{"ScheduledBeforeCreated", Row("p,1,1,1,1000,,LS,Running,10,50,5"),
                 "scheduled_time: before creation_time"},
        BadInput{"Duplicate",
                 Row("p,1,1,1,1000,,LS,Running,0,1,0") + "p,1,1,1,1000,,LS,Running,0,1,0\n",
                 "pods.csv:3: name: duplicate pod 'p' (first on line 2)"},
        BadInput{"EmptyName", Row(",1,1,1,1000,,LS,Running,0,1,0"),
                 "pods.csv:2: name: must not be empty"}),
    [](const auto& info) { return info.param.name; });

TEST(LoadTest, ReadsFilesAndNamesThePathInErrors) {
  const std::string nodes = WriteTemp("nodes.csv", kNodes);
  absl::StatusOr<NodeList> list = LoadNodeList(nodes);
  ASSERT_TRUE(list.ok()) << list.status();
  const std::string pods = WriteTemp("pods.csv", Row("p,1,1,1,1000,A100,LS,Running,0,1,0"));
  absl::StatusOr<PodList> bad = LoadPodList(pods, list->models);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(pods + ":2: gpu_spec: unknown GPU model 'A100'"));
}

TEST(LoadTest, DirectoryIsNamedAsOne) {
  const std::string dir = ::testing::TempDir();
  absl::StatusOr<NodeList> list = LoadNodeList(dir);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(list.status().message(), HasSubstr(dir + ": is a directory"));
}

TEST(LoadTest, FileOverTheLimitIsRefused) {
  const std::string path = WriteTemp("big.csv", std::string(100, 'x'));
  absl::StatusOr<std::string> text = ReadFileToString(path, /*max_bytes=*/99);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr(path + ": too large"));
  absl::StatusOr<std::string> at_limit = ReadFileToString(path, /*max_bytes=*/100);
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(at_limit->size(), 100u);
}

TEST(LoadTest, NonRegularFileOverTheLimitIsRefused) {
  absl::StatusOr<std::string> text = ReadFileToString("/dev/zero", /*max_bytes=*/1 << 20);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("/dev/zero: too large"));
}

TEST(LoadTest, MissingFileIsNotFound) {
  absl::StatusOr<NodeList> list = LoadNodeList("/nonexistent/nodes.csv");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(list.status().message(), HasSubstr("/nonexistent/nodes.csv"));
}

}  // namespace
}  // namespace tessera::sim::alibaba

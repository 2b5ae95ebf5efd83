#include "agent/local/local_inventory.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(LocalInventoryTest, BuildsTheNodeFromMeasurements) {
  LocalInventoryOptions options;
  options.node_name = "box-1";
  options.pool = "workstations";
  options.labels = {{"rack", "r1"}};
  options.reserved.cpu = 1000;
  options.reserved.memory = 2 * kGiB;
  const std::vector<GpuDevice> gpus = {{.index = 0, .model = "A100-40GB", .memory = 40 * kGiB},
                                       {.index = 1, .model = "A100-40GB", .memory = 40 * kGiB}};
  const Node node = BuildLocalNode(options, {.cpu = 16000, .memory = 64 * kGiB}, gpus, "host-a",
                                   "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(node.name, "box-1");
  EXPECT_EQ(node.cluster, "local");
  EXPECT_EQ(node.pool, "workstations");
  EXPECT_EQ(node.labels.at("rack"), "r1");
  EXPECT_EQ(node.labels.at("tessera.io/hostname"), "host-a");
  EXPECT_EQ(node.labels.at("tessera.io/gpu-product"), "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(node.labels.at("tessera.io/gpu-model"), "A100-40GB");
  EXPECT_EQ(node.capacity.cpu, 16000);
  EXPECT_EQ(node.capacity.memory, 64 * kGiB);
  EXPECT_EQ(node.capacity.gpu, 2000);
  EXPECT_EQ(node.capacity.gpu_memory, 80 * kGiB);
  EXPECT_EQ(node.allocatable.cpu, 15000);
  EXPECT_EQ(node.allocatable.memory, 62 * kGiB);
  EXPECT_EQ(node.allocatable.gpu, 2000);
  EXPECT_TRUE(node.allocated.IsZero());
  ASSERT_EQ(node.gpus.size(), 2u);
  EXPECT_EQ(node.GpuModel(), "A100-40GB");
  EXPECT_EQ(node.FreeGpuMilli(), 2000);
  EXPECT_EQ(node.condition, NodeCondition::kReady);
}

TEST(LocalInventoryTest, ReservesNeverMakeAllocatableNegative) {
  LocalInventoryOptions options;
  options.reserved.cpu = 8000;
  options.reserved.memory = 100 * kGiB;
  const Node node = BuildLocalNode(options, {.cpu = 2000, .memory = kGiB}, {}, "h", "");
  EXPECT_EQ(node.name, "h");
  EXPECT_EQ(node.allocatable.cpu, 0);
  EXPECT_EQ(node.allocatable.memory, 0);
  EXPECT_FALSE(node.labels.contains("tessera.io/gpu-product"));
  EXPECT_FALSE(node.labels.contains("tessera.io/gpu-model"));
}

TEST(LocalInventoryTest, UnhealthyDiscoveredDeviceStaysInPlace) {
  const std::vector<GpuDevice> devices =
      ToGpuDevices({{.index = 0, .model = "H100-80GB", .memory = 80 * kGiB},
                    {.index = 1, .healthy = false, .problem = "lost"}});
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_TRUE(devices[0].healthy);
  EXPECT_FALSE(devices[1].healthy);
  EXPECT_EQ(devices[1].index, 1);
  EXPECT_EQ(devices[1].FreeMilli(), 0);
}

TEST(LocalInventoryTest, DeclaredGpus) {
  std::vector<std::string> lines;
  LocalInventoryOptions options;
  options.declared_gpus = DeclaredGpus{.model = "H100-80GB", .memory = 80 * kGiB, .count = 4};
  options.log = [&](std::string_view line) { lines.emplace_back(line); };
  absl::StatusOr<Node> node = DiscoverLocalNode(options);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->gpus.size(), 4u);
  EXPECT_EQ(node->gpus[3].index, 3);
  EXPECT_EQ(node->GpuModel(), "H100-80GB");
  EXPECT_EQ(node->capacity.gpu, 4000);
  EXPECT_EQ(node->capacity.gpu_memory, 320 * kGiB);
  EXPECT_GE(node->capacity.cpu, 1000);
  EXPECT_GT(node->capacity.memory, 0);
  EXPECT_THAT(lines, Contains("4 GPUs declared by configuration: H100-80GB"));
}

TEST(LocalInventoryTest, BadDeclarationNamesTheField) {
  LocalInventoryOptions options;
  options.declared_gpus = DeclaredGpus{.model = "", .memory = kGiB, .count = 2};
  options.log = [](std::string_view) {};
  absl::StatusOr<Node> node = DiscoverLocalNode(options);
  EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(node.status().message()), HasSubstr("declared_gpus.model"));
}

TEST(LocalInventoryTest, WithoutNvmlTheNodeHasNoGpusAndSaysWhy) {
  std::vector<std::string> lines;
  LocalInventoryOptions options;
  options.nvml_library = "libtessera-no-such-nvml.so.1";
  options.log = [&](std::string_view line) { lines.emplace_back(line); };
  absl::StatusOr<Node> node = DiscoverLocalNode(options);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_THAT(node->gpus, IsEmpty());
  EXPECT_EQ(node->capacity.gpu, 0);
  EXPECT_FALSE(node->name.empty());
  EXPECT_THAT(lines, Contains(HasSubstr("no GPUs: NVML is not available (cannot load "
                                        "libtessera-no-such-nvml.so.1")));
}

}  // namespace
}  // namespace tessera::agent

#include "core/device_selection.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kGi = int64_t{1} << 30;

// A node with one device per entry of `used_milli`, each of `model` with 80 GiB.
Node MakeNode(const std::vector<int64_t>& used_milli, std::string model = "A100-80GB") {
  Node node;
  node.name = "n1";
  for (size_t i = 0; i < used_milli.size(); ++i) {
    GpuDevice d;
    d.index = static_cast<int32_t>(i);
    d.model = model;
    d.memory = 80 * kGi;
    d.used_milli = used_milli[i];
    node.gpus.push_back(d);
  }
  return node;
}

TaskRequest Gpus(int32_t count, int64_t milli, int64_t memory = 0) {
  TaskRequest r;
  r.gpu_count = count;
  r.gpu_milli = milli;
  r.gpu_memory = memory;
  return r;
}

TEST(NodeTest, FreeGpuMilliSkipsUnhealthyDevices) {
  Node node = MakeNode({0, 300, 1000, 500});
  EXPECT_EQ(node.FreeGpuMilli(), 1000 + 700 + 0 + 500);
  node.gpus[0].healthy = false;
  EXPECT_EQ(node.FreeGpuMilli(), 700 + 500);
  EXPECT_EQ(node.GpuModel(), "A100-80GB");
  EXPECT_EQ(Node{}.GpuModel(), "");
  EXPECT_EQ(Node{}.FreeGpuMilli(), 0);
}

struct FitsCase {
  std::string name;
  GpuDevice device;
  TaskRequest task;
  bool want;
};

GpuDevice Device(int64_t used_milli, int64_t used_memory = 0, bool healthy = true) {
  GpuDevice d;
  d.model = "V100M32";
  d.memory = 32 * kGi;
  d.used_milli = used_milli;
  d.used_memory = used_memory;
  d.healthy = healthy;
  return d;
}

TaskRequest WithModels(TaskRequest r, std::vector<std::string> models) {
  r.gpu_models = std::move(models);
  return r;
}

class DeviceFitsTest : public ::testing::TestWithParam<FitsCase> {};
TEST_P(DeviceFitsTest, HonoursHealthModelMilliAndMemory) {
  EXPECT_EQ(DeviceFits(GetParam().device, GetParam().task), GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    DeviceSelection, DeviceFitsTest,
    ::testing::Values(
        FitsCase{"whole_on_free", Device(0), Gpus(1, 1000), true},
        FitsCase{"whole_on_partly_used", Device(1), Gpus(1, 1000), false},
        FitsCase{"whole_on_unhealthy", Device(0, 0, false), Gpus(1, 1000), false},
        FitsCase{"share_fits_exactly", Device(600), Gpus(1, 400), true},
        FitsCase{"share_too_big", Device(601), Gpus(1, 400), false},
        FitsCase{"share_on_unhealthy", Device(0, 0, false), Gpus(1, 1), false},
        FitsCase{"memory_fits", Device(0, 16 * kGi), Gpus(1, 500, 16 * kGi), true},
        FitsCase{"memory_short", Device(0, 16 * kGi + 1), Gpus(1, 500, 16 * kGi), false},
        FitsCase{"whole_memory_too_big", Device(0), Gpus(1, 1000, 33 * kGi), false},
        FitsCase{"model_allowed", Device(0), WithModels(Gpus(1, 1000), {"A100", "V100M32"}), true},
        FitsCase{"model_not_allowed", Device(0), WithModels(Gpus(1, 1000), {"A100"}), false}),
    [](const auto& info) { return info.param.name; });

TEST(FeasibleDevicesTest, ListsEveryFittingDeviceAscending) {
  Node node = MakeNode({0, 900, 500, 0, 1000});
  EXPECT_THAT(FeasibleDevices(node, Gpus(1, 1000)), ElementsAre(0, 3));
  EXPECT_THAT(FeasibleDevices(node, Gpus(1, 500)), ElementsAre(0, 2, 3));
  EXPECT_THAT(FeasibleDevices(node, Gpus(1, 100)), ElementsAre(0, 1, 2, 3));
  node.gpus[3].healthy = false;
  EXPECT_THAT(FeasibleDevices(node, Gpus(1, 1000)), ElementsAre(0));
  EXPECT_THAT(FeasibleDevices(node, WithModels(Gpus(1, 1000), {"H100"})), IsEmpty());
}

struct SelectCase {
  std::string name;
  std::vector<int64_t> used_milli;
  TaskRequest task;
  std::vector<int32_t> want;
};

class SelectTightestTest : public ::testing::TestWithParam<SelectCase> {};
TEST_P(SelectTightestTest, PicksTheTightestDevices) {
  const Node node = MakeNode(GetParam().used_milli);
  const DeviceList got = SelectTightestDevices(node, GetParam().task);
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    DeviceSelection, SelectTightestTest,
    ::testing::Values(SelectCase{"share_takes_least_free", {0, 200, 600, 500}, Gpus(1, 400), {2}},
                      SelectCase{"share_tie_lowest_index", {500, 0, 500}, Gpus(1, 500), {0}},
                      SelectCase{"share_prefers_used_over_free", {0, 100}, Gpus(1, 900), {1}},
                      SelectCase{"share_no_room", {700, 800}, Gpus(1, 400), {}},
                      SelectCase{"whole_lowest_free", {100, 0, 0, 0}, Gpus(2, 1000), {1, 2}},
                      SelectCase{"whole_skips_shared", {0, 300, 0, 0}, Gpus(3, 1000), {0, 2, 3}},
                      SelectCase{"whole_not_enough", {0, 300, 0}, Gpus(3, 1000), {}},
                      SelectCase{"whole_all_eight",
                                 {0, 0, 0, 0, 0, 0, 0, 0},
                                 Gpus(8, 1000),
                                 {0, 1, 2, 3, 4, 5, 6, 7}},
                      SelectCase{"no_gpu_needed", {0, 0}, Gpus(0, 0), {}},
                      SelectCase{"no_devices", {}, Gpus(1, 1000), {}}),
    [](const auto& info) { return info.param.name; });

TEST(SelectTightestTest, RespectsHealthAndMemory) {
  Node node = MakeNode({0, 500, 400});
  node.gpus[1].healthy = false;
  node.gpus[2].used_memory = 70 * kGi;
  // Device 1 is tightest but unhealthy; device 2 has room in milli-GPU but not memory.
  EXPECT_THAT(SelectTightestDevices(node, Gpus(1, 500, 20 * kGi)), ElementsAre(0));
  EXPECT_THAT(SelectTightestDevices(node, Gpus(1, 500, 10 * kGi)), ElementsAre(2));
}

}  // namespace
}  // namespace tessera

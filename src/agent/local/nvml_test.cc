#include "agent/local/nvml.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int kNvmlErrorUninitialized = 1;
constexpr int kNvmlErrorDriverNotLoaded = 9;
constexpr int kNvmlErrorGpuIsLost = 15;

struct FakeDevice {
  std::string name;
  std::string uuid;
  int64_t memory = 0;
  int fail_memory = 0;  // NVML code the memory query returns (0 = success)
};

// An NVML function table over fake devices; handles are pointers into `devices`.
class FakeNvml {
 public:
  std::vector<FakeDevice> devices;
  int init_result = 0;
  int init_calls = 0;
  int shutdown_calls = 0;

  NvmlFunctions Functions() {
    return {
        .init =
            [this] {
              ++init_calls;
              return init_result;
            },
        .shutdown =
            [this] {
              ++shutdown_calls;
              return 0;
            },
        .device_get_count =
            [this](unsigned int* count) {
              *count = static_cast<unsigned int>(devices.size());
              return 0;
            },
        .device_get_handle_by_index =
            [this](unsigned int i, NvmlDevice* device) {
              if (i >= devices.size()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
              *device = &devices[i];
              return 0;
            },
        .device_get_name = [](NvmlDevice d, char* buf,
                              unsigned int len) { return Copy(Of(d).name, buf, len); },
        .device_get_uuid = [](NvmlDevice d, char* buf,
                              unsigned int len) { return Copy(Of(d).uuid, buf, len); },
        .device_get_memory_info =
            [](NvmlDevice d, NvmlMemory* memory) {
              if (Of(d).fail_memory != 0) return Of(d).fail_memory;
              memory->total = static_cast<unsigned long long>(Of(d).memory);
              memory->free = memory->total;
              memory->used = 0;
              return 0;
            },
        .error_string = [](int code) -> const char* {
          switch (code) {
            case kNvmlErrorDriverNotLoaded:
              return "Driver Not Loaded";
            case kNvmlErrorGpuIsLost:
              return "GPU is lost";
            default:
              return "Unknown Error";
          }
        },
    };
  }

 private:
  static const FakeDevice& Of(NvmlDevice d) { return *static_cast<const FakeDevice*>(d); }
  static int Copy(const std::string& s, char* buf, unsigned int len) {
    if (s.size() + 1 > len) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
    std::memcpy(buf, s.c_str(), s.size() + 1);
    return 0;
  }
};

TEST(NvmlTest, DiscoversDevicesInOrder) {
  FakeNvml nvml;
  nvml.devices = {{"NVIDIA H100 80GB HBM3", "GPU-aaaa", 81559 * kMiB},
                  {"NVIDIA H100 80GB HBM3", "GPU-bbbb", 81559 * kMiB}};
  absl::StatusOr<std::vector<DiscoveredGpu>> gpus = DiscoverGpus(nvml.Functions());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].product, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[1].model, "H100-80GB");
  EXPECT_EQ((*gpus)[1].uuid, "GPU-bbbb");
  EXPECT_EQ((*gpus)[1].memory, 81559 * kMiB);
  EXPECT_TRUE((*gpus)[1].healthy);
  EXPECT_EQ(nvml.init_calls, 1);
  EXPECT_EQ(nvml.shutdown_calls, 1);
}

TEST(NvmlTest, FailingDeviceKeepsItsIndexAndIsUnhealthy) {
  FakeNvml nvml;
  nvml.devices = {{"NVIDIA A100-SXM4-40GB", "GPU-0", 40960 * kMiB},
                  {"NVIDIA A100-SXM4-40GB", "GPU-1", 0, kNvmlErrorGpuIsLost},
                  {"NVIDIA A100-SXM4-40GB", "GPU-2", 40960 * kMiB}};
  absl::StatusOr<std::vector<DiscoveredGpu>> gpus = DiscoverGpus(nvml.Functions());
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_FALSE((*gpus)[1].healthy);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].problem, "nvmlDeviceGetMemoryInfo: GPU is lost (NVML error 15)");
  EXPECT_TRUE((*gpus)[2].healthy);
  EXPECT_EQ((*gpus)[2].model, "A100-40GB");
}

TEST(NvmlTest, InitFailureIsUnavailableWithNvmlsMessage) {
  FakeNvml nvml;
  nvml.init_result = kNvmlErrorDriverNotLoaded;
  absl::StatusOr<std::vector<DiscoveredGpu>> gpus = DiscoverGpus(nvml.Functions());
  EXPECT_EQ(gpus.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(gpus.status().message(), "nvmlInit: Driver Not Loaded (NVML error 9)");
  EXPECT_EQ(nvml.shutdown_calls, 0);
}

TEST(NvmlTest, NoDevices) {
  FakeNvml nvml;
  absl::StatusOr<std::vector<DiscoveredGpu>> gpus = DiscoverGpus(nvml.Functions());
  ASSERT_TRUE(gpus.ok());
  EXPECT_THAT(*gpus, IsEmpty());
  EXPECT_EQ(nvml.shutdown_calls, 1);
}

TEST(NvmlTest, ModelNames) {
  struct Case {
    std::string product;
    int64_t memory_mib;
    std::string model;
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", 81559, "H100-80GB"},
      {"NVIDIA A100-SXM4-80GB", 81920, "A100-80GB"},
      {"NVIDIA A100-PCIE-40GB", 40960, "A100-40GB"},
      {"Tesla V100-SXM2-32GB", 32768, "V100-32GB"},
      {"Tesla T4", 15360, "T4-16GB"},
      {"NVIDIA L40S", 46068, "L40S-48GB"},
      {"NVIDIA H200", 143771, "H200-141GB"},
      {"NVIDIA A10", 23028, "A10-24GB"},
      {"NVIDIA GeForce RTX 4090", 24564, "RTX-4090-24GB"},
      {"NVIDIA RTX A6000", 49140, "RTX-A6000-48GB"},
      {"NVIDIA H100 NVL", 95830, "H100-94GB"},
      {"", 1024, "GPU-1GB"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NormalizeGpuModel(c.product, c.memory_mib * kMiB), c.model) << c.product;
  }
}

TEST(NvmlLibraryTest, MissingLibraryIsNotFound) {
  absl::StatusOr<std::unique_ptr<NvmlLibrary>> library =
      NvmlLibrary::Open("libtessera-no-such-nvml.so.1");
  EXPECT_EQ(library.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("cannot load libtessera-no-such-nvml.so.1"));
}

TEST(NvmlLibraryTest, LibraryWithoutNvmlSymbolsIsRefused) {
  absl::StatusOr<std::unique_ptr<NvmlLibrary>> library = NvmlLibrary::Open("libm.so.6");
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(library.status().message()), HasSubstr("nvmlInit_v2"));
}

}  // namespace
}  // namespace tessera::agent

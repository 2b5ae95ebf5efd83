#include "agent/local/nvml.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

constexpr int kNvmlSuccess = 0;
// NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE.
constexpr unsigned int kNameBufferSize = 96;
constexpr unsigned int kUuidBufferSize = 96;
constexpr int64_t kGiB = int64_t{1} << 30;
// Memory sizes GPUs are sold with, in GB; NVML reports a little less than these.
constexpr int64_t kMarketedSizesGb[] = {1,  2,  3,   4,   5,   6,   8,   10,  11,
                                        12, 16, 20,  24,  32,  40,  48,  64,  80,
                                        94, 96, 128, 141, 144, 180, 192, 256, 288};

std::string NvmlError(const NvmlFunctions& nvml, std::string_view call, int code) {
  const char* text = nvml.error_string ? nvml.error_string(code) : nullptr;
  return text != nullptr ? fmt::format("{}: {} (NVML error {})", call, text, code)
                         : fmt::format("{}: NVML error {}", call, code);
}

// A NUL-terminated string from a buffer NVML filled (or less, if it did not terminate it).
std::string FromBuffer(const char* buffer, size_t size) {
  return std::string(buffer, std::find(buffer, buffer + size, '\0'));
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

bool HasDigit(std::string_view word) {
  return std::any_of(word.begin(), word.end(), [](char c) { return std::isdigit(c) != 0; });
}

// "80GB" -> 80; 0 when the word is not a size.
int64_t SizeWord(std::string_view word) {
  if (word.size() < 3 || !word.ends_with("GB")) return 0;
  int64_t gb = 0;
  for (char c : word.substr(0, word.size() - 2)) {
    if (std::isdigit(c) == 0) return 0;
    gb = gb * 10 + (c - '0');
  }
  return gb;
}

int64_t MarketedSizeGb(int64_t memory_bytes) {
  const int64_t gib_rounded_up = (memory_bytes + kGiB - 1) / kGiB;
  for (int64_t size : kMarketedSizesGb) {
    if (size >= gib_rounded_up) return size;
  }
  return gib_rounded_up;
}

DiscoveredGpu QueryDevice(const NvmlFunctions& nvml, unsigned int index) {
  DiscoveredGpu gpu{.index = static_cast<int32_t>(index)};
  auto fail = [&](std::string problem) {
    gpu.healthy = false;
    gpu.problem = std::move(problem);
    return gpu;
  };
  NvmlDevice device = nullptr;
  if (int rc = nvml.device_get_handle_by_index(index, &device); rc != kNvmlSuccess) {
    return fail(NvmlError(nvml, "nvmlDeviceGetHandleByIndex", rc));
  }
  char name[kNameBufferSize] = {};
  if (int rc = nvml.device_get_name(device, name, kNameBufferSize); rc != kNvmlSuccess) {
    return fail(NvmlError(nvml, "nvmlDeviceGetName", rc));
  }
  gpu.product = FromBuffer(name, kNameBufferSize);
  char uuid[kUuidBufferSize] = {};
  if (int rc = nvml.device_get_uuid(device, uuid, kUuidBufferSize); rc != kNvmlSuccess) {
    return fail(NvmlError(nvml, "nvmlDeviceGetUUID", rc));
  }
  gpu.uuid = FromBuffer(uuid, kUuidBufferSize);
  NvmlMemory memory{};
  if (int rc = nvml.device_get_memory_info(device, &memory); rc != kNvmlSuccess) {
    return fail(NvmlError(nvml, "nvmlDeviceGetMemoryInfo", rc));
  }
  gpu.memory = static_cast<int64_t>(memory.total);
  gpu.model = NormalizeGpuModel(gpu.product, gpu.memory);
  return gpu;
}

}  // namespace

std::string NormalizeGpuModel(std::string_view product, int64_t memory_bytes) {
  std::vector<std::string> words = Words(product);
  static constexpr std::string_view kBrands[] = {"NVIDIA", "Tesla", "GeForce", "Quadro"};
  while (!words.empty() &&
         std::find(std::begin(kBrands), std::end(kBrands), words.front()) != std::end(kBrands)) {
    words.erase(words.begin());
  }
  std::string family;
  int64_t size_gb = 0;
  bool family_done = false;
  for (const std::string& word : words) {
    if (const int64_t gb = SizeWord(word); gb > 0) {
      size_gb = gb;
      family_done = true;
      continue;
    }
    if (family_done) continue;
    family += family.empty() ? word : "-" + word;
    family_done = HasDigit(word);
  }
  if (family.empty()) family = "GPU";
  if (size_gb == 0) size_gb = MarketedSizeGb(memory_bytes);
  return fmt::format("{}-{}GB", family, size_gb);
}

absl::StatusOr<std::vector<DiscoveredGpu>> DiscoverGpus(const NvmlFunctions& nvml) {
  if (int rc = nvml.init(); rc != kNvmlSuccess) {
    return absl::UnavailableError(NvmlError(nvml, "nvmlInit", rc));
  }
  unsigned int count = 0;
  std::vector<DiscoveredGpu> gpus;
  const int rc = nvml.device_get_count(&count);
  if (rc == kNvmlSuccess) {
    for (unsigned int i = 0; i < count; ++i) gpus.push_back(QueryDevice(nvml, i));
  }
  nvml.shutdown();
  if (rc != kNvmlSuccess) return absl::UnavailableError(NvmlError(nvml, "nvmlDeviceGetCount", rc));
  return gpus;
}

}  // namespace tessera::agent

#include "sched/plugins/basic/resource_allocation.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "fmt/format.h"
#include "tessera/sched/plugin.h"

namespace tessera {
namespace {

constexpr int64_t kMinWeight = 1;
constexpr int64_t kMaxWeight = 100;

WeightedResource::Kind KindOf(std::string_view name) {
  using Kind = WeightedResource::Kind;
  if (name == "cpu") return Kind::kCpu;
  if (name == "memory") return Kind::kMemory;
  if (name == "gpu") return Kind::kGpu;
  if (name == "gpu_memory") return Kind::kGpuMemory;
  return Kind::kExtended;
}

int64_t Lookup(const std::map<std::string, int64_t, std::less<>>& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

struct Use {
  int64_t requested = 0;  // allocated + the task's request
  int64_t allocatable = 0;
};

// a + b, saturating at the int64 maximum (quantities are never negative here).
int64_t Plus(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

Use UseAfterPlacing(const WeightedResource& r, const TaskRequest& task, const Node& node) {
  const Resources& alloc = node.allocatable;
  const Resources& used = node.allocated;
  switch (r.kind) {
    case WeightedResource::Kind::kCpu:
      return {Plus(used.cpu, task.cpu), alloc.cpu};
    case WeightedResource::Kind::kMemory:
      return {Plus(used.memory, task.memory), alloc.memory};
    case WeightedResource::Kind::kGpu:
      return {Plus(used.gpu, task.TotalGpuMilli()), alloc.gpu};
    case WeightedResource::Kind::kGpuMemory:
      return {Plus(used.gpu_memory, task.gpu_count * task.gpu_memory), alloc.gpu_memory};
    case WeightedResource::Kind::kExtended:
      return {Plus(Lookup(used.extended, r.name), Lookup(task.extended, r.name)),
              Lookup(alloc.extended, r.name)};
  }
  return {};
}

absl::Status ItemError(std::string_view plugin, std::string_view item, std::string_view what) {
  return absl::InvalidArgumentError(
      fmt::format("{}: {}: \"{}\": {}", plugin, kResourcesArg, item, what));
}

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The comma-separated items of `text`, trimmed; blank items are dropped.
std::vector<std::string_view> SplitItems(std::string_view text) {
  std::vector<std::string_view> items;
  while (!text.empty()) {
    const size_t comma = std::min(text.find(','), text.size());
    if (std::string_view item = Trim(text.substr(0, comma)); !item.empty()) items.push_back(item);
    text.remove_prefix(std::min(comma + 1, text.size()));
  }
  return items;
}

bool ParseInt(std::string_view text, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

ResourceWeights DefaultResourceWeights() {
  using Kind = WeightedResource::Kind;
  return {{Kind::kCpu, "cpu", 1}, {Kind::kMemory, "memory", 1}, {Kind::kGpu, "gpu", 1}};
}

absl::StatusOr<ResourceWeights> ParseResourceWeights(std::string_view plugin,
                                                     std::string_view text) {
  ResourceWeights out;
  for (std::string_view item : SplitItems(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return ItemError(plugin, item, "want name=weight");
    const std::string_view name = Trim(item.substr(0, eq));
    const std::string_view weight_text = Trim(item.substr(eq + 1));
    if (name.empty()) return ItemError(plugin, item, "empty resource name");
    int64_t weight = 0;
    if (!ParseInt(weight_text, &weight) || weight < kMinWeight || weight > kMaxWeight) {
      return ItemError(
          plugin, item,
          fmt::format("weight must be an integer in [{}, {}]", kMinWeight, kMaxWeight));
    }
    if (std::any_of(out.begin(), out.end(),
                    [&](const WeightedResource& r) { return r.name == name; })) {
      return ItemError(plugin, item, "resource listed twice");
    }
    out.push_back({KindOf(name), std::string(name), weight});
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}: must name at least one resource", plugin, kResourcesArg));
  }
  return out;
}

// Quantities reach 2^63 (bytes of a large node), so `x * 100` is computed in 128 bits.
int64_t ScaledShare(int64_t part, int64_t whole) {
  return static_cast<int64_t>(static_cast<__int128>(part) * kMaxNodeScore / whole);
}

int64_t LeastRequestedScore(int64_t requested, int64_t allocatable) {
  if (requested > allocatable) return kMinNodeScore;
  return ScaledShare(allocatable - requested, allocatable);
}

int64_t MostRequestedScore(int64_t requested, int64_t allocatable) {
  return ScaledShare(std::min(requested, allocatable), allocatable);
}

int64_t AllocationScore(const ResourceWeights& weights, AllocationStrategy strategy,
                        const TaskRequest& task, const Node& node) {
  int64_t weighted_sum = 0;
  int64_t weight_sum = 0;
  for (const WeightedResource& r : weights) {
    const Use use = UseAfterPlacing(r, task, node);
    if (use.allocatable <= 0) continue;
    weighted_sum += strategy(std::max<int64_t>(use.requested, 0), use.allocatable) * r.weight;
    weight_sum += r.weight;
  }
  return weight_sum == 0 ? kMinNodeScore : weighted_sum / weight_sum;
}

}  // namespace tessera

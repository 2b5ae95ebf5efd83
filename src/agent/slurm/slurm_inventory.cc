#include "agent/slurm/slurm_inventory.h"

#include <limits>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/slurm/slurm_json.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tessera/common/status_macros.h"

namespace tessera::agent {
namespace {

using nlohmann::json;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kMaxCpus = int64_t{1} << 24;  // far above any machine, far below overflow

// Splits at the commas outside parentheses: "gpu:a:1(S:0,1),gpu:b:2" → two items.
std::vector<std::string_view> GresItems(std::string_view gres) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= gres.size(); ++i) {
    if (i == gres.size() || (gres[i] == ',' && depth == 0)) {
      items.push_back(gres.substr(begin, i - begin));
      begin = i + 1;
    } else if (gres[i] == '(') {
      ++depth;
    } else if (gres[i] == ')' && depth > 0) {
      --depth;
    }
  }
  return items;
}

absl::StatusOr<GresGpus> ParseGpuItem(std::string_view item, std::vector<std::string_view> parts) {
  GresGpus gpus{.count = 1};
  const bool last_is_count = parts.size() > 1 && !parts.back().empty() &&
                             parts.back().find_first_not_of("0123456789") == std::string_view::npos;
  if (parts.size() > 3) {
    return absl::InvalidArgumentError(
        fmt::format("item \"{}\": expected gpu[:type][:count]", item));
  }
  if (parts.size() == 3 && !last_is_count) {
    return absl::InvalidArgumentError(
        fmt::format("item \"{}\": count \"{}\" is not a number", item, parts.back()));
  }
  if (last_is_count) {
    int64_t count = 0;
    if (!absl::SimpleAtoi(absl::string_view(parts.back().data(), parts.back().size()), &count) ||
        count > kMaxGpusPerNode) {
      return absl::InvalidArgumentError(fmt::format("item \"{}\": count {} is more than {} GPUs",
                                                    item, parts.back(), kMaxGpusPerNode));
    }
    gpus.count = static_cast<int32_t>(count);
    parts.pop_back();
  }
  if (parts.size() == 2) {
    if (parts[1].empty()) {
      return absl::InvalidArgumentError(fmt::format("item \"{}\": empty GPU type", item));
    }
    gpus.type = std::string(parts[1]);
  }
  return gpus;
}

bool InPartition(const std::vector<std::string>& partitions, std::string_view wanted) {
  if (wanted.empty()) return true;
  for (const std::string& partition : partitions) {
    if (partition == wanted) return true;
  }
  return false;
}

// The base state and flags, upper case: v0.0.38 sends "state": "idle" and
// "state_flags": ["DRAIN"]; later versions send "state": ["IDLE", "DRAIN"].
absl::StatusOr<std::set<std::string>> StateWords(const json& entry) {
  std::set<std::string> words;
  if (entry.contains("state") && entry["state"].is_array()) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> states, slurm_json::Strings(entry, "state"));
    words.insert(states.begin(), states.end());
  } else {
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> state, slurm_json::String(entry, "state"));
    if (!state.has_value()) return absl::InvalidArgumentError("state: missing");
    // Older versions spell flags into the state: "idle+drain", "down*".
    for (absl::string_view word :
         absl::StrSplit(*state, absl::ByAnyChar("+*"), absl::SkipEmpty())) {
      words.insert(std::string(word));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> flags,
                           slurm_json::Strings(entry, "state_flags"));
  words.insert(flags.begin(), flags.end());
  std::set<std::string> upper;
  for (const std::string& word : words) upper.insert(absl::AsciiStrToUpper(word));
  return upper;
}

bool AnyOf(const std::set<std::string>& words, std::initializer_list<std::string_view> wanted) {
  for (std::string_view word : wanted) {
    if (words.contains(std::string(word))) return true;
  }
  return false;
}

absl::StatusOr<int64_t> RequiredCount(const json& entry, std::string_view key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> value, slurm_json::NonNegative(entry, key));
  if (!value.has_value()) return absl::InvalidArgumentError(fmt::format("{}: missing", key));
  return *value;
}

absl::StatusOr<int64_t> MiBToBytes(int64_t mib, std::string_view key) {
  if (mib > std::numeric_limits<int64_t>::max() / kMiB) {
    return absl::InvalidArgumentError(fmt::format("{}: {} MiB is out of range", key, mib));
  }
  return mib * kMiB;
}

absl::Status AddGpus(const json& entry, const SlurmInventoryOptions& options, Node& node) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> gres, slurm_json::String(entry, "gres"));
  if (!gres.has_value()) return absl::OkStatus();
  absl::StatusOr<std::vector<GresGpus>> items = ParseGpuGres(*gres);
  if (!items.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("gres \"{}\": {}", *gres, std::string(items.status().message())));
  }
  for (const GresGpus& item : *items) {
    if (static_cast<int64_t>(node.gpus.size()) + item.count > kMaxGpusPerNode) {
      return absl::InvalidArgumentError(
          fmt::format("gres \"{}\": more than {} GPUs", *gres, kMaxGpusPerNode));
    }
    SlurmGpuType type{.model = GpuModelFromGresType(item.type)};
    if (auto it = options.gpu_types.find(item.type); it != options.gpu_types.end()) {
      type = it->second;
    }
    for (int32_t i = 0; i < item.count; ++i) {
      node.gpus.push_back({.index = static_cast<int32_t>(node.gpus.size()),
                           .model = type.model,
                           .memory = type.memory});
    }
  }
  return absl::OkStatus();
}

// The GPUs Slurm has given jobs: the counts of gres_used's "gpu" items.
absl::StatusOr<int32_t> UsedGpus(const json& entry) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> used, slurm_json::String(entry, "gres_used"));
  if (!used.has_value()) return 0;
  absl::StatusOr<std::vector<GresGpus>> items = ParseGpuGres(*used);
  if (!items.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("gres_used \"{}\": {}", *used, std::string(items.status().message())));
  }
  int64_t gpus = 0;
  for (const GresGpus& item : *items) gpus += item.count;
  if (gpus > kMaxGpusPerNode) {
    return absl::InvalidArgumentError(
        fmt::format("gres_used \"{}\": more than {} GPUs", *used, kMaxGpusPerNode));
  }
  return static_cast<int32_t>(gpus);
}

// What Slurm has allocated on the node (alloc_cpus, alloc_memory, gres_used); alloc_memory is
// the usage's memory as well.
absl::Status AddAllocated(const json& entry, SlurmNode& parsed) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> cpus,
                           slurm_json::NonNegative(entry, "alloc_cpus"));
  if (cpus.value_or(0) > kMaxCpus) {
    return absl::InvalidArgumentError(fmt::format("alloc_cpus: {} is out of range", *cpus));
  }
  parsed.allocated.cpu = cpus.value_or(0) * 1000;
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> memory,
                           slurm_json::NonNegative(entry, "alloc_memory"));
  if (memory.has_value()) {
    TESSERA_ASSIGN_OR_RETURN(parsed.allocated.memory, MiBToBytes(*memory, "alloc_memory"));
    parsed.usage.memory = parsed.allocated.memory;
  }
  TESSERA_ASSIGN_OR_RETURN(parsed.allocated.gpus, UsedGpus(entry));
  return absl::OkStatus();
}

absl::Status AddUsage(const json& entry, SlurmNode& parsed) {
  parsed.usage.node = parsed.node.name;
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> load, slurm_json::NonNegative(entry, "cpu_load"));
  if (load.has_value() && *load <= std::numeric_limits<int64_t>::max() / 10) {
    parsed.usage.cpu = *load * 10;
  }
  return AddAllocated(entry, parsed);
}

// nullopt: the node lies outside the partition filter.
absl::StatusOr<std::optional<SlurmNode>> ParseNode(const json& entry, std::string name,
                                                   const SlurmInventoryOptions& options) {
  SlurmNode parsed;
  Node& node = parsed.node;
  node.name = std::move(name);
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> partitions,
                           slurm_json::Strings(entry, "partitions"));
  if (!InPartition(partitions, options.partition)) return std::nullopt;
  node.cluster = options.cluster;
  node.pool = partitions.empty() ? "default" : partitions.front();
  node.labels = options.labels;
  node.labels[std::string(kSlurmNodeLabel)] = node.name;
  if (!partitions.empty()) {
    node.labels[std::string(kPartitionsLabel)] = absl::StrJoin(partitions, ",");
  }

  TESSERA_ASSIGN_OR_RETURN(int64_t cpus, RequiredCount(entry, "cpus"));
  if (cpus > kMaxCpus) {
    return absl::InvalidArgumentError(fmt::format("cpus: {} is out of range", cpus));
  }
  TESSERA_ASSIGN_OR_RETURN(int64_t memory_mib, RequiredCount(entry, "real_memory"));
  TESSERA_ASSIGN_OR_RETURN(node.capacity.memory, MiBToBytes(memory_mib, "real_memory"));
  node.capacity.cpu = cpus * 1000;
  TESSERA_RETURN_IF_ERROR(AddGpus(entry, options, node));
  node.capacity.gpu = kMilliGpuPerDevice * static_cast<int64_t>(node.gpus.size());
  node.allocatable = node.capacity;
  if (!node.gpus.empty()) node.labels[std::string(kGpuModelLabel)] = node.gpus.front().model;

  TESSERA_ASSIGN_OR_RETURN(std::set<std::string> state, StateWords(entry));
  if (AnyOf(state, {"DOWN", "FAIL", "FAILING", "FUTURE", "NOT_RESPONDING", "NO_RESPOND"})) {
    node.condition = NodeCondition::kDown;
  }
  node.unschedulable = AnyOf(state, {"DRAIN", "DRAINING", "DRAINED"});

  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> address,
                           slurm_json::String(entry, "address"));
  parsed.address = address.has_value() && !address->empty() ? *address : node.name;
  TESSERA_RETURN_IF_ERROR(AddUsage(entry, parsed));
  return parsed;
}

// The entry's name, for messages and as the node's identity.
absl::StatusOr<std::string> NodeName(const json& entry) {
  if (!entry.is_object()) return absl::InvalidArgumentError("must be an object");
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> name, slurm_json::String(entry, "name"));
  if (!name.has_value() || name->empty()) return absl::InvalidArgumentError("name: missing");
  return *name;
}

}  // namespace

absl::StatusOr<std::vector<GresGpus>> ParseGpuGres(std::string_view gres) {
  std::vector<GresGpus> gpus;
  if (gres.empty() || gres == "(null)") return gpus;
  for (std::string_view item : GresItems(gres)) {
    const std::string_view spec = item.substr(0, item.find('('));
    std::vector<std::string_view> parts;
    for (size_t begin = 0;;) {
      const size_t colon = spec.find(':', begin);
      parts.push_back(spec.substr(begin, colon - begin));
      if (colon == std::string_view::npos) break;
      begin = colon + 1;
    }
    if (parts.front() != "gpu") continue;
    TESSERA_ASSIGN_OR_RETURN(GresGpus entry, ParseGpuItem(item, std::move(parts)));
    gpus.push_back(std::move(entry));
  }
  return gpus;
}

std::string GpuModelFromGresType(std::string_view type) {
  std::string model(type);
  absl::AsciiStrToUpper(&model);
  for (char& c : model) {
    if (c == '_') c = '-';
  }
  if (model.starts_with("NVIDIA-") && model.size() > 7) model.erase(0, 7);
  return model;
}

absl::StatusOr<SlurmNodeList> ParseSlurmNodes(std::string_view text,
                                              const SlurmInventoryOptions& options) {
  const json reply = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) {
    return absl::InvalidArgumentError("slurm nodes: the reply is not a JSON object");
  }
  auto nodes = reply.find("nodes");
  if (nodes == reply.end() || !nodes->is_array()) {
    const std::string errors = slurm_json::ErrorText(reply);
    return absl::InvalidArgumentError(fmt::format("slurm nodes: the reply has no \"nodes\" list{}",
                                                  errors.empty() ? "" : ": " + errors));
  }
  SlurmNodeList list;
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const json& entry = (*nodes)[i];
    absl::StatusOr<std::string> name = NodeName(entry);
    if (!name.ok()) {
      list.errors.push_back(
          fmt::format("slurm nodes[{}]: {}", i, std::string(name.status().message())));
      continue;
    }
    if (!seen.insert(*name).second) {
      list.errors.push_back(fmt::format("slurm node {}: listed twice; the first is kept", *name));
      continue;
    }
    absl::StatusOr<std::optional<SlurmNode>> node = ParseNode(entry, *name, options);
    if (!node.ok()) {
      list.errors.push_back(
          fmt::format("slurm node {}: {}", *name, std::string(node.status().message())));
    } else if (node->has_value()) {
      list.nodes.push_back(**std::move(node));
    }
  }
  return list;
}

}  // namespace tessera::agent

// Task groups of a job document: their replicas, command, resources and tolerations, and the
// merge of the job-level nodeSelector and tolerations into every group (the Decoder of
// job_decoder_impl.h; the document and spec levels are in job_decoder.cc).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "spec/internal/job_decoder_impl.h"
#include "spec/internal/shown_bound.h"
#include "tessera/common/status_macros.h"

namespace tessera::spec::internal::job_decoding {
namespace {

// Extended resources are domain-qualified ("rdma/hca", "nvidia.com/mig-1g.10gb") or one of
// Kubernetes' standard names; anything else in `resources` is a typo.
bool IsExtendedResourceName(std::string_view key) {
  return key.find('/') != std::string_view::npos || key == "ephemeral-storage" ||
         key.starts_with("hugepages-");
}

// A task group's keys beside its resources.
constexpr std::string_view kTaskKeys[] = {"name", "replicas",   "command",      "args",
                                          "env",  "workingDir", "nodeSelector", "tolerations"};
constexpr std::string_view kResourceKeys[] = {"cpu", "memory", "gpu", "gpuMemory", "gpuModel"};

// The keys of a task group: its own and `resources` (camelCase), or its own and the resources'
// (snake_case, where resources are given on the group).
KeyList TaskKeys(KeyStyle style) {
  static const std::vector<std::string_view>* const kNested = [] {
    auto* keys = new std::vector<std::string_view>(std::begin(kTaskKeys), std::end(kTaskKeys));
    keys->push_back("resources");
    return keys;
  }();
  static const std::vector<std::string_view>* const kFlat = [] {
    auto* keys = new std::vector<std::string_view>(std::begin(kTaskKeys), std::end(kTaskKeys));
    keys->insert(keys->end(), std::begin(kResourceKeys), std::end(kResourceKeys));
    return keys;
  }();
  return style == KeyStyle::kCamelCase ? *kNested : *kFlat;
}

bool IsResourceKey(std::string_view key) {
  return std::find(std::begin(kResourceKeys), std::end(kResourceKeys), key) !=
             std::end(kResourceKeys) ||
         IsExtendedResourceName(key);
}

}  // namespace

absl::StatusOr<std::vector<Toleration>> Decoder::DecodeTolerations(const DocNode& n,
                                                                   const std::string& path) {
  std::vector<Toleration> tolerations;
  if (n.IsNull()) return tolerations;
  if (!n.IsSequence()) {
    return Error(n, path, fmt::format("must be a list of tolerations, not {}", Describe(n)));
  }
  for (size_t i = 0; i < n.items.size(); ++i) {
    const std::string item = Item(path, i);
    positions_[item] = n.items[i]->position;
    TESSERA_ASSIGN_OR_RETURN(Toleration toleration, DecodeToleration(*n.items[i], item));
    tolerations.push_back(std::move(toleration));
  }
  return tolerations;
}

absl::StatusOr<Toleration> Decoder::DecodeToleration(const DocNode& n, const std::string& path) {
  if (!n.IsMapping()) {
    return Error(
        n, path,
        fmt::format("must be a mapping (key, operator, value, effect), not {}", Describe(n)));
  }
  Toleration toleration;
  const DocNode* value_node = nullptr;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, {"key", "operator", "value", "effect"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "key") {
          TESSERA_ASSIGN_OR_RETURN(toleration.key, Text(v, field));
        } else if (key == "operator") {
          TESSERA_ASSIGN_OR_RETURN(const std::string op, Choice(v, field, {"Equal", "Exists"}));
          toleration.exists = op == "Exists";
        } else if (key == "value") {
          value_node = &v;
          TESSERA_ASSIGN_OR_RETURN(toleration.value, Text(v, field));
        } else {
          TESSERA_ASSIGN_OR_RETURN(
              const std::string effect,
              Choice(v, field, {"NoSchedule", "PreferNoSchedule", "NoExecute", ""}));
          if (effect == "NoSchedule") toleration.effect = TaintEffect::kNoSchedule;
          if (effect == "PreferNoSchedule") toleration.effect = TaintEffect::kPreferNoSchedule;
          if (effect == "NoExecute") toleration.effect = TaintEffect::kNoExecute;
        }
        return absl::OkStatus();
      }));
  if (toleration.key.empty() && !toleration.exists) {
    return Error(n, Child(path, "key"), "required unless the operator is Exists");
  }
  if (toleration.exists && value_node != nullptr && !toleration.value.empty()) {
    return Error(*value_node, Child(path, "value"), "must be empty when the operator is Exists");
  }
  return toleration;
}

absl::StatusOr<TaskDraft> Decoder::DecodeTask(const DocNode& n, const std::string& path) {
  if (!n.IsMapping()) {
    return Error(n, path, fmt::format("must be a mapping (a task group), not {}", Describe(n)));
  }
  TaskDraft draft;
  draft.path = path;
  TaskGroup& group = draft.group;
  bool named = false;
  ResourceDraft resources;
  const bool flat = dialect_.style == KeyStyle::kSnakeCase;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, TaskKeys(dialect_.style),
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (flat && IsResourceKey(key)) {
          return DecodeResource(key, v, field, resources, group.request);
        }
        if (key == "name") {
          named = true;
          TESSERA_ASSIGN_OR_RETURN(group.name, Text(v, field));
        } else if (key == "replicas") {
          TESSERA_ASSIGN_OR_RETURN(const int64_t replicas, Int(v, field, 1, kInt32Max));
          group.replicas = static_cast<int32_t>(replicas);
        } else if (key == "resources") {
          return DecodeResources(v, field, group.request);
        } else if (key == "command") {
          TESSERA_ASSIGN_OR_RETURN(group.command, StringList(v, field, false, false));
        } else if (key == "args") {
          TESSERA_ASSIGN_OR_RETURN(group.args, StringList(v, field, false, false));
        } else if (key == "env") {
          TESSERA_ASSIGN_OR_RETURN(const Labels env, StringMap(v, field));
          for (const auto& [name, value] : env) {
            if (name.find('=') != std::string::npos) {
              return Error(v, Child(field, name), "names must not contain '='");
            }
            group.env.emplace(name, value);
          }
        } else if (key == "workingDir") {
          TESSERA_ASSIGN_OR_RETURN(group.working_dir, Text(v, field));
        } else if (key == "nodeSelector") {
          draft.node_selector_node = &v;
          TESSERA_ASSIGN_OR_RETURN(draft.node_selector, StringMap(v, field));
        } else {
          TESSERA_ASSIGN_OR_RETURN(draft.tolerations, DecodeTolerations(v, field));
        }
        return absl::OkStatus();
      },
      /*server_keys=*/{}, flat ? IsExtendedResourceName : NoExtraKeys));
  if (flat) TESSERA_RETURN_IF_ERROR(FinishResources(path, resources, group.request));
  if (!named) return Error(n, Child(path, "name"), "required");
  return draft;
}

absl::Status Decoder::DecodeResources(const DocNode& n, const std::string& path,
                                      TaskRequest& request) {
  ResourceDraft draft;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, kResourceKeys,
      [&](std::string_view key, const DocNode& v, const std::string& field) {
        return DecodeResource(key, v, field, draft, request);
      },
      /*server_keys=*/{}, IsExtendedResourceName));
  return FinishResources(path, draft, request);
}

absl::Status Decoder::DecodeResource(std::string_view key, const DocNode& v,
                                     const std::string& field, ResourceDraft& draft,
                                     TaskRequest& request) {
  if (key == "gpuModel") {
    draft.gpu_model = &v;
    TESSERA_ASSIGN_OR_RETURN(request.gpu_models, StringList(v, field, true, true));
    return absl::OkStatus();
  }
  if (key == "nvidia.com/gpu" || key == "amd.com/gpu") {
    return Error(v, field,
                 fmt::format("GPUs are requested with {} (4 = four whole GPUs, 0.5 = half of one)",
                             Key("gpu")));
  }
  TESSERA_ASSIGN_OR_RETURN(const std::string text, Text(v, field));
  absl::StatusOr<int64_t> quantity;
  int64_t max = dialect_.bounds.max_count;
  QuantityKind kind = QuantityKind::kCount;
  if (key == "cpu") {
    quantity = ParseCpuMillis(text, field);
    max = dialect_.bounds.max_cpu_millis;
    kind = QuantityKind::kCpuMillis;
  } else if (key == "memory" || key == "gpuMemory") {
    quantity = ParseBytes(text, field);
    max = dialect_.bounds.max_bytes;
    kind = QuantityKind::kBytes;
  } else if (key == "gpu") {
    quantity = ParseMilliGpu(text, field);
    max = dialect_.bounds.max_milli_gpu;
    kind = QuantityKind::kMilliGpu;
  } else {
    quantity = ParseCount(text, field);
  }
  if (!quantity.ok()) return Wrap(v, field, quantity.status());
  if (*quantity > max) {
    return Error(v, field, fmt::format("must be at most {}", ShownBound(kind, max)));
  }
  if (key == "cpu") {
    request.cpu = *quantity;
  } else if (key == "memory") {
    request.memory = *quantity;
  } else if (key == "gpuMemory") {
    draft.gpu_memory = &v;
    request.gpu_memory = *quantity;
  } else if (key == "gpu") {
    draft.gpu = &v;
    draft.gpu_milli = *quantity;
  } else {
    request.extended.emplace(std::string(key), *quantity);
  }
  return absl::OkStatus();
}

absl::Status Decoder::FinishResources(const std::string& path, const ResourceDraft& draft,
                                      TaskRequest& request) const {
  const int64_t gpu_milli = draft.gpu_milli;
  if (gpu_milli > kMilliGpuPerDevice && gpu_milli % kMilliGpuPerDevice != 0) {
    return Error(*draft.gpu, Child(path, "gpu"),
                 fmt::format("must be a whole number of GPUs, or a share of one GPU below 1 "
                             "(0.5 = half a GPU), not {}",
                             FormatMilliGpu(gpu_milli)));
  }
  if (gpu_milli / kMilliGpuPerDevice > kInt32Max) {
    return Error(*draft.gpu, Child(path, "gpu"), fmt::format("must be <= {}", kInt32Max));
  }
  if (gpu_milli > 0) {
    const bool share = gpu_milli < kMilliGpuPerDevice;
    request.gpu_count = share ? 1 : static_cast<int32_t>(gpu_milli / kMilliGpuPerDevice);
    request.gpu_milli = share ? gpu_milli : kMilliGpuPerDevice;
  } else if (draft.gpu_memory != nullptr && request.gpu_memory > 0) {
    return Error(*draft.gpu_memory, Child(path, Key("gpuMemory")), "needs gpu > 0");
  } else if (draft.gpu_model != nullptr && !request.gpu_models.empty()) {
    return Error(*draft.gpu_model, Child(path, Key("gpuModel")), "needs gpu > 0");
  }
  return absl::OkStatus();
}

absl::Status Decoder::MergeJobPlacement(const Labels& node_selector,
                                        const std::vector<Toleration>& tolerations,
                                        std::vector<TaskDraft>& drafts) {
  for (TaskDraft& draft : drafts) {
    TaskRequest& request = draft.group.request;
    request.node_selector = node_selector;
    for (const auto& [key, value] : draft.node_selector) {
      const auto [it, inserted] = request.node_selector.emplace(key, value);
      if (!inserted && it->second != value) {
        const std::string selector = Key("nodeSelector");
        return Error(*draft.node_selector_node, Child(Child(draft.path, selector), key),
                     fmt::format("\"{}\" conflicts with {}.{} (\"{}\")", value,
                                 Child(root_path_, selector), key, it->second));
      }
    }
    request.tolerations = tolerations;
    request.tolerations.insert(request.tolerations.end(), draft.tolerations.begin(),
                               draft.tolerations.end());
  }
  return absl::OkStatus();
}

}  // namespace tessera::spec::internal::job_decoding

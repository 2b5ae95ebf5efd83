// The quick reading mirrors the decoder of spec/internal/job_decoder.cc step by step (what it
// takes, what it refuses, the defaults, the merge of the job-level placement into each task
// group) but gives up, instead of naming the error, on anything that decoder would refuse and
// on shapes RenderJobJson does not write; ParseJobDocument then reads the text again.
#include "spec/rendered_job_json.h"

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/duration.h"
#include "core/quantity.h"
#include "spec/internal/document_tree.h"
#include "spec/jobspec.h"
#include "spec/json_reader.h"

namespace tessera::spec {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr size_t kMaxRequestIdLength = 256;  // as the full decoder

using Keys = std::initializer_list<std::string_view>;

// The index of `key` in `keys`, or -1.
int KeyIndex(std::string_view key, Keys keys) {
  int index = 0;
  for (std::string_view k : keys) {
    if (k == key) return index;
    ++index;
  }
  return -1;
}

// As the full decoder: domain-qualified names and Kubernetes' standard extended resources.
bool IsExtendedResourceName(std::string_view key) {
  return key.find('/') != std::string_view::npos || key == "ephemeral-storage" ||
         key.starts_with("hugepages-");
}

// A task group before the job-level nodeSelector and tolerations are merged into it.
struct Draft {
  TaskGroup group;
  Labels node_selector;
  std::vector<Toleration> tolerations;
};

class Reader {
 public:
  explicit Reader(std::string_view text) : in_(text) {}

  // The document, or nullopt when the full decoder must read it.
  std::optional<JobDocument> Read(int64_t max_nodes) {
    if (!Document() || !in_.Finish() || in_.saw_nul() || in_.nodes() > max_nodes) {
      return std::nullopt;
    }
    if (!doc_.spec.Validate("spec").ok()) return std::nullopt;
    return std::move(doc_);
  }

 private:
  // Reads a mapping (null: an empty one) whose keys are among `keys`, each at most once,
  // calling `fn(index of the key)` to read each value.
  template <typename Fn>
  bool Entries(Keys keys, Fn fn) {
    if (in_.AtNull()) return true;
    if (!in_.BeginObject()) return false;
    uint32_t seen = 0;
    std::string_view key;
    while (in_.NextKey(key)) {
      const int index = KeyIndex(key, keys);
      if (index < 0 || (seen & (1u << index)) != 0) return in_.Fail();
      seen |= 1u << index;
      if (!fn(index)) return in_.Fail();
    }
    return in_.ok();
  }

  // A list (null: an empty one), calling `fn()` to read each item.
  template <typename Fn>
  bool Items(Fn fn) {
    if (in_.AtNull()) return true;
    if (!in_.BeginArray()) return false;
    while (in_.NextItem()) {
      if (!fn()) return in_.Fail();
    }
    return in_.ok();
  }

  bool Text(std::string& out) { return in_.Scalar(out); }

  bool Int(int64_t min, int64_t max, int64_t& out) {
    if (!in_.Scalar(scalar_)) return false;
    const char* end = scalar_.data() + scalar_.size();
    const auto [ptr, ec] = std::from_chars(scalar_.data(), end, out);
    return ec == std::errc() && ptr == end && out >= min && out <= max;
  }

  bool Int32(int64_t min, int32_t& out) {
    int64_t value = 0;
    if (!Int(min, kInt32Max, value)) return false;
    out = static_cast<int32_t>(value);
    return true;
  }

  bool Bool(bool& out) {
    if (!in_.Scalar(scalar_)) return false;
    if (scalar_ == "true" || scalar_ == "True" || scalar_ == "TRUE") {
      out = true;
    } else if (scalar_ == "false" || scalar_ == "False" || scalar_ == "FALSE") {
      out = false;
    } else {
      return false;
    }
    return true;
  }

  bool Dur(Duration& out) {
    if (!in_.Scalar(scalar_)) return false;
    absl::StatusOr<Duration> duration = ParseDuration(scalar_, "");
    if (!duration.ok()) return false;
    out = *duration;
    return true;
  }

  // The index of the value among `choices`, or -1 (then false).
  bool Choice(Keys choices, int& index) {
    if (!in_.Scalar(scalar_)) return false;
    index = KeyIndex(scalar_, choices);
    return index >= 0;
  }

  bool StringMap(Labels& map) {
    map.clear();
    if (in_.AtNull()) return true;
    if (!in_.BeginObject()) return false;
    std::string_view key;
    while (in_.NextKey(key)) {
      if (key.empty()) return in_.Fail();
      std::string name(key);
      std::string value;
      if (!Text(value) || !map.emplace(std::move(name), std::move(value)).second) {
        return in_.Fail();
      }
    }
    return in_.ok();
  }

  // A list of single values (null: an empty one); `allow_one` also takes a single value as a
  // list of one.
  bool StringList(std::vector<std::string>& list, bool allow_one, bool non_empty) {
    list.clear();
    if (in_.AtNull()) return true;
    std::string text;
    if (in_.BeginArrayIfNext()) {
      while (in_.NextItem()) {
        if (!Text(text) || (non_empty && text.empty())) return in_.Fail();
        list.push_back(std::move(text));
      }
      return in_.ok();
    }
    if (!allow_one || !Text(text) || (non_empty && text.empty())) return in_.Fail();
    list.push_back(std::move(text));
    return true;
  }

  bool Document() {
    if (!in_.ok() || !in_.BeginObject()) return false;  // null, empty or not a mapping
    enum { kApiVersion, kKind, kMetadata, kSpec };
    bool has[4] = {};
    std::string_view key;
    while (in_.NextKey(key)) {
      const int index = KeyIndex(key, {"apiVersion", "kind", "metadata", "spec"});
      if (index < 0 || has[index]) return in_.Fail();
      has[index] = true;
      bool read = false;
      switch (index) {
        case kApiVersion:
          read = Text(scalar_) && scalar_ == "tessera/v1";
          break;
        case kKind:
          read = Text(scalar_) && scalar_ == "Job";
          break;
        case kMetadata:
          read = Metadata();
          break;
        default:
          read = Spec();
      }
      if (!read) return in_.Fail();
    }
    return in_.ok() && has[kApiVersion] && has[kKind] && has[kSpec];
  }

  bool Metadata() {
    enum { kName, kLabels, kRequestId };
    return Entries({"name", "labels", "requestId"}, [&](int key) {
      switch (key) {
        case kName:
          return Text(doc_.spec.name);
        case kLabels:
          return StringMap(doc_.spec.labels);
        default: {
          const std::string& id = doc_.metadata.request_id;
          return Text(doc_.metadata.request_id) && !id.empty() && id.size() <= kMaxRequestIdLength;
        }
      }
    });
  }

  bool Spec() {
    enum {
      kQueue,
      kPriority,
      kMinAvailable,
      kTimeLimit,
      kDuration,
      kPreemptible,
      kMinRuntime,
      kTerminationGracePeriod,
      kRestartPolicy,
      kNodeSelector,
      kTolerations,
      kClusterSelector,
      kClusterAffinity,
      kClusterAntiAffinity,
      kTasks,
    };
    JobSpec& spec = doc_.spec;
    Labels node_selector;
    std::vector<Toleration> tolerations;
    std::vector<Draft> drafts;
    bool has_tasks = false;
    const bool read = Entries(
        {"queue", "priority", "minAvailable", "timeLimit", "duration", "preemptible", "minRuntime",
         "terminationGracePeriod", "restartPolicy", "nodeSelector", "tolerations",
         "clusterSelector", "clusterAffinity", "clusterAntiAffinity", "tasks"},
        [&](int key) {
          switch (key) {
            case kQueue:
              return Text(spec.queue);
            case kPriority:
              return Int32(kInt32Min, spec.priority);
            case kMinAvailable: {
              int32_t min_available = 0;
              if (!Int32(1, min_available)) return false;
              spec.min_available = min_available;
              return true;
            }
            case kTimeLimit:
            case kDuration: {
              Duration d{0};
              if (!Dur(d) || d.count() <= 0) return false;
              (key == kTimeLimit ? spec.time_limit : spec.duration) = d;
              return true;
            }
            case kPreemptible:
              return Bool(spec.preemptible);
            case kMinRuntime:
              return Dur(spec.min_runtime);
            case kTerminationGracePeriod:
              return Dur(spec.termination_grace);
            case kRestartPolicy:
              return RestartPolicy(spec.restart_policy);
            case kNodeSelector:
              return StringMap(node_selector);
            case kTolerations:
              return Tolerations(tolerations);
            case kClusterSelector:
              return StringMap(spec.cluster_selector);
            case kClusterAffinity:
              return Affinity(spec.cluster_affinity);
            case kClusterAntiAffinity:
              return Affinity(spec.cluster_anti_affinity);
            default:
              has_tasks = true;
              if (!in_.BeginArray()) return false;  // null included: a list is required
              while (in_.NextItem()) {
                if (!Task(drafts.emplace_back())) return in_.Fail();
              }
              return in_.ok() && !drafts.empty();
          }
        });
    if (!read || !has_tasks) return false;
    for (Draft& draft : drafts) {  // MergeJobPlacement
      TaskRequest& request = draft.group.request;
      request.node_selector = node_selector;
      for (const auto& [key, value] : draft.node_selector) {
        const auto [it, inserted] = request.node_selector.emplace(key, value);
        if (!inserted && it->second != value) return false;
      }
      request.tolerations = tolerations;
      request.tolerations.insert(request.tolerations.end(), draft.tolerations.begin(),
                                 draft.tolerations.end());
      spec.tasks.push_back(std::move(draft.group));
    }
    return true;
  }

  bool RestartPolicy(tessera::RestartPolicy& policy) {
    enum { kOnFailure, kMaxRestarts };
    return Entries({"onFailure", "maxRestarts"}, [&](int key) {
      if (key == kMaxRestarts) return Int32(0, policy.max_restarts);
      int action = 0;
      if (!Choice({"requeue", "fail"}, action)) return false;
      policy.on_failure = action == 0 ? RestartAction::kRequeue : RestartAction::kFail;
      return true;
    });
  }

  bool Tolerations(std::vector<Toleration>& tolerations) {
    tolerations.clear();
    return Items([&] { return ReadToleration(tolerations.emplace_back()); });
  }

  bool ReadToleration(Toleration& toleration) {
    if (in_.AtNull()) return false;  // must be a mapping
    enum { kKey, kOperator, kValue, kEffect };
    bool has_value = false;
    const bool read = Entries({"key", "operator", "value", "effect"}, [&](int key) {
      int choice = 0;
      switch (key) {
        case kKey:
          return Text(toleration.key);
        case kOperator:
          if (!Choice({"Equal", "Exists"}, choice)) return false;
          toleration.exists = choice == 1;
          return true;
        case kValue:
          has_value = true;
          return Text(toleration.value);
        default:
          if (!Choice({"NoSchedule", "PreferNoSchedule", "NoExecute", ""}, choice)) return false;
          if (choice == 0) toleration.effect = TaintEffect::kNoSchedule;
          if (choice == 1) toleration.effect = TaintEffect::kPreferNoSchedule;
          if (choice == 2) toleration.effect = TaintEffect::kNoExecute;
          return true;
      }
    });
    if (!read) return false;
    if (toleration.key.empty() && !toleration.exists) return false;
    return !(toleration.exists && has_value && !toleration.value.empty());
  }

  bool Task(Draft& draft) {
    if (in_.AtNull()) return false;  // must be a mapping
    enum {
      kName,
      kReplicas,
      kResources,
      kCommand,
      kArgs,
      kEnv,
      kWorkingDir,
      kNodeSelector,
      kTolerations,
    };
    TaskGroup& group = draft.group;
    bool named = false;
    const bool read = Entries({"name", "replicas", "resources", "command", "args", "env",
                               "workingDir", "nodeSelector", "tolerations"},
                              [&](int key) {
                                switch (key) {
                                  case kName:
                                    named = true;
                                    return Text(group.name);
                                  case kReplicas:
                                    return Int32(1, group.replicas);
                                  case kResources:
                                    return Resources(group.request);
                                  case kCommand:
                                    return StringList(group.command, false, false);
                                  case kArgs:
                                    return StringList(group.args, false, false);
                                  case kEnv: {
                                    Labels env;
                                    if (!StringMap(env)) return false;
                                    for (auto& [name, value] : env) {
                                      if (name.find('=') != std::string::npos) return false;
                                      group.env.emplace(name, std::move(value));
                                    }
                                    return true;
                                  }
                                  case kWorkingDir:
                                    return Text(group.working_dir);
                                  case kNodeSelector:
                                    return StringMap(draft.node_selector);
                                  default:
                                    return Tolerations(draft.tolerations);
                                }
                              });
    return read && named;
  }

  bool Resources(TaskRequest& request) {
    if (in_.AtNull()) return true;
    if (!in_.BeginObject()) return false;
    enum { kCpu, kMemory, kGpu, kGpuMemory, kGpuModel };
    uint32_t seen = 0;
    int64_t gpu_milli = 0;
    std::string_view key;
    while (in_.NextKey(key)) {
      int index = KeyIndex(key, {"cpu", "memory", "gpu", "gpuMemory", "gpuModel"});
      std::string extended;
      if (index < 0) {
        if (!IsExtendedResourceName(key) || key == "nvidia.com/gpu" || key == "amd.com/gpu") {
          return in_.Fail();
        }
        extended = key;
      } else if ((seen & (1u << index)) != 0) {
        return in_.Fail();
      } else {
        seen |= 1u << index;
      }
      if (index == kGpuModel) {
        if (!StringList(request.gpu_models, true, true)) return in_.Fail();
        continue;
      }
      if (!Text(scalar_)) return in_.Fail();
      absl::StatusOr<int64_t> quantity;
      switch (index) {
        case kCpu:
          quantity = ParseCpuMillis(scalar_, "");
          break;
        case kMemory:
        case kGpuMemory:
          quantity = ParseBytes(scalar_, "");
          break;
        case kGpu:
          quantity = ParseMilliGpu(scalar_, "");
          break;
        default:
          quantity = ParseCount(scalar_, "");
      }
      if (!quantity.ok()) return in_.Fail();
      switch (index) {
        case kCpu:
          request.cpu = *quantity;
          break;
        case kMemory:
          request.memory = *quantity;
          break;
        case kGpuMemory:
          request.gpu_memory = *quantity;
          break;
        case kGpu:
          gpu_milli = *quantity;
          break;
        default:
          if (!request.extended.emplace(std::move(extended), *quantity).second) {
            return in_.Fail();  // given twice
          }
      }
    }
    if (!in_.ok()) return false;
    if (gpu_milli > kMilliGpuPerDevice && gpu_milli % kMilliGpuPerDevice != 0) return false;
    if (gpu_milli / kMilliGpuPerDevice > kInt32Max) return false;
    if (gpu_milli > 0) {
      const bool share = gpu_milli < kMilliGpuPerDevice;
      request.gpu_count = share ? 1 : static_cast<int32_t>(gpu_milli / kMilliGpuPerDevice);
      request.gpu_milli = share ? gpu_milli : kMilliGpuPerDevice;
      return true;
    }
    return request.gpu_memory <= 0 && request.gpu_models.empty();
  }

  bool Affinity(ClusterAffinityTerms& terms) {
    terms = {};
    if (in_.BeginArrayIfNext()) return RequirementItems(terms.required);  // the short form
    enum { kRequired, kPreferred };
    return Entries({"required", "preferred"}, [&](int key) {
      if (key == kRequired) return Requirements(terms.required);
      terms.preferred.clear();
      return Items([&] { return PreferredTerm(terms.preferred.emplace_back()); });
    });
  }

  bool Requirements(std::vector<LabelRequirement>& requirements) {
    requirements.clear();
    if (in_.AtNull()) return true;
    if (!in_.BeginArray()) return false;
    return RequirementItems(requirements);
  }

  bool RequirementItems(std::vector<LabelRequirement>& requirements) {
    while (in_.NextItem()) {
      if (!Requirement(requirements.emplace_back())) return in_.Fail();
    }
    return in_.ok();
  }

  bool Requirement(LabelRequirement& requirement) {
    if (in_.AtNull()) return false;  // must be a mapping
    enum { kKey, kOperator, kValues };
    bool has_key = false;
    bool has_operator = false;
    const bool read = Entries({"key", "operator", "values"}, [&](int key) {
      switch (key) {
        case kKey:
          has_key = true;
          return Text(requirement.key) && !requirement.key.empty();
        case kOperator: {
          has_operator = true;
          int op = 0;
          if (!Choice({"In", "NotIn", "Exists", "DoesNotExist"}, op)) return false;
          requirement.op = static_cast<LabelOperator>(op);
          return true;
        }
        default:
          return StringList(requirement.values, false, false);
      }
    });
    if (!read || !has_key || !has_operator) return false;
    const bool set_based =
        requirement.op == LabelOperator::kIn || requirement.op == LabelOperator::kNotIn;
    return set_based != requirement.values.empty();
  }

  bool PreferredTerm(PreferredLabelTerm& term) {
    if (in_.AtNull()) return false;  // must be a mapping
    enum { kWeight, kMatch };
    bool has_weight = false;
    const bool read = Entries({"weight", "match"}, [&](int key) {
      if (key == kMatch) return Requirements(term.match);
      has_weight = true;
      int64_t weight = 0;
      if (!Int(kInt32Min, kInt32Max, weight) || weight < 1 || weight > kMaxPreferredWeight) {
        return false;
      }
      term.weight = static_cast<int32_t>(weight);
      return true;
    });
    return read && has_weight && !term.match.empty();
  }

  JsonReader in_;
  std::string scalar_;  // the text of the scalar read last, for values that are parsed further
  JobDocument doc_;
};

}  // namespace

absl::StatusOr<JobDocument> ParseRenderedJobJson(std::string_view text) {
  const ParseOptions options{.format = DocumentFormat::kJson};
  const internal::DocumentLimits limits{.max_bytes = options.max_bytes,
                                        .max_depth = options.max_depth,
                                        .max_nodes = options.max_nodes};
  if (internal::CheckText(text, limits).ok()) {
    std::optional<JobDocument> document = Reader(text).Read(limits.max_nodes);
    if (document.has_value()) return *std::move(document);
  }
  return ParseJobDocument(text, options);
}

}  // namespace tessera::spec

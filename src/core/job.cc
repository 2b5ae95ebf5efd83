#include "core/job.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "core/internal/decimal.h"
#include "core/node.h"
#include "fmt/format.h"

namespace tessera {
namespace {

absl::Status FieldError(std::string_view field, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, message));
}

// Kubernetes' DNS-1123 names: lowercase letters, digits and '-' (and '.' when `allow_dots`),
// starting and ending with a letter or digit.
bool IsDnsName(std::string_view name, size_t max_length, bool allow_dots) {
  if (name.empty() || name.size() > max_length) return false;
  const auto alnum = [](char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || (allow_dots && c == '.'); });
}

constexpr size_t kMaxJobNameLength = 253;   // a DNS-1123 subdomain
constexpr size_t kMaxGroupNameLength = 63;  // a DNS-1123 label

// The checks below name their field only once they fail (`field()` builds its path): a valid
// spec is checked without formatting a path (every stored job is checked again at a restart).
template <typename Field>
absl::Status CheckNonNegative(int64_t value, const Field& field) {
  return value < 0 ? FieldError(field(), "must be >= 0") : absl::OkStatus();
}

template <typename Field>
absl::Status CheckKeysNonEmpty(const Labels& labels, const Field& field) {
  return labels.contains("") ? FieldError(field(), "keys must not be empty") : absl::OkStatus();
}

// Appends `text` length-prefixed ("5:hello"), so concatenations cannot collide.
void AppendString(std::string* out, std::string_view text) {
  fmt::format_to(std::back_inserter(*out), "{}:{}", text.size(), text);
}

std::string TolerationKey(const Toleration& t) {
  std::string key;
  AppendString(&key, t.key);
  if (t.exists) {
    key += "E";
  } else {
    key += "=";
    AppendString(&key, t.value);
  }
  key += t.effect.has_value() ? std::to_string(static_cast<int>(*t.effect)) : "*";
  return key;
}

absl::Status ValidateGpu(const TaskRequest& r, std::string_view field) {
  const auto gpu = [&] { return fmt::format("{}.resources.gpu", field); };
  const auto gpu_memory = [&] { return fmt::format("{}.resources.gpu_memory", field); };
  if (r.gpu_count < 0) return FieldError(gpu(), "must be >= 0");
  if (r.gpu_memory < 0) return FieldError(gpu_memory(), "must be >= 0");
  if (r.gpu_count == 0) {
    if (r.gpu_milli != 0) {
      return FieldError(
          gpu(), fmt::format("milli-GPU per device is {} but no device is requested (gpu_count 0)",
                             r.gpu_milli));
    }
    if (r.gpu_memory != 0) return FieldError(gpu_memory(), "needs a GPU (gpu_count > 0)");
    return absl::OkStatus();
  }
  if (r.gpu_milli < 1 || r.gpu_milli > kMilliGpuPerDevice) {
    return FieldError(gpu(), fmt::format("milli-GPU per device must be in 1..{}, got {}",
                                         kMilliGpuPerDevice, r.gpu_milli));
  }
  if (r.gpu_count > kMaxGpusPerNode) {
    return FieldError(gpu(), fmt::format("at most {} GPUs per task (a task runs on one node, "
                                         "which has at most {}), got {}",
                                         kMaxGpusPerNode, kMaxGpusPerNode, r.gpu_count));
  }
  if (r.gpu_milli < kMilliGpuPerDevice && r.gpu_count != 1) {
    return FieldError(gpu(), fmt::format("a share of a GPU ({} milli-GPU) is only possible for one "
                                         "device, got {} devices",
                                         r.gpu_milli, r.gpu_count));
  }
  if (r.gpu_memory > std::numeric_limits<int64_t>::max() / r.gpu_count) {
    return FieldError(gpu_memory(), "too large");
  }
  return absl::OkStatus();
}

void AppendRequirement(std::string* out, const LabelRequirement& r) {
  AppendString(out, r.key);
  fmt::format_to(std::back_inserter(*out), "{}", static_cast<int>(r.op));
  for (const std::string& value : r.values) AppendString(out, value);
  *out += ',';
}

void AppendAffinity(std::string* out, std::string_view tag, const ClusterAffinityTerms& terms) {
  if (terms.empty()) return;
  *out += tag;
  for (const LabelRequirement& r : terms.required) AppendRequirement(out, r);
  *out += '|';
  for (const PreferredLabelTerm& term : terms.preferred) {
    fmt::format_to(std::back_inserter(*out), "w{}:", term.weight);
    for (const LabelRequirement& r : term.match) AppendRequirement(out, r);
    *out += '|';
  }
}

template <typename Field>
absl::Status ValidateRequirement(const LabelRequirement& r, const Field& field) {
  if (r.key.empty()) return FieldError(fmt::format("{}.key", field()), "must not be empty");
  const bool set_based = r.op == LabelOperator::kIn || r.op == LabelOperator::kNotIn;
  if (set_based && r.values.empty()) {
    return FieldError(
        fmt::format("{}.values", field()),
        fmt::format("must list at least one value for operator {}", LabelOperatorName(r.op)));
  }
  if (!set_based && !r.values.empty()) {
    return FieldError(fmt::format("{}.values", field()),
                      fmt::format("must be empty for operator {}", LabelOperatorName(r.op)));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view LabelOperatorName(LabelOperator op) {
  switch (op) {
    case LabelOperator::kIn:
      return "In";
    case LabelOperator::kNotIn:
      return "NotIn";
    case LabelOperator::kExists:
      return "Exists";
    case LabelOperator::kDoesNotExist:
      return "DoesNotExist";
  }
  return "?";
}

bool LabelRequirement::Matches(const Labels& labels) const {
  const auto it = labels.find(key);
  const bool present = it != labels.end();
  switch (op) {
    case LabelOperator::kExists:
      return present;
    case LabelOperator::kDoesNotExist:
      return !present;
    case LabelOperator::kIn:
    case LabelOperator::kNotIn: {
      const bool listed =
          present && std::find(values.begin(), values.end(), it->second) != values.end();
      return op == LabelOperator::kIn ? listed : !listed;
    }
  }
  return false;
}

absl::Status ClusterAffinityTerms::Validate(std::string_view field) const {
  for (size_t i = 0; i < required.size(); ++i) {
    const auto path = [&] { return fmt::format("{}.required[{}]", field, i); };
    if (absl::Status s = ValidateRequirement(required[i], path); !s.ok()) return s;
  }
  for (size_t i = 0; i < preferred.size(); ++i) {
    const auto term = [&] { return fmt::format("{}.preferred[{}]", field, i); };
    if (preferred[i].weight < 1 || preferred[i].weight > kMaxPreferredWeight) {
      return FieldError(term() + ".weight", fmt::format("must be 1..{}", kMaxPreferredWeight));
    }
    if (preferred[i].match.empty()) {
      return FieldError(term() + ".match", "must list at least one requirement");
    }
    for (size_t j = 0; j < preferred[i].match.size(); ++j) {
      const auto path = [&] { return fmt::format("{}.match[{}]", term(), j); };
      if (absl::Status s = ValidateRequirement(preferred[i].match[j], path); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (effect.has_value() && *effect != taint.effect) return false;
  if (key.empty()) return exists;  // an empty key matches every taint only with Exists
  if (key != taint.key) return false;
  return exists || value == taint.value;
}

Resources TaskRequest::AsResources() const {
  Resources r;
  r.cpu = cpu;
  r.memory = memory;
  r.gpu = TotalGpuMilli();
  // Validate() rules out overflow; saturate for requests that were never validated.
  if (__builtin_mul_overflow(gpu_memory, int64_t{gpu_count}, &r.gpu_memory)) {
    r.gpu_memory = (gpu_memory < 0) != (gpu_count < 0) ? std::numeric_limits<int64_t>::min()
                                                       : std::numeric_limits<int64_t>::max();
  }
  r.extended.insert(extended.begin(), extended.end());
  return r;
}

std::string TaskRequest::EquivalenceKey() const {
  // Every field is written in a fixed order; strings are length-prefixed, and the unordered
  // lists (models, tolerations) are sorted and deduplicated, so equal placements share a key
  // and different ones never do.
  std::string key = fmt::format("cpu={};mem={};gpu={}x{};gmem={};models=", cpu, memory, gpu_count,
                                gpu_milli, gpu_memory);
  std::vector<std::string_view> models(gpu_models.begin(), gpu_models.end());
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  for (std::string_view model : models) AppendString(&key, model);
  key += ";ext=";
  for (const auto& [name, value] : extended) {
    AppendString(&key, name);
    fmt::format_to(std::back_inserter(key), "={},", value);
  }
  key += ";sel=";
  for (const auto& [name, value] : node_selector) {
    AppendString(&key, name);
    AppendString(&key, value);
  }
  key += ";tol=";
  std::vector<std::string> tolerations_keys;
  tolerations_keys.reserve(tolerations.size());
  for (const Toleration& t : tolerations) tolerations_keys.push_back(TolerationKey(t));
  std::sort(tolerations_keys.begin(), tolerations_keys.end());
  tolerations_keys.erase(std::unique(tolerations_keys.begin(), tolerations_keys.end()),
                         tolerations_keys.end());
  for (const std::string& t : tolerations_keys) AppendString(&key, t);
  // Cluster constraints are appended only when present, so keys of tasks without them are
  // unchanged; each section starts with its own tag after the length-prefixed ones above.
  if (!cluster_selector.empty()) {
    key += ";csel=";
    for (const auto& [name, value] : cluster_selector) {
      AppendString(&key, name);
      AppendString(&key, value);
    }
  }
  AppendAffinity(&key, ";caff=", cluster_affinity);
  AppendAffinity(&key, ";canti=", cluster_anti_affinity);
  return key;
}

absl::Status TaskRequest::Validate(std::string_view field) const {
  const auto resources = [&] { return fmt::format("{}.resources", field); };
  if (cpu < 0) return FieldError(resources() + ".cpu", "must be >= 0");
  if (memory < 0) return FieldError(resources() + ".memory", "must be >= 0");
  if (absl::Status s = ValidateGpu(*this, field); !s.ok()) return s;
  for (size_t i = 0; i < gpu_models.size(); ++i) {
    if (gpu_models[i].empty()) {
      return FieldError(fmt::format("{}.gpu_models[{}]", field, i), "must not be empty");
    }
  }
  for (const auto& [name, value] : extended) {
    if (name.empty()) return FieldError(resources(), "extended resource names must not be empty");
    if (value < 0) return FieldError(fmt::format("{}.{}", resources(), name), "must be >= 0");
  }
  if (absl::Status s =
          CheckKeysNonEmpty(node_selector, [&] { return fmt::format("{}.node_selector", field); });
      !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Toleration& t = tolerations[i];
    const auto path = [&] { return fmt::format("{}.tolerations[{}]", field, i); };
    if (t.key.empty() && !t.exists) {
      return FieldError(path() + ".key", "must not be empty unless the operator is Exists");
    }
    if (t.exists && !t.value.empty()) {
      return FieldError(path() + ".value", "must be empty when the operator is Exists");
    }
  }
  return absl::OkStatus();
}

int32_t JobSpec::TotalTasks() const {
  int64_t total = 0;
  for (const TaskGroup& group : tasks) total += std::max(group.replicas, 0);
  return static_cast<int32_t>(std::min<int64_t>(total, std::numeric_limits<int32_t>::max()));
}

absl::Status JobSpec::Validate(std::string_view field) const {
  const auto path = [&](std::string_view name) { return fmt::format("{}.{}", field, name); };
  const auto lazy = [&](std::string_view name) { return [&path, name] { return path(name); }; };
  if (!name.empty() && !IsDnsName(name, kMaxJobNameLength, /*allow_dots=*/true)) {
    return FieldError(path("name"),
                      fmt::format("{} is not a valid name (lowercase letters, digits, '-' and "
                                  "'.', starting and ending with a letter or digit, at most {} "
                                  "characters)",
                                  internal::QuoteForMessage(name), kMaxJobNameLength));
  }
  if (absl::Status s = CheckKeysNonEmpty(labels, lazy("labels")); !s.ok()) return s;
  if (queue.empty()) return FieldError(path("queue"), "must not be empty");
  if (time_limit.has_value() && time_limit->count() <= 0) {
    return FieldError(path("time_limit"), "must be > 0");
  }
  if (duration.has_value() && duration->count() <= 0) {
    return FieldError(path("duration"), "must be > 0");
  }
  if (absl::Status s = CheckNonNegative(min_runtime.count(), lazy("min_runtime")); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckNonNegative(termination_grace.count(), lazy("termination_grace"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckNonNegative(restart_policy.max_restarts, lazy("restart_policy.max_restarts"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckKeysNonEmpty(cluster_selector, lazy("cluster_selector")); !s.ok()) {
    return s;
  }
  if (!cluster_affinity.empty()) {
    if (absl::Status s = cluster_affinity.Validate(path("cluster_affinity")); !s.ok()) return s;
  }
  if (!cluster_anti_affinity.empty()) {
    if (absl::Status s = cluster_anti_affinity.Validate(path("cluster_anti_affinity")); !s.ok()) {
      return s;
    }
  }
  if (tasks.empty()) return FieldError(path("tasks"), "must have at least one task group");
  std::map<std::string_view, size_t> seen;
  int64_t total = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskGroup& group = tasks[i];
    const std::string group_path = fmt::format("{}.tasks[{}]", field, i);
    if (group.name.empty()) return FieldError(group_path + ".name", "must not be empty");
    if (!IsDnsName(group.name, kMaxGroupNameLength, /*allow_dots=*/false)) {
      return FieldError(group_path + ".name",
                        fmt::format("{} is not a valid name (lowercase letters, digits and "
                                    "'-', starting and ending with a letter or digit, at most {} "
                                    "characters)",
                                    internal::QuoteForMessage(group.name), kMaxGroupNameLength));
    }
    if (const auto [it, inserted] = seen.emplace(group.name, i); !inserted) {
      return FieldError(group_path + ".name",
                        fmt::format("duplicate task group name \"{}\" (also {}.tasks[{}])",
                                    group.name, field, it->second));
    }
    if (group.replicas < 1) return FieldError(group_path + ".replicas", "must be >= 1");
    total += group.replicas;
    if (absl::Status s = group.request.Validate(group_path); !s.ok()) return s;
    if (group.env.contains("")) return FieldError(group_path + ".env", "names must not be empty");
  }
  if (total > kMaxTasksPerJob) {
    return FieldError(path("tasks"), fmt::format("total replicas {} exceed the limit of {} tasks "
                                                 "per job",
                                                 total, kMaxTasksPerJob));
  }
  if (min_available.has_value() && (*min_available < 1 || *min_available > total)) {
    return FieldError(
        path("min_available"),
        fmt::format("must be in 1..{} (the job's task count), got {}", total, *min_available));
  }
  return absl::OkStatus();
}

}  // namespace tessera

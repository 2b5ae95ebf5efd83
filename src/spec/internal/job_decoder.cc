#include "spec/internal/job_decoder.h"
#include "spec/internal/job_decoder_impl.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "core/duration.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "spec/internal/document_error.h"
#include "tessera/common/status_macros.h"

namespace tessera::spec::internal {
namespace job_decoding {
namespace {

constexpr std::string_view kApiVersion = "tessera/v1";
constexpr std::string_view kKind = "Job";
constexpr size_t kMaxRequestIdLength = 256;
// Levenshtein distance between short keys.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// "min_available" -> "minAvailable": the scenario files' spelling of the same key.
std::string SnakeToCamel(std::string_view key) {
  std::string out;
  bool upper = false;
  for (char c : key) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? absl::ascii_toupper(static_cast<unsigned char>(c)) : c);
    upper = false;
  }
  return out;
}

// " (did you mean "gpu"?)" for a near miss among `allowed` (camelCase) spelled in `style`,
// "" otherwise.
std::string Suggestion(std::string_view key, KeyList allowed, KeyStyle style) {
  if (key.size() > 64) return "";
  const std::string camel = SnakeToCamel(key);
  std::string best;
  size_t best_distance = 3;  // suggest only within two edits
  for (std::string_view candidate : allowed) {
    const std::string spelled = StyleKey(candidate, style);
    const size_t distance = camel == candidate ? 0 : EditDistance(key, spelled);
    if (distance < best_distance) {
      best = spelled;
      best_distance = distance;
    }
  }
  return best.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", best);
}

}  // namespace

std::string Child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string Item(std::string_view path, size_t i) { return fmt::format("{}[{}]", path, i); }

std::string_view Describe(const DocNode& node) {
  switch (node.kind) {
    case DocNode::Kind::kNull:
      return "nothing";
    case DocNode::Kind::kScalar:
      return "a single value";
    case DocNode::Kind::kSequence:
      return "a list";
    case DocNode::Kind::kMapping:
      return "a mapping";
  }
  return "?";
}

absl::Status Decoder::Wrap(const DocNode& at, std::string_view field,
                           const absl::Status& status) const {
  const std::string full(status.message());
  std::string_view message = full;
  const std::string prefix = fmt::format("{}: ", field);
  if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  return Error(at, field, message);
}

absl::Status Decoder::ForEachEntry(const DocNode& map, const std::string& path, KeyList allowed,
                                   EntryFn fn, Keys server_keys,
                                   absl::FunctionRef<bool(std::string_view)> extra) {
  if (map.IsNull()) return absl::OkStatus();
  if (!map.IsMapping()) {
    return Error(map, path, fmt::format("must be a mapping, not {}", Describe(map)));
  }
  std::map<std::string_view, const DocNode*> seen;
  for (const auto& [key_node, value] : map.entries) {
    if (!key_node->IsScalar()) return Error(*key_node, path, "keys must be plain names");
    const std::string& key = key_node->scalar;
    const std::string field = Child(path, key);
    const auto spelled = [&](std::string_view k) { return IsSpelledAs(k, key, dialect_.style); };
    if (std::any_of(server_keys.begin(), server_keys.end(), spelled)) {
      return Error(*key_node, field, "set by the server");
    }
    const auto known = std::find_if(allowed.begin(), allowed.end(), spelled);
    if (known == allowed.end() && !extra(key)) {
      return Error(*key_node, field, "unknown key" + Suggestion(key, allowed, dialect_.style));
    }
    if (const auto [it, inserted] = seen.emplace(key, key_node); !inserted) {
      return Error(*key_node, field,
                   fmt::format("given twice (first at line {})", it->second->position.line));
    }
    positions_[field] = value->position;
    TESSERA_RETURN_IF_ERROR(
        fn(known == allowed.end() ? std::string_view(key) : *known, *value, field));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Decoder::Text(const DocNode& n, std::string_view field) const {
  if (n.IsScalar()) return n.scalar;
  if (n.IsNull()) return Error(n, field, "must have a value");
  return Error(n, field, fmt::format("must be a single value, not {}", Describe(n)));
}

absl::StatusOr<int64_t> Decoder::Int(const DocNode& n, std::string_view field, int64_t min,
                                     int64_t max) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, Text(n, field));
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return Error(
        n, field,
        text[0] == '-' ? fmt::format("must be >= {}", min) : fmt::format("must be <= {}", max));
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    return Error(n, field, fmt::format("must be an integer, not \"{}\"", text));
  }
  if (value < min) return Error(n, field, fmt::format("must be >= {}", min));
  if (value > max) return Error(n, field, fmt::format("must be <= {}", max));
  return value;
}

absl::StatusOr<bool> Decoder::Bool(const DocNode& n, std::string_view field) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, Text(n, field));
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return Error(n, field, fmt::format("must be true or false, not \"{}\"", text));
}

absl::StatusOr<Duration> Decoder::Dur(const DocNode& n, std::string_view field) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, Text(n, field));
  absl::StatusOr<Duration> duration = ParseDuration(text, field);
  if (!duration.ok()) return Wrap(n, field, duration.status());
  const Duration max = dialect_.bounds.max_duration;
  if (*duration > max) {
    constexpr auto kYear = std::chrono::hours(24 * 365);
    const int64_t years = max % kYear == Duration::zero() ? max / kYear : 0;
    const std::string shown_years =
        years == 0 ? "" : fmt::format(" ({} year{})", years, years == 1 ? "" : "s");
    return Error(n, field, fmt::format("must be at most {}{}", FormatDuration(max), shown_years));
  }
  return duration;
}

absl::StatusOr<std::string> Decoder::Choice(const DocNode& n, std::string_view field,
                                            Keys choices) const {
  TESSERA_ASSIGN_OR_RETURN(std::string text, Text(n, field));
  if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
    return Error(n, field,
                 fmt::format("must be one of {}, not \"{}\"", fmt::join(choices, ", "), text));
  }
  return text;
}

absl::StatusOr<Labels> Decoder::StringMap(const DocNode& n, const std::string& field) {
  Labels map;
  if (n.IsNull()) return map;
  if (!n.IsMapping()) {
    return Error(n, field,
                 fmt::format("must be a mapping of names to values, not {}", Describe(n)));
  }
  for (const auto& [key_node, value] : n.entries) {
    if (!key_node->IsScalar()) return Error(*key_node, field, "keys must be plain names");
    if (key_node->scalar.empty()) return Error(*key_node, field, "keys must not be empty");
    const std::string entry = Child(field, key_node->scalar);
    positions_[entry] = value->position;
    TESSERA_ASSIGN_OR_RETURN(std::string text, Text(*value, entry));
    if (!map.emplace(key_node->scalar, std::move(text)).second) {
      return Error(*key_node, entry, "given twice");
    }
  }
  return map;
}

absl::StatusOr<std::vector<std::string>> Decoder::StringList(const DocNode& n,
                                                             const std::string& field,
                                                             bool allow_one, bool non_empty) {
  std::vector<std::string> list;
  if (allow_one && n.IsScalar()) {
    if (non_empty && n.scalar.empty()) return Error(n, field, "must not be empty");
    list.push_back(n.scalar);
    return list;
  }
  if (n.IsNull()) return list;
  if (!n.IsSequence()) {
    return Error(n, field, fmt::format("must be a list of strings, not {}", Describe(n)));
  }
  for (size_t i = 0; i < n.items.size(); ++i) {
    const std::string item = Item(field, i);
    positions_[item] = n.items[i]->position;
    TESSERA_ASSIGN_OR_RETURN(std::string text, Text(*n.items[i], item));
    if (non_empty && text.empty()) return Error(*n.items[i], item, "must not be empty");
    list.push_back(std::move(text));
  }
  return list;
}

absl::StatusOr<JobDocument> Decoder::Decode(const DocNode* root) {
  if (root == nullptr || root->IsNull()) {
    return DocumentError(Position{}, "", "the document is empty");
  }
  if (!root->IsMapping()) {
    return Error(*root, "",
                 fmt::format("the document must be a mapping (apiVersion, kind, metadata, spec), "
                             "not {}",
                             Describe(*root)));
  }
  bool has_api_version = false;
  bool has_kind = false;
  bool has_spec = false;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      *root, "", {"apiVersion", "kind", "metadata", "spec"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "apiVersion") {
          has_api_version = true;
          TESSERA_ASSIGN_OR_RETURN(const std::string version, Text(v, field));
          if (version != kApiVersion) {
            return Error(v, field, fmt::format("must be {}, not \"{}\"", kApiVersion, version));
          }
        } else if (key == "kind") {
          has_kind = true;
          TESSERA_ASSIGN_OR_RETURN(const std::string kind, Text(v, field));
          if (kind != kKind)
            return Error(v, field, fmt::format("must be {}, not \"{}\"", kKind, kind));
        } else if (key == "metadata") {
          return DecodeMetadata(v, field);
        } else {
          has_spec = true;
          return DecodeSpec(v, field);
        }
        return absl::OkStatus();
      },
      /*server_keys=*/{"status"}));
  if (!has_api_version)
    return Error(*root, "apiVersion", fmt::format("required ({})", kApiVersion));
  if (!has_kind) return Error(*root, "kind", fmt::format("required ({})", kKind));
  if (!has_spec) return Error(*root, "spec", "required");
  TESSERA_RETURN_IF_ERROR(Validate());
  return std::move(doc_);
}

absl::Status Decoder::DecodeMetadata(const DocNode& n, const std::string& path) {
  return ForEachEntry(
      n, path, {"name", "labels", "requestId"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "name") {
          TESSERA_ASSIGN_OR_RETURN(doc_.spec.name, Text(v, field));
        } else if (key == "labels") {
          TESSERA_ASSIGN_OR_RETURN(doc_.spec.labels, StringMap(v, field));
        } else {
          TESSERA_ASSIGN_OR_RETURN(doc_.metadata.request_id, Text(v, field));
          if (doc_.metadata.request_id.empty()) return Error(v, field, "must not be empty");
          if (doc_.metadata.request_id.size() > kMaxRequestIdLength) {
            return Error(v, field, fmt::format("must be at most {} bytes", kMaxRequestIdLength));
          }
        }
        return absl::OkStatus();
      },
      /*server_keys=*/{"id"});
}

absl::Status Decoder::DecodeSpec(const DocNode& n, const std::string& path) {
  SpecDraft draft;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, kSpecKeys, [&](std::string_view key, const DocNode& v, const std::string& field) {
        return DecodeSpecEntry(key, v, field, draft);
      }));
  return FinishSpec(n, path, draft);
}

absl::Status Decoder::DecodeSpecEntry(std::string_view key, const DocNode& v,
                                      const std::string& field, SpecDraft& draft) {
  JobSpec& spec = doc_.spec;
  if (key == "queue") {
    TESSERA_ASSIGN_OR_RETURN(spec.queue, Text(v, field));
  } else if (key == "priority") {
    draft.priority = &v;
    TESSERA_ASSIGN_OR_RETURN(const int64_t p, Int(v, field, kInt32Min, kInt32Max));
    spec.priority = static_cast<int32_t>(p);
  } else if (key == "priorityClass") {
    draft.priority_class = &v;
    TESSERA_ASSIGN_OR_RETURN(const std::string name, Text(v, field));
    const auto it = priority_classes_.find(name);
    if (it == priority_classes_.end()) {
      std::vector<std::string_view> known;
      for (const auto& [known_name, value] : priority_classes_) known.push_back(known_name);
      return Error(
          v, field,
          fmt::format("unknown priority class \"{}\" (known: {})", name, fmt::join(known, ", ")));
    }
    spec.priority = it->second;
  } else if (key == "minAvailable") {
    TESSERA_ASSIGN_OR_RETURN(const int64_t m, Int(v, field, 1, kInt32Max));
    spec.min_available = static_cast<int32_t>(m);
  } else if (key == "timeLimit") {
    TESSERA_ASSIGN_OR_RETURN(spec.time_limit, Dur(v, field));
    if (spec.time_limit->count() <= 0) return Error(v, field, "must be > 0");
  } else if (key == "duration") {
    TESSERA_ASSIGN_OR_RETURN(spec.duration, Dur(v, field));
    if (spec.duration->count() <= 0) return Error(v, field, "must be > 0");
  } else if (key == "preemptible") {
    TESSERA_ASSIGN_OR_RETURN(spec.preemptible, Bool(v, field));
  } else if (key == "minRuntime") {
    TESSERA_ASSIGN_OR_RETURN(spec.min_runtime, Dur(v, field));
  } else if (key == "terminationGracePeriod") {
    TESSERA_ASSIGN_OR_RETURN(spec.termination_grace, Dur(v, field));
  } else if (key == "restartPolicy") {
    return DecodeRestartPolicy(v, field);
  } else if (key == "nodeSelector") {
    TESSERA_ASSIGN_OR_RETURN(draft.node_selector, StringMap(v, field));
  } else if (key == "tolerations") {
    TESSERA_ASSIGN_OR_RETURN(draft.tolerations, DecodeTolerations(v, field));
  } else if (key == "clusterSelector") {
    TESSERA_ASSIGN_OR_RETURN(spec.cluster_selector, StringMap(v, field));
  } else if (key == "clusterAffinity") {
    TESSERA_ASSIGN_OR_RETURN(spec.cluster_affinity, DecodeClusterAffinity(v, field));
  } else if (key == "clusterAntiAffinity") {
    TESSERA_ASSIGN_OR_RETURN(spec.cluster_anti_affinity, DecodeClusterAffinity(v, field));
  } else {
    draft.has_tasks = true;
    if (!v.IsSequence()) {
      return Error(v, field, fmt::format("must be a list of task groups, not {}", Describe(v)));
    }
    if (v.items.empty()) return Error(v, field, "must have at least one task group");
    for (size_t i = 0; i < v.items.size(); ++i) {
      const std::string item = Item(field, i);
      positions_[item] = v.items[i]->position;
      TESSERA_ASSIGN_OR_RETURN(TaskDraft task, DecodeTask(*v.items[i], item));
      draft.tasks.push_back(std::move(task));
    }
  }
  return absl::OkStatus();
}

absl::Status Decoder::FinishSpec(const DocNode& n, const std::string& path, SpecDraft& draft) {
  if (draft.priority != nullptr && draft.priority_class != nullptr) {
    return Error(*draft.priority_class, Child(path, Key("priorityClass")),
                 fmt::format("give {} or {}, not both", Key("priority"), Key("priorityClass")));
  }
  if (!draft.has_tasks) return Error(n, Child(path, "tasks"), "required: at least one task group");
  TESSERA_RETURN_IF_ERROR(MergeJobPlacement(draft.node_selector, draft.tolerations, draft.tasks));
  for (TaskDraft& task : draft.tasks) doc_.spec.tasks.push_back(std::move(task.group));
  return absl::OkStatus();
}

absl::StatusOr<ClusterAffinityTerms> Decoder::DecodeClusterAffinity(const DocNode& n,
                                                                    const std::string& path) {
  ClusterAffinityTerms terms;
  if (n.IsSequence()) {  // JOBSPEC's short form: a list of requirements, all of them required
    TESSERA_ASSIGN_OR_RETURN(terms.required, DecodeRequirements(n, path));
    return terms;
  }
  if (!n.IsMapping() && !n.IsNull()) {
    return Error(n, path,
                 fmt::format("must be a list of requirements or a mapping (required, preferred), "
                             "not {}", Describe(n)));
  }
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, {"required", "preferred"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "required") {
          TESSERA_ASSIGN_OR_RETURN(terms.required, DecodeRequirements(v, field));
          return absl::OkStatus();
        }
        if (v.IsNull()) return absl::OkStatus();
        if (!v.IsSequence()) {
          return Error(
              v, field,
              fmt::format("must be a list of {{weight, match}} terms, not {}", Describe(v)));
        }
        for (size_t i = 0; i < v.items.size(); ++i) {
          const std::string item = Item(field, i);
          positions_[item] = v.items[i]->position;
          TESSERA_ASSIGN_OR_RETURN(PreferredLabelTerm term, DecodePreferredTerm(*v.items[i], item));
          terms.preferred.push_back(std::move(term));
        }
        return absl::OkStatus();
      }));
  return terms;
}

absl::StatusOr<std::vector<LabelRequirement>> Decoder::DecodeRequirements(const DocNode& n,
                                                                          const std::string& path) {
  std::vector<LabelRequirement> requirements;
  if (n.IsNull()) return requirements;
  if (!n.IsSequence()) {
    return Error(n, path,
                 fmt::format("must be a list of {{key, operator, values}} requirements, not {}",
                             Describe(n)));
  }
  for (size_t i = 0; i < n.items.size(); ++i) {
    const std::string item = Item(path, i);
    positions_[item] = n.items[i]->position;
    TESSERA_ASSIGN_OR_RETURN(LabelRequirement r, DecodeRequirement(*n.items[i], item));
    requirements.push_back(std::move(r));
  }
  return requirements;
}

absl::StatusOr<LabelRequirement> Decoder::DecodeRequirement(const DocNode& n,
                                                            const std::string& path) {
  if (!n.IsMapping()) {
    return Error(n, path,
                 fmt::format("must be a mapping (key, operator, values), not {}", Describe(n)));
  }
  LabelRequirement requirement;
  bool has_key = false;
  bool has_operator = false;
  const DocNode* values_node = nullptr;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, {"key", "operator", "values"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "key") {
          has_key = true;
          TESSERA_ASSIGN_OR_RETURN(requirement.key, Text(v, field));
          if (requirement.key.empty()) return Error(v, field, "must not be empty");
        } else if (key == "operator") {
          has_operator = true;
          TESSERA_ASSIGN_OR_RETURN(const std::string op,
                                   Choice(v, field, {"In", "NotIn", "Exists", "DoesNotExist"}));
          requirement.op = op == "In"       ? LabelOperator::kIn
                           : op == "NotIn"  ? LabelOperator::kNotIn
                           : op == "Exists" ? LabelOperator::kExists
                                            : LabelOperator::kDoesNotExist;
        } else {
          values_node = &v;
          TESSERA_ASSIGN_OR_RETURN(requirement.values,
                                   StringList(v, field, /*allow_one=*/false, /*non_empty=*/false));
        }
        return absl::OkStatus();
      }));
  if (!has_key) return Error(n, Child(path, "key"), "required");
  if (!has_operator) {
    return Error(n, Child(path, "operator"), "required (In, NotIn, Exists or DoesNotExist)");
  }
  const bool set_based =
      requirement.op == LabelOperator::kIn || requirement.op == LabelOperator::kNotIn;
  if (set_based && requirement.values.empty()) {
    return Error(values_node != nullptr ? *values_node : n, Child(path, "values"),
                 fmt::format("must list at least one value for operator {}",
                             LabelOperatorName(requirement.op)));
  }
  if (!set_based && !requirement.values.empty()) {
    return Error(*values_node, Child(path, "values"),
                 fmt::format("must be empty for operator {}", LabelOperatorName(requirement.op)));
  }
  return requirement;
}

absl::StatusOr<PreferredLabelTerm> Decoder::DecodePreferredTerm(const DocNode& n,
                                                                const std::string& path) {
  if (!n.IsMapping()) {
    return Error(n, path, fmt::format("must be a mapping (weight, match), not {}", Describe(n)));
  }
  PreferredLabelTerm term;
  bool has_weight = false;
  const DocNode* match_node = nullptr;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      n, path, {"weight", "match"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "weight") {
          has_weight = true;
          absl::StatusOr<int64_t> weight = Int(v, field, kInt32Min, kInt32Max);
          if (!weight.ok()) {
            return Error(v, field, fmt::format("must be an integer 1..{}", kMaxPreferredWeight));
          }
          if (*weight < 1 || *weight > kMaxPreferredWeight) {
            return Error(v, field, fmt::format("must be 1..{}", kMaxPreferredWeight));
          }
          term.weight = static_cast<int32_t>(*weight);
        } else {
          match_node = &v;
          TESSERA_ASSIGN_OR_RETURN(term.match, DecodeRequirements(v, field));
        }
        return absl::OkStatus();
      }));
  if (!has_weight) {
    return Error(n, Child(path, "weight"), fmt::format("required (1..{})", kMaxPreferredWeight));
  }
  if (term.match.empty()) {
    return Error(match_node != nullptr ? *match_node : n, Child(path, "match"),
                 "must list at least one requirement");
  }
  return term;
}

absl::Status Decoder::DecodeRestartPolicy(const DocNode& n, const std::string& path) {
  RestartPolicy& policy = doc_.spec.restart_policy;
  return ForEachEntry(
      n, path, {"onFailure", "maxRestarts"},
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (key == "onFailure") {
          TESSERA_ASSIGN_OR_RETURN(const std::string action, Choice(v, field, {"requeue", "fail"}));
          policy.on_failure = action == "requeue" ? RestartAction::kRequeue : RestartAction::kFail;
        } else {
          TESSERA_ASSIGN_OR_RETURN(const int64_t m, Int(v, field, 0, kInt32Max));
          policy.max_restarts = static_cast<int32_t>(m);
        }
        return absl::OkStatus();
      });
}

}  // namespace job_decoding

}  // namespace tessera::spec::internal

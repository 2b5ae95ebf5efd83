// The Decoder behind DecodeJobDocument and DecodeSnakeCaseJob (job_decoder.h), split by concept
// over
//   job_decoder.cc       the typed readers, the document, metadata and spec levels, cluster
//                        affinity, restart policy
//   job_task_decoder.cc  task groups, their resources and tolerations, and the merge of the
//                        job-level nodeSelector and tolerations into every group
//   job_dialect.cc       the snake_case style's one mapping, field paths in the document's
//                        style, bounds, and the final JobSpec::Validate pass
// Keys are written in camelCase throughout (one table); ForEachEntry matches them to the
// document's spelling (KeyStyle) and Key() spells them for field paths and messages.
// Not a public API; jobspec.h is. Not thread-safe; one decoder per document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/duration.h"
#include "spec/internal/document_error.h"
#include "spec/internal/document_tree.h"
#include "spec/job_document.h"
#include "spec/job_mapping.h"
#include "spec/key_style.h"
#include "spec/priority_class.h"

namespace tessera::spec::internal::job_decoding {

inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

using Keys = std::initializer_list<std::string_view>;
using KeyList = std::span<const std::string_view>;

// "path.key", or "key" at the top.
std::string Child(std::string_view path, std::string_view key);
// "path[i]".
std::string Item(std::string_view path, size_t i);
// "nothing", "a single value", "a list", "a mapping": for "must be X, not Y" messages.
std::string_view Describe(const DocNode& node);

inline bool NoExtraKeys(std::string_view) { return false; }

// The keys of a job's spec.
inline constexpr std::string_view kSpecKeys[] = {"queue",
                                                 "priority",
                                                 "priorityClass",
                                                 "minAvailable",
                                                 "timeLimit",
                                                 "duration",
                                                 "preemptible",
                                                 "minRuntime",
                                                 "terminationGracePeriod",
                                                 "restartPolicy",
                                                 "nodeSelector",
                                                 "tolerations",
                                                 "clusterSelector",
                                                 "clusterAffinity",
                                                 "clusterAntiAffinity",
                                                 "tasks"};

// A task group before the job-level selector and tolerations are merged into it.
struct TaskDraft {
  TaskGroup group;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  const DocNode* node_selector_node = nullptr;
  std::string path;
};

// How a document is written: its key style (and so its layout), the caller's own keys of the
// snake_case mapping, and the bounds on its values.
struct Dialect {
  KeyStyle style = KeyStyle::kCamelCase;
  std::vector<std::string> caller_keys;
  JobBounds bounds;
};

// The spec level's keys while they are read: what is checked once the mapping is done.
struct SpecDraft {
  const DocNode* priority = nullptr;
  const DocNode* priority_class = nullptr;
  bool has_tasks = false;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  std::vector<TaskDraft> tasks;
};

// A task group's resources while they are read.
struct ResourceDraft {
  int64_t gpu_milli = 0;
  const DocNode* gpu = nullptr;
  const DocNode* gpu_memory = nullptr;
  const DocNode* gpu_model = nullptr;
};

class Decoder {
 public:
  Decoder(const PriorityClasses& priority_classes, Dialect dialect)
      : priority_classes_(priority_classes), dialect_(std::move(dialect)) {}

  // A job document (apiVersion, kind, metadata, spec).
  absl::StatusOr<JobDocument> Decode(const DocNode* root);
  // One snake_case mapping whose field path is `path`.
  absl::StatusOr<JobSpec> DecodeMapping(const DocNode& root, const std::string& path);

 private:
  using EntryFn = absl::FunctionRef<absl::Status(std::string_view key, const DocNode& value,
                                                 const std::string& field)>;

  absl::Status Error(const DocNode& at, std::string_view field, std::string_view message) const {
    return DocumentError(at.position, field, message);
  }
  // An error of a core parser, whose message starts with "FIELD: ".
  absl::Status Wrap(const DocNode& at, std::string_view field, const absl::Status& status) const;

  // Calls `fn` for each entry of the mapping `map` (null counts as empty) in document order.
  // Keys must be in `allowed` or accepted by `extra`; keys in `server_keys` are refused as set
  // by the server; a key given twice is refused.
  // `fn` gets the key as `allowed` writes it (camelCase), or as written when `extra` took it.
  absl::Status ForEachEntry(const DocNode& map, const std::string& path, KeyList allowed,
                            EntryFn fn, Keys server_keys = {},
                            absl::FunctionRef<bool(std::string_view)> extra = NoExtraKeys);
  absl::Status ForEachEntry(const DocNode& map, const std::string& path, Keys allowed, EntryFn fn,
                            Keys server_keys = {},
                            absl::FunctionRef<bool(std::string_view)> extra = NoExtraKeys) {
    return ForEachEntry(map, path, KeyList(allowed.begin(), allowed.size()), fn, server_keys,
                        extra);
  }
  // A key of the table (camelCase) as the document spells it.
  std::string Key(std::string_view camel) const { return StyleKey(camel, dialect_.style); }
  bool IsCallerKey(std::string_view key) const;

  absl::StatusOr<std::string> Text(const DocNode& n, std::string_view field) const;
  absl::StatusOr<int64_t> Int(const DocNode& n, std::string_view field, int64_t min,
                              int64_t max) const;
  absl::StatusOr<bool> Bool(const DocNode& n, std::string_view field) const;
  absl::StatusOr<Duration> Dur(const DocNode& n, std::string_view field) const;
  absl::StatusOr<std::string> Choice(const DocNode& n, std::string_view field, Keys choices) const;
  // A mapping of non-empty names to single values.
  absl::StatusOr<Labels> StringMap(const DocNode& n, const std::string& field);
  // A list of single values; `allow_one` also takes a single value as a list of one.
  absl::StatusOr<std::vector<std::string>> StringList(const DocNode& n, const std::string& field,
                                                      bool allow_one, bool non_empty);

  absl::Status DecodeMetadata(const DocNode& n, const std::string& path);
  absl::Status DecodeSpec(const DocNode& n, const std::string& path);
  absl::Status DecodeSpecEntry(std::string_view key, const DocNode& v, const std::string& field,
                               SpecDraft& draft);
  absl::Status FinishSpec(const DocNode& n, const std::string& path, SpecDraft& draft);
  absl::Status DecodeRestartPolicy(const DocNode& n, const std::string& path);
  absl::StatusOr<std::vector<Toleration>> DecodeTolerations(const DocNode& n,
                                                            const std::string& path);
  absl::StatusOr<Toleration> DecodeToleration(const DocNode& n, const std::string& path);
  absl::StatusOr<TaskDraft> DecodeTask(const DocNode& n, const std::string& path);
  absl::StatusOr<ClusterAffinityTerms> DecodeClusterAffinity(const DocNode& n,
                                                             const std::string& path);
  absl::StatusOr<std::vector<LabelRequirement>> DecodeRequirements(const DocNode& n,
                                                                   const std::string& path);
  absl::StatusOr<LabelRequirement> DecodeRequirement(const DocNode& n, const std::string& path);
  absl::StatusOr<PreferredLabelTerm> DecodePreferredTerm(const DocNode& n, const std::string& path);
  absl::Status DecodeResources(const DocNode& n, const std::string& path, TaskRequest& request);
  absl::Status DecodeResource(std::string_view key, const DocNode& v, const std::string& field,
                              ResourceDraft& draft, TaskRequest& request);
  absl::Status FinishResources(const std::string& path, const ResourceDraft& draft,
                               TaskRequest& request) const;
  absl::Status MergeJobPlacement(const Labels& node_selector,
                                 const std::vector<Toleration>& tolerations,
                                 std::vector<TaskDraft>& drafts);
  // The document's path for a field path of JobSpec::Validate ("spec.tasks[0].gpu_models[1]").
  std::string DocumentPath(std::string_view core_path) const;
  absl::Status Validate() const;

  const PriorityClasses& priority_classes_;
  const Dialect dialect_;
  std::string root_path_ = "spec";  // where the spec's keys are: "spec", or the mapping's path
  JobDocument doc_;
  std::map<std::string, Position> positions_;  // where each decoded field's value starts
};

}  // namespace tessera::spec::internal::job_decoding

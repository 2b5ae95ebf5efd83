// The Decoder behind DecodeJobDocument (job_decoder.h), split by concept over
//   job_decoder.cc       the typed readers, the document, metadata and spec levels, cluster
//                        affinity, restart policy, and the final JobSpec::Validate pass
//   job_task_decoder.cc  task groups, their resources and tolerations, and the merge of the
//                        job-level nodeSelector and tolerations into every group
// Not a public API; jobspec.h is. Not thread-safe; one decoder per document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/duration.h"
#include "spec/internal/document_error.h"
#include "spec/internal/document_tree.h"
#include "spec/job_document.h"
#include "spec/priority_class.h"

namespace tessera::spec::internal::job_decoding {

inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

using Keys = std::initializer_list<std::string_view>;

// "path.key", or "key" at the top.
std::string Child(std::string_view path, std::string_view key);
// "path[i]".
std::string Item(std::string_view path, size_t i);
// "nothing", "a single value", "a list", "a mapping": for "must be X, not Y" messages.
std::string_view Describe(const DocNode& node);

inline bool NoExtraKeys(std::string_view) { return false; }

// A task group before the job-level selector and tolerations are merged into it.
struct TaskDraft {
  TaskGroup group;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  const DocNode* node_selector_node = nullptr;
  std::string path;
};

class Decoder {
 public:
  explicit Decoder(const PriorityClasses& priority_classes) : priority_classes_(priority_classes) {}

  absl::StatusOr<JobDocument> Decode(const DocNode* root);

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
  absl::Status ForEachEntry(const DocNode& map, const std::string& path, Keys allowed, EntryFn fn,
                            Keys server_keys = {},
                            absl::FunctionRef<bool(std::string_view)> extra = NoExtraKeys);

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
  absl::Status MergeJobPlacement(const Labels& node_selector,
                                 const std::vector<Toleration>& tolerations,
                                 std::vector<TaskDraft>& drafts);
  absl::Status Validate() const;

  const PriorityClasses& priority_classes_;
  JobDocument doc_;
  std::map<std::string, Position> positions_;  // where each decoded field's value starts
};

}  // namespace tessera::spec::internal::job_decoding

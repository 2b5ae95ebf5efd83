// The parts of the Decoder (job_decoder_impl.h) that depend on how a document is written: the
// snake_case style's one mapping, caller keys, and the field paths of JobSpec::Validate's
// errors in the document's own spelling.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "spec/internal/document_error.h"
#include "spec/internal/job_decoder.h"
#include "spec/internal/job_decoder_impl.h"
#include "tessera/common/status_macros.h"

namespace tessera::spec::internal {
namespace job_decoding {
namespace {

// The camelCase name of a field path segment of JobSpec::Validate ("gpu_models" ->
// "resources.gpuModel"): the job document's spelling.
const std::map<std::string_view, std::string_view>& CoreNames() {
  static const std::map<std::string_view, std::string_view>* const kNames =
      new std::map<std::string_view, std::string_view>{
          {"min_available", "minAvailable"},
          {"time_limit", "timeLimit"},
          {"min_runtime", "minRuntime"},
          {"termination_grace", "terminationGracePeriod"},
          {"restart_policy", "restartPolicy"},
          {"max_restarts", "maxRestarts"},
          {"cluster_selector", "clusterSelector"},
          {"cluster_affinity", "clusterAffinity"},
          {"cluster_anti_affinity", "clusterAntiAffinity"},
          {"node_selector", "nodeSelector"},
          {"gpu_memory", "gpuMemory"},
          {"gpu_models", "resources.gpuModel"},
          {"working_dir", "workingDir"},
      };
  return *kNames;
}

// The job document's path for a field path of JobSpec::Validate
// ("spec.tasks[0].gpu_models[1]" -> "spec.tasks[0].resources.gpuModel[1]").
std::string ApiPath(std::string_view core_path) {
  std::string path;
  for (std::string_view rest = core_path; !rest.empty();) {
    const size_t dot = rest.find('.');
    std::string_view segment = rest.substr(0, dot);
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    const size_t bracket = segment.find('[');
    const std::string_view name = segment.substr(0, bracket);
    const std::string_view index =
        bracket == std::string_view::npos ? std::string_view() : segment.substr(bracket);
    const auto it = CoreNames().find(name);
    if (!path.empty()) path += '.';
    path += it == CoreNames().end() ? name : it->second;
    path += index;
  }
  if (path == "spec.name" || path.starts_with("spec.labels")) {
    path.replace(0, 4, "metadata");
  }
  return path;
}

// Whether the values under a key are named by the user (labels, selectors, env), so that the
// rest of a path is not the schema's.
bool IsStringMap(std::string_view key) {
  return key == "labels" || key == "nodeSelector" || key == "clusterSelector" || key == "env";
}

}  // namespace

bool Decoder::IsCallerKey(std::string_view key) const {
  return std::find(dialect_.caller_keys.begin(), dialect_.caller_keys.end(), key) !=
         dialect_.caller_keys.end();
}

absl::StatusOr<JobSpec> Decoder::DecodeMapping(const DocNode& root, const std::string& path) {
  root_path_ = path;
  if (!root.IsMapping()) {
    return Error(root, path, fmt::format("must be a mapping (a job), not {}", Describe(root)));
  }
  static const std::vector<std::string_view>* const kKeys = [] {
    auto* keys = new std::vector<std::string_view>{"name", "labels"};
    keys->insert(keys->end(), std::begin(kSpecKeys), std::end(kSpecKeys));
    return keys;
  }();
  SpecDraft draft;
  TESSERA_RETURN_IF_ERROR(ForEachEntry(
      root, path, *kKeys,
      [&](std::string_view key, const DocNode& v, const std::string& field) -> absl::Status {
        if (IsCallerKey(key)) return absl::OkStatus();
        if (key == "name") {
          TESSERA_ASSIGN_OR_RETURN(doc_.spec.name, Text(v, field));
          return absl::OkStatus();
        }
        if (key == "labels") {
          TESSERA_ASSIGN_OR_RETURN(doc_.spec.labels, StringMap(v, field));
          return absl::OkStatus();
        }
        return DecodeSpecEntry(key, v, field, draft);
      },
      /*server_keys=*/{}, [&](std::string_view key) { return IsCallerKey(key); }));
  TESSERA_RETURN_IF_ERROR(FinishSpec(root, path, draft));
  TESSERA_RETURN_IF_ERROR(Validate());
  return std::move(doc_.spec);
}

std::string Decoder::DocumentPath(std::string_view core_path) const {
  const std::string api = ApiPath(core_path);
  if (dialect_.style == KeyStyle::kCamelCase) return api;
  // "spec.tasks[0].resources.gpuMemory" -> "jobs[2].tasks[0].gpu_memory": one mapping for
  // metadata and spec, resources on the task group, keys in snake_case.
  std::string path = root_path_;
  bool schema = true;  // false below a map whose keys the user names
  std::string_view rest = std::string_view(api).substr(std::min(api.find('.'), api.size()));
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '.'
    const size_t dot = rest.find('.');
    const std::string_view segment = rest.substr(0, dot);
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot);
    const size_t bracket = std::min(segment.find('['), segment.size());
    const std::string_view name = segment.substr(0, bracket);
    if (schema && name == "resources") continue;
    path = Child(path,
                 schema ? Key(name) + std::string(segment.substr(bracket)) : std::string(segment));
    schema = schema && !IsStringMap(name);
  }
  return path;
}

absl::Status Decoder::Validate() const {
  // The one mapping's own path leads the core's paths, in messages too ("also jobs[2].tasks[0]").
  const bool mapping = dialect_.style == KeyStyle::kSnakeCase && !root_path_.empty();
  const std::string core_root = mapping ? root_path_ : "spec";
  absl::Status status = doc_.spec.Validate(core_root);
  if (status.ok()) return status;
  const std::string full(status.message());
  const std::string_view message = full;
  const size_t colon = message.find(": ");
  if (colon == std::string_view::npos || !message.starts_with(core_root)) {
    return DocumentError(Position{}, "", message);
  }
  const std::string field = DocumentPath(
      "spec" + std::string(message.substr(core_root.size(), colon - core_root.size())));
  // The position of the field, or of the nearest enclosing field that was in the document.
  Position position;
  for (std::string at = field; !at.empty();) {
    if (const auto it = positions_.find(at); it != positions_.end()) {
      position = it->second;
      break;
    }
    const size_t cut = at.find_last_of(".[");
    at.resize(cut == std::string::npos ? 0 : cut);
  }
  return DocumentError(position, field, message.substr(colon + 2));
}

}  // namespace job_decoding

absl::StatusOr<JobDocument> DecodeJobDocument(const DocumentTree& tree,
                                              const PriorityClasses& priority_classes) {
  return job_decoding::Decoder(priority_classes, job_decoding::Dialect{}).Decode(tree.root());
}

absl::StatusOr<JobSpec> DecodeJobMapping(const DocumentTree& tree,
                                         const JobMappingOptions& options) {
  const PriorityClasses& classes =
      options.priority_classes != nullptr ? *options.priority_classes : BuiltinPriorityClasses();
  job_decoding::Dialect dialect{
      .style = KeyStyle::kSnakeCase, .caller_keys = options.caller_keys, .bounds = options.bounds};
  return job_decoding::Decoder(classes, std::move(dialect))
      .DecodeMapping(*tree.root(), options.path);
}

}  // namespace tessera::spec::internal

#include "sim/scenario/scenario_parser.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "core/cluster_name.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sim/scenario/expectation_parser.h"
#include "sim/scenario/name_range.h"
#include "sim/scenario/scenario_index.h"
#include "sim/scenario/scenario_parser_impl.h"
#include "sim/scenario/yaml_reader.h"
#include "spec/queue_document.h"
#include "tessera/common/status_macros.h"
#include "yaml-cpp/depthguard.h"

namespace tessera::sim {
namespace {

constexpr off_t kMaxFileBytes = off_t{16} << 20;  // 16 MiB
constexpr int kMaxNesting = 64;                   // mappings and lists inside one another
constexpr int64_t kMaxYamlNodes = 4'000'000;      // counting each use of an alias

// The text of a regular file of at most kMaxFileBytes.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) return absl::InvalidArgumentError(Cat(path, ": is a directory"));
  if (!S_ISREG(info.st_mode)) return absl::InvalidArgumentError(Cat(path, ": not a regular file"));
  if (info.st_size > kMaxFileBytes) {
    return absl::InvalidArgumentError(Cat(path, ": larger than 16 MiB"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An error when a node is nested deeper than kMaxNesting, or when the document has more than
// kMaxYamlNodes nodes (aliases expand: "billion laughs"). Walks at most that deep and that far.
absl::Status CheckShape(std::string_view file, const YAML::Node& n, int depth, int64_t& budget) {
  if (--budget < 0) {
    return absl::InvalidArgumentError(Cat(file, ":", YamlReader::Line(n), ": more than ",
                                          kMaxYamlNodes, " values (counting each alias use)"));
  }
  if (!n.IsMap() && !n.IsSequence()) return absl::OkStatus();
  if (depth > kMaxNesting) {
    return absl::InvalidArgumentError(Cat(file, ":", YamlReader::Line(n),
                                          ": nesting too deep (at most ", kMaxNesting, " levels)"));
  }
  for (const auto& entry : n) {
    const YAML::Node child = n.IsMap() ? entry.second : YAML::Node(entry);
    TESSERA_RETURN_IF_ERROR(CheckShape(file, child, depth + 1, budget));
  }
  return absl::OkStatus();
}

std::string ToBlockYaml(const YAML::Node& node) {
  YAML::Emitter emitter;
  emitter << node;
  return emitter.c_str();
}

}  // namespace

namespace scenario_parsing {

absl::StatusOr<Scenario> Parser::Parse(const YAML::Node& root) {
  if (root.IsNull()) return r_.ErrorAtLine(1, "scenario", "the file is empty");
  if (!root.IsMap()) {
    return r_.Error(root, "scenario", "must be a mapping of sections (nodes, jobs, expect, ...)");
  }
  std::map<std::string, YAML::Node, std::less<>> sections;
  TESSERA_RETURN_IF_ERROR(
      r_.ForEach(root, "",
                 {"name", "description", "config", "clusters", "nodes", "queues", "jobs", "events",
                  "expect", "until"},
                 [&](std::string_view key, const YAML::Node& value, const std::string&) {
                   sections.emplace(std::string(key), value);
                   return absl::OkStatus();
                 }));
  auto section = [&](std::string_view key) -> const YAML::Node* {
    auto it = sections.find(key);
    return it == sections.end() ? nullptr : &it->second;
  };

  scenario_.name = std::filesystem::path(scenario_.file).stem().string();
  if (const YAML::Node* n = section("name")) {
    TESSERA_ASSIGN_OR_RETURN(scenario_.name, r_.Name(*n, "name"));
  }
  if (const YAML::Node* n = section("description")) {
    TESSERA_ASSIGN_OR_RETURN(scenario_.description, r_.String(*n, "description"));
  }
  TESSERA_ASSIGN_OR_RETURN(scenario_.config.profile, BuiltinProfile("default"));
  if (const YAML::Node* n = section("config")) TESSERA_RETURN_IF_ERROR(ParseConfig(*n));
  if (const YAML::Node* n = section("clusters")) {
    TESSERA_RETURN_IF_ERROR(ParseClusters(*n));
  } else {
    scenario_.clusters.push_back(ScenarioCluster{"default", {}, 0});
    index_.clusters.insert("default");
  }
  const YAML::Node* nodes = section("nodes");
  if (nodes == nullptr) return r_.ErrorAtLine(1, "nodes", "required: a scenario needs nodes");
  TESSERA_RETURN_IF_ERROR(r_.ForEachItem(
      *nodes, "nodes", [&](const YAML::Node& n, const std::string& p) { return ParseNode(n, p); }));
  if (scenario_.nodes.empty()) return r_.Error(*nodes, "nodes", "must list at least one node");
  if (const YAML::Node* n = section("queues")) {
    TESSERA_RETURN_IF_ERROR(ParseQueues(*n));
  } else {
    scenario_.queues.push_back(ScenarioQueue{.spec = QueueSpec{.name = "default"}, .leaf = true});
    index_.queues.emplace("default", true);
  }
  if (const YAML::Node* n = section("jobs")) {
    TESSERA_RETURN_IF_ERROR(r_.ForEachItem(
        *n, "jobs", [&](const YAML::Node& j, const std::string& p) { return ParseJob(j, p); }));
  }
  if (gpu_memory_user_ && !nodes_without_gpu_memory_.empty()) {
    const auto& [field, line] = nodes_without_gpu_memory_.front();
    return r_.ErrorAtLine(line, field,
                          Cat("required on nodes with GPUs when a task sets gpu_memory (",
                              gpu_memory_user_->first, " at line ", gpu_memory_user_->second, ")"));
  }
  if (const YAML::Node* n = section("events")) {
    TESSERA_RETURN_IF_ERROR(r_.ForEachItem(
        *n, "events", [&](const YAML::Node& e, const std::string& p) { return ParseEvent(e, p); }));
  }
  if (const YAML::Node* n = section("until")) {
    TESSERA_ASSIGN_OR_RETURN(scenario_.until, r_.Dur(*n, "until"));
  }
  if (const YAML::Node* n = section("expect")) {
    ExpectationParser expectations(r_, index_);
    TESSERA_ASSIGN_OR_RETURN(scenario_.expectations, expectations.ParseAll(*n));
  }
  return std::move(scenario_);
}

absl::Status Parser::ParseConfig(const YAML::Node& n) {
  SchedulingPolicy& policy = scenario_.config.policy;
  return r_.ForEach(
      n, "config",
      {"profile", "backfill", "backfill_depth", "preemption", "preemption_rate", "on_preemption",
       "fair_share", "fair_share_half_life", "priority_aging", "gang_timeout", "seed",
       "requeue_backoff"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "profile") return ParseProfileValue(v, field);
        if (key == "backfill") {
          TESSERA_ASSIGN_OR_RETURN(std::string mode,
                                   r_.Choice(v, field, {"none", "easy", "conservative"}));
          policy.backfill = mode == "none"   ? BackfillMode::kNone
                            : mode == "easy" ? BackfillMode::kEasy
                                             : BackfillMode::kConservative;
        } else if (key == "backfill_depth") {
          TESSERA_ASSIGN_OR_RETURN(int64_t depth, r_.Int(v, field, 1, kMaxBackfillDepth));
          policy.backfill_depth = static_cast<int32_t>(depth);
        } else if (key == "preemption") {
          TESSERA_ASSIGN_OR_RETURN(policy.preemption, r_.Bool(v, field));
        } else if (key == "preemption_rate") {
          return ParsePreemptionRate(v, field);
        } else if (key == "on_preemption") {
          TESSERA_ASSIGN_OR_RETURN(std::string action, r_.Choice(v, field, {"requeue", "cancel"}));
          policy.on_preemption =
              action == "requeue" ? PreemptedAction::kRequeue : PreemptedAction::kCancel;
        } else if (key == "fair_share") {
          TESSERA_ASSIGN_OR_RETURN(std::string mode, r_.Choice(v, field, {"none", "drf"}));
          policy.fair_share = mode == "none" ? FairShareMode::kNone : FairShareMode::kDrf;
        } else if (key == "fair_share_half_life") {
          TESSERA_ASSIGN_OR_RETURN(policy.fair_share_half_life, r_.Dur(v, field));
        } else if (key == "priority_aging") {
          TESSERA_ASSIGN_OR_RETURN(policy.priority_aging, r_.Dur(v, field));
        } else if (key == "gang_timeout") {
          TESSERA_ASSIGN_OR_RETURN(policy.gang_timeout, r_.Dur(v, field));
        } else if (key == "seed") {
          TESSERA_ASSIGN_OR_RETURN(scenario_.config.seed, r_.Uint(v, field));
        } else {
          TESSERA_ASSIGN_OR_RETURN(scenario_.config.requeue_backoff, r_.Dur(v, field));
        }
        return absl::OkStatus();
      });
}

absl::Status Parser::ParsePreemptionRate(const YAML::Node& n, const std::string& path) {
  SchedulingPolicy& policy = scenario_.config.policy;
  bool has_max = false;
  bool has_per = false;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"max", "per"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "max") {
          has_max = true;
          TESSERA_ASSIGN_OR_RETURN(int64_t max, r_.Int(v, field, 1, INT32_MAX));
          policy.preemption_rate_max = static_cast<int32_t>(max);
          return absl::OkStatus();
        }
        has_per = true;
        TESSERA_ASSIGN_OR_RETURN(policy.preemption_rate_period, r_.Dur(v, field));
        if (policy.preemption_rate_period <= Duration::zero()) {
          return r_.Error(v, field, "must be > 0");
        }
        return absl::OkStatus();
      }));
  if (!has_max) return r_.Error(n, Field(path, "max"), "required");
  if (!has_per) return r_.Error(n, Field(path, "per"), "required");
  return absl::OkStatus();
}

absl::Status Parser::ParseProfileValue(const YAML::Node& n, const std::string& field) {
  scenario_.config.profile_line = YamlReader::Line(n);
  if (n.IsMap()) {
    absl::StatusOr<Profile> profile = ParseProfile(ToBlockYaml(n), field);
    if (!profile.ok()) return r_.Wrap(n, profile.status());
    scenario_.config.profile = *std::move(profile);
    return absl::OkStatus();
  }
  TESSERA_ASSIGN_OR_RETURN(std::string name, r_.Name(n, field));
  if (absl::StatusOr<Profile> builtin = BuiltinProfile(name); builtin.ok()) {
    scenario_.config.profile = *std::move(builtin);
    return absl::OkStatus();
  }
  if (!absl::StrContains(name, '/') && !absl::EndsWith(name, ".yaml") &&
      !absl::EndsWith(name, ".yml")) {
    return r_.Error(n, field,
                    Cat("unknown profile '", name,
                        "' (built-in: ", fmt::format("{}", fmt::join(BuiltinProfileNames(), ", ")),
                        "; or a file path, or an inline mapping)"));
  }
  if (!options_.allow_files) return r_.Error(n, field, "profile files are not allowed here");
  const std::filesystem::path path =
      (std::filesystem::path(options_.base_dir) / name).lexically_normal();
  absl::StatusOr<std::string> text = ReadFile(path.string());
  if (!text.ok()) return r_.Error(n, field, std::string(text.status().message()));
  absl::StatusOr<Profile> profile = ParseProfile(*text, path.string());
  if (!profile.ok()) return r_.Error(n, field, std::string(profile.status().message()));
  scenario_.config.profile = *std::move(profile);
  return absl::OkStatus();
}

absl::Status Parser::ParseQueues(const YAML::Node& n) {
  // The queue documents' decoder in the scenario's snake_case, with quotas bounded so that a
  // queue covers at most kMaxNodes nodes of the largest size. Its checks cover the queue
  // tree's (sched/queue/queue_tree.h): names, weights, resources, and parents by nesting.
  const int64_t scale = static_cast<int64_t>(kMaxNodes);
  const spec::QueueTreeOptions options{.style = spec::KeyStyle::kSnakeCase,
                                       .bounds = {.max_cpu_millis = kMaxCpuMillis * scale,
                                                  .max_bytes = kMaxBytes * scale,
                                                  .max_milli_gpu = kMaxMilliGpu * scale},
                                       .max_weight = kMaxQueueWeight};
  absl::StatusOr<spec::DecodedQueueTree> tree = spec::DecodeQueueTree(n, "queues", options);
  if (!tree.ok()) {
    const int line = spec::QueueErrorLine(tree.status()).value_or(YamlReader::Line(n));
    return absl::InvalidArgumentError(
        Cat(r_.file(), ":", line, ": ", std::string(tree.status().message())));
  }
  const spec::QueueLeafIndex leaves = spec::LeafIndex(tree->queues);
  for (size_t i = 0; i < tree->queues.size(); ++i) {
    QueueSpec& queue = tree->queues[i];
    const bool leaf = leaves.at(queue.name);
    index_.queues.emplace(queue.name, leaf);
    scenario_.queues.push_back(
        ScenarioQueue{.spec = std::move(queue), .leaf = leaf, .line = tree->lines[i]});
  }
  return absl::OkStatus();
}

}  // namespace scenario_parsing

std::string_view ToString(EventAction action) {
  switch (action) {
    case EventAction::kDown:
      return "down";
    case EventAction::kUp:
      return "up";
    case EventAction::kCordon:
      return "cordon";
    case EventAction::kUncordon:
      return "uncordon";
    case EventAction::kDrain:
      return "drain";
    case EventAction::kRemove:
      return "remove";
    case EventAction::kGpuUnhealthy:
      return "gpu_unhealthy";
    case EventAction::kGpuHealthy:
      return "gpu_healthy";
    case EventAction::kTaint:
      return "taint";
    case EventAction::kUntaint:
      return "untaint";
    case EventAction::kCancel:
      return "cancel";
  }
  return "?";
}

std::string_view ToString(Invariant invariant) {
  switch (invariant) {
    case Invariant::kNoOvercommit:
      return "no_overcommit";
    case Invariant::kGangAtomic:
      return "gang_atomic";
    case Invariant::kQuotaRespected:
      return "quota_respected";
    case Invariant::kPendingHasReason:
      return "pending_has_reason";
  }
  return "?";
}

absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view file,
                                       const ParseOptions& options) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    return absl::InvalidArgumentError(Cat(file, ":", e.mark.is_null() ? 0 : e.mark.line + 1,
                                          ": nesting too deep (at most ", kMaxNesting, " levels)"));
  } catch (const YAML::Exception& e) {
    // The usual cause: a brace range left unquoted inside a flow mapping ({name: gpu-{0..3}}).
    const std::string_view hint =
        e.msg.find("flow") != std::string::npos
            ? " (inside {...} or [...], quote values with braces: name: \"gpu-{0..3}\")"
            : "";
    return absl::InvalidArgumentError(
        Cat(file, ":", e.mark.is_null() ? 0 : e.mark.line + 1, ": ", e.msg, hint));
  }
  int64_t budget = kMaxYamlNodes;
  TESSERA_RETURN_IF_ERROR(CheckShape(file, root, 1, budget));
  try {
    scenario_parsing::Parser parser(file, options);
    return parser.Parse(root);
  } catch (const std::exception& e) {
    // yaml-cpp throws on a few malformed-node paths that the checks above do not foresee.
    return absl::InvalidArgumentError(Cat(file, ":0: ", e.what()));
  }
}

absl::StatusOr<Scenario> ParseScenarioFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return absl::InvalidArgumentError(std::string(text.status().message()));
  ParseOptions options;
  options.base_dir = std::filesystem::path(path).parent_path().string();
  if (options.base_dir.empty()) options.base_dir = ".";
  return ParseScenario(*text, path, options);
}

}  // namespace tessera::sim

#include "sim/scenario/scenario_parser.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "core/cluster_name.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sched/queue/queue_tree.h"
#include "sim/scenario/expectation_parser.h"
#include "sim/scenario/name_range.h"
#include "sim/scenario/scenario_index.h"
#include "sim/scenario/yaml_reader.h"
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

// A DNS-1123 subdomain, the rule for node names: at most 253 characters, dot-separated labels
// of 1 to 63 lowercase letters, digits and '-', each starting and ending with a letter or digit.
bool IsNodeName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    const std::string_view label = name.substr(start, dot - start);
    const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (label.empty() || label.size() > 63 || !alnum(label.front()) || !alnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!alnum(c) && c != '-') return false;
    }
    start = dot + 1;
  }
  return true;
}

std::string ToBlockYaml(const YAML::Node& node) {
  YAML::Emitter emitter;
  emitter << node;
  return emitter.c_str();
}

// Where a queue was given: its path ("queues[0].children[1]"), its line, and the lines of its
// keys ("weight", "guaranteed.gpu"), so that the queue tree's errors can name the file's line.
struct QueueSource {
  std::string path;
  int line = 0;
  std::map<std::string, int, std::less<>> key_lines;
};

// The most backfill reservations a scenario may ask for.
constexpr int64_t kMaxBackfillDepth = 1'000'000;

class Parser {
 public:
  Parser(std::string_view file, const ParseOptions& options)
      : r_(std::string(file)), options_(options) {
    scenario_.file = std::string(file);
  }

  absl::StatusOr<Scenario> Parse(const YAML::Node& root);

 private:
  absl::Status ParseConfig(const YAML::Node& n);
  absl::Status ParsePreemptionRate(const YAML::Node& n, const std::string& path);
  absl::Status ParseProfileValue(const YAML::Node& n, const std::string& field);
  absl::Status ParseClusters(const YAML::Node& n);
  absl::Status ParseNode(const YAML::Node& n, const std::string& path);
  absl::Status ParseGpus(const YAML::Node& n, const std::string& path, Node& node);
  absl::StatusOr<Taint> ParseTaint(const YAML::Node& n, const std::string& path,
                                   bool effect_required, bool* has_effect);
  absl::Status AddNodes(ScenarioNode proto, int name_line, const std::string& path);
  absl::Status ParseQueue(const YAML::Node& n, const std::string& path, const std::string& parent);
  absl::Status ParseQuota(const YAML::Node& n, const std::string& field, QueueSource& source,
                          ResourceList& quota);
  // Builds the QueueTree of the parsed queues, so that its checks apply; its errors name the
  // queue's field in the file.
  absl::Status CheckQueueTree() const;
  absl::Status ParseJob(const YAML::Node& n, const std::string& path);
  absl::Status ParseTaskGroup(const YAML::Node& n, const std::string& path, TaskGroup& group);
  absl::StatusOr<Toleration> ParseToleration(const YAML::Node& n, const std::string& path);
  absl::StatusOr<ClusterAffinityTerms> ParseClusterAffinity(const YAML::Node& n,
                                                            const std::string& path);
  absl::StatusOr<std::vector<LabelRequirement>> ParseRequirements(const YAML::Node& n,
                                                                  const std::string& path);
  absl::Status ParseEvent(const YAML::Node& n, const std::string& path);
  absl::Status CheckEventTarget(const ScenarioEvent& event, const YAML::Node& n,
                                const std::string& path, bool has_gpu, bool has_taint);

  YamlReader r_;
  ParseOptions options_;
  Scenario scenario_;
  ScenarioIndex index_;
  int64_t total_tasks_ = 0;
  std::vector<QueueSource> queue_sources_;  // one per scenario_.queues entry
  // `gpus.memory` is required on every node with GPUs once a task asks for gpu_memory.
  std::vector<std::pair<std::string, int>> nodes_without_gpu_memory_;  // field, line
  std::optional<std::pair<std::string, int>> gpu_memory_user_;         // the first such task
};

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
    TESSERA_RETURN_IF_ERROR(r_.ForEachItem(
        *n, "queues",
        [&](const YAML::Node& q, const std::string& p) { return ParseQueue(q, p, ""); }));
    if (scenario_.queues.empty()) return r_.Error(*n, "queues", "must list at least one queue");
    TESSERA_RETURN_IF_ERROR(CheckQueueTree());
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

absl::Status Parser::ParseClusters(const YAML::Node& n) {
  TESSERA_RETURN_IF_ERROR(
      r_.ForEachItem(n, "clusters", [&](const YAML::Node& c, const std::string& path) {
        ScenarioCluster cluster;
        cluster.line = YamlReader::Line(c);
        bool named = false;
        TESSERA_RETURN_IF_ERROR(r_.ForEach(
            c, path, {"name", "labels"},
            [&](std::string_view key, const YAML::Node& v,
                const std::string& field) -> absl::Status {
              if (key == "name") {
                TESSERA_ASSIGN_OR_RETURN(cluster.name, r_.Name(v, field));
                named = true;
                if (!index_.clusters.insert(cluster.name).second) {
                  return r_.Error(v, field, Cat("cluster '", cluster.name, "' given twice"));
                }
                return absl::OkStatus();
              }
              TESSERA_ASSIGN_OR_RETURN(cluster.labels, r_.LabelMap(v, field));
              if (cluster.labels.contains(kClusterLabel)) {
                return r_.Error(v, Field(field, kClusterLabel),
                                "set by the runner to the cluster's name; do not give it");
              }
              return absl::OkStatus();
            }));
        if (!named) return r_.Error(c, Field(path, "name"), "required");
        scenario_.clusters.push_back(std::move(cluster));
        return absl::OkStatus();
      }));
  if (scenario_.clusters.empty()) return r_.Error(n, "clusters", "must list at least one cluster");
  return absl::OkStatus();
}

absl::Status Parser::ParseNode(const YAML::Node& n, const std::string& path) {
  ScenarioNode proto;
  proto.line = YamlReader::Line(n);
  proto.node.pool = "default";
  int name_line = 0;
  int cluster_line = proto.line;
  bool has_cluster = false;
  int64_t cpu = 0;
  int64_t memory = 0;
  int gpus_line = 0;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"name", "cluster", "pool", "cpu", "memory", "gpus", "labels", "taints", "state"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "name") {
          name_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(proto.node.name, r_.Name(v, field));
        } else if (key == "cluster") {
          cluster_line = YamlReader::Line(v);
          has_cluster = true;
          TESSERA_ASSIGN_OR_RETURN(proto.node.cluster, r_.Name(v, field));
          if (!index_.clusters.contains(proto.node.cluster)) {
            return r_.Error(v, field, Cat("cluster '", proto.node.cluster, "' does not exist"));
          }
        } else if (key == "pool") {
          TESSERA_ASSIGN_OR_RETURN(proto.node.pool, r_.Name(v, field));
        } else if (key == "cpu") {
          TESSERA_ASSIGN_OR_RETURN(cpu, r_.CpuMillis(v, field));
        } else if (key == "memory") {
          TESSERA_ASSIGN_OR_RETURN(memory, r_.Bytes(v, field));
        } else if (key == "gpus") {
          gpus_line = YamlReader::Line(v);
          return ParseGpus(v, field, proto.node);
        } else if (key == "labels") {
          TESSERA_ASSIGN_OR_RETURN(proto.node.labels, r_.LabelMap(v, field));
          if (proto.node.labels.contains(kClusterLabel)) {
            return r_.Error(v, Field(field, kClusterLabel),
                            "set by the runner to the node's cluster; do not give it");
          }
        } else if (key == "taints") {
          return r_.ForEachItem(v, field, [&](const YAML::Node& t, const std::string& tp) {
            bool has_effect = true;
            TESSERA_ASSIGN_OR_RETURN(Taint taint, ParseTaint(t, tp, true, &has_effect));
            proto.node.taints.push_back(std::move(taint));
            return absl::OkStatus();
          });
        } else {
          TESSERA_ASSIGN_OR_RETURN(std::string state,
                                   r_.Choice(v, field, {"up", "down", "cordoned"}));
          proto.state = state == "up"     ? InitialNodeState::kUp
                        : state == "down" ? InitialNodeState::kDown
                                          : InitialNodeState::kCordoned;
        }
        return absl::OkStatus();
      }));
  if (name_line == 0) return r_.Error(n, Field(path, "name"), "required");
  if (!has_cluster) {
    if (scenario_.clusters.size() > 1) {
      return r_.Error(n, Field(path, "cluster"), "required when several clusters are listed");
    }
    proto.node.cluster = scenario_.clusters.front().name;
  }
  proto.node.capacity.cpu = cpu;
  proto.node.capacity.memory = memory;
  proto.node.allocatable = proto.node.capacity;
  // Nodes carry their cluster's labels, so a job's cluster_selector is a node selector.
  for (const ScenarioCluster& c : scenario_.clusters) {
    if (c.name != proto.node.cluster) continue;
    Labels inherited = c.labels;
    inherited[std::string(kClusterLabel)] = c.name;
    for (const auto& [key, value] : inherited) {
      auto [it, added] = proto.node.labels.emplace(key, value);
      if (!added && it->second != value) {
        return r_.ErrorAtLine(cluster_line, Field(Field(path, "labels"), key),
                              Cat("conflicts with cluster '", c.name, "' label ", key, "=", value));
      }
    }
  }
  if (!proto.node.gpus.empty() && proto.node.gpus.front().memory == 0) {
    nodes_without_gpu_memory_.push_back({Field(Field(path, "gpus"), "memory"), gpus_line});
  }
  return AddNodes(std::move(proto), name_line, path);
}

absl::Status Parser::AddNodes(ScenarioNode proto, int name_line, const std::string& path) {
  const std::string field = Field(path, "name");
  absl::StatusOr<std::vector<std::string>> names = ExpandNameRanges(proto.node.name);
  if (!names.ok()) return r_.ErrorAtLine(name_line, field, std::string(names.status().message()));
  for (std::string& name : *names) {
    if (!IsNodeName(name)) {
      return r_.ErrorAtLine(
          name_line, field,
          Cat("'", name,
              "' is not a valid node name (a DNS-1123 subdomain: lowercase letters, digits, '-' "
              "and '.', labels of at most 63 characters starting and ending with a letter or "
              "digit, at most 253 characters)"));
    }
    if (index_.nodes.contains(name)) {
      return r_.ErrorAtLine(name_line, field, Cat("node '", name, "' given twice"));
    }
    if (scenario_.nodes.size() >= kMaxNodes) {
      return r_.ErrorAtLine(name_line, field, Cat("a scenario has at most ", kMaxNodes, " nodes"));
    }
    ScenarioNode node = proto;
    node.node.name = std::move(name);
    index_.nodes.emplace(node.node.name, static_cast<int32_t>(node.node.gpus.size()));
    index_.pools.insert(node.node.pool);
    scenario_.nodes.push_back(std::move(node));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseGpus(const YAML::Node& n, const std::string& path, Node& node) {
  std::string model;
  int64_t count = 0;
  int64_t memory = 0;
  bool has_count = false;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"model", "count", "memory"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "model") {
          TESSERA_ASSIGN_OR_RETURN(model, r_.Name(v, field));
        } else if (key == "count") {
          has_count = true;
          TESSERA_ASSIGN_OR_RETURN(count, r_.Int(v, field, 0, 1024));
        } else {
          TESSERA_ASSIGN_OR_RETURN(memory, r_.Bytes(v, field));
        }
        return absl::OkStatus();
      }));
  if (!has_count) return r_.Error(n, Field(path, "count"), "required");
  if (count * memory > kMaxNodeGpuMemory) {
    return r_.Error(n, Field(path, "memory"),
                    "count × memory must be at most 64 TiB of GPU memory per node");
  }
  for (int32_t i = 0; i < count; ++i) {
    node.gpus.push_back(GpuDevice{.index = i, .model = model, .memory = memory});
  }
  node.capacity.gpu = count * kMilliGpuPerDevice;
  node.capacity.gpu_memory = count * memory;
  return absl::OkStatus();
}

absl::StatusOr<TaintEffect> ParseEffect(const YamlReader& r, const YAML::Node& v,
                                        const std::string& field) {
  TESSERA_ASSIGN_OR_RETURN(std::string effect,
                           r.Choice(v, field, {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
  return effect == "NoSchedule"         ? TaintEffect::kNoSchedule
         : effect == "PreferNoSchedule" ? TaintEffect::kPreferNoSchedule
                                        : TaintEffect::kNoExecute;
}

absl::StatusOr<Taint> Parser::ParseTaint(const YAML::Node& n, const std::string& path,
                                         bool effect_required, bool* has_effect) {
  Taint taint;
  bool has_key = false;
  *has_effect = false;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"key", "value", "effect"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "key") {
          has_key = true;
          TESSERA_ASSIGN_OR_RETURN(taint.key, r_.Name(v, field));
        } else if (key == "value") {
          TESSERA_ASSIGN_OR_RETURN(taint.value, r_.String(v, field));
        } else {
          *has_effect = true;
          TESSERA_ASSIGN_OR_RETURN(taint.effect, ParseEffect(r_, v, field));
        }
        return absl::OkStatus();
      }));
  if (!has_key) return r_.Error(n, Field(path, "key"), "required");
  if (effect_required && !*has_effect) return r_.Error(n, Field(path, "effect"), "required");
  return taint;
}

absl::Status Parser::ParseQueue(const YAML::Node& n, const std::string& path,
                                const std::string& parent) {
  ScenarioQueue queue;
  queue.spec.parent = parent;
  queue.line = YamlReader::Line(n);
  QueueSource source{.path = path, .line = queue.line};
  std::optional<YAML::Node> children;
  bool named = false;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path,
      {"name", "children", "guaranteed", "borrowing_limit", "lending_limit", "weight", "priority",
       "ordering"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        source.key_lines.emplace(std::string(key), YamlReader::Line(v));
        if (key == "name") {
          named = true;
          TESSERA_ASSIGN_OR_RETURN(queue.spec.name, r_.Name(v, field));
          if (index_.queues.contains(queue.spec.name)) {
            return r_.Error(v, field, Cat("queue '", queue.spec.name, "' given twice"));
          }
        } else if (key == "children") {
          if (!v.IsSequence()) return r_.Error(v, field, "must be a list");
          children.emplace(v);
        } else if (key == "guaranteed") {
          return ParseQuota(v, field, source, queue.spec.guaranteed);
        } else if (key == "borrowing_limit") {
          return ParseQuota(v, field, source, queue.spec.borrowing_limit);
        } else if (key == "lending_limit") {
          return ParseQuota(v, field, source, queue.spec.lending_limit);
        } else if (key == "weight") {
          // ">= 1" is the queue tree's check (CheckQueueTree).
          TESSERA_ASSIGN_OR_RETURN(int64_t weight, r_.Int(v, field, INT32_MIN, 1000000));
          queue.spec.weight = static_cast<int32_t>(weight);
        } else if (key == "priority") {
          TESSERA_ASSIGN_OR_RETURN(int64_t priority, r_.Int(v, field, INT32_MIN, INT32_MAX));
          queue.spec.priority = static_cast<int32_t>(priority);
        } else {
          TESSERA_ASSIGN_OR_RETURN(std::string ordering,
                                   r_.Choice(v, field, {"strict_fifo", "best_effort_fifo"}));
          queue.spec.ordering = ordering == "strict_fifo" ? QueueOrdering::kStrictFifo
                                                          : QueueOrdering::kBestEffortFifo;
        }
        return absl::OkStatus();
      }));
  if (!named) return r_.Error(n, Field(path, "name"), "required");
  queue.leaf = !children.has_value() || children->size() == 0;
  index_.queues.emplace(queue.spec.name, queue.leaf);
  scenario_.queues.push_back(queue);
  queue_sources_.push_back(std::move(source));
  if (!children.has_value()) return absl::OkStatus();
  return r_.ForEachItem(
      *children, Field(path, "children"),
      [&](const YAML::Node& c, const std::string& p) { return ParseQueue(c, p, queue.spec.name); });
}

absl::Status Parser::ParseQuota(const YAML::Node& n, const std::string& field, QueueSource& source,
                                ResourceList& quota) {
  if (!n.IsMap()) {
    return r_.Error(n, field, "must be a mapping of resources (cpu, memory, gpu, gpu:<MODEL>)");
  }
  const std::string_view list = std::string_view(field).substr(field.rfind('.') + 1);
  for (const auto& entry : n) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) return r_.Error(key, field, "keys must be plain names");
    const std::string& name = key.Scalar();
    const std::string f = Field(field, name);
    absl::StatusOr<int64_t> value;
    const int64_t scale = static_cast<int64_t>(kMaxNodes);
    if (name == "cpu") {
      value = r_.CpuMillis(entry.second, f, scale);
    } else if (name == "memory") {
      value = r_.Bytes(entry.second, f, scale);
    } else if (name == "gpu" || (name.starts_with("gpu:") && name.size() > 4)) {
      value = r_.MilliGpu(entry.second, f, scale);
    } else {
      return r_.Error(key, f, "unknown resource (expected cpu, memory, gpu or gpu:<MODEL>)");
    }
    if (!value.ok()) return value.status();
    if (!quota.emplace(name, *value).second) return r_.Error(key, f, "given twice");
    source.key_lines.emplace(Cat(list, ".", name), YamlReader::Line(entry.second));
  }
  return absl::OkStatus();
}

absl::Status Parser::CheckQueueTree() const {
  std::vector<QueueSpec> specs;
  specs.reserve(scenario_.queues.size());
  for (const ScenarioQueue& q : scenario_.queues) specs.push_back(q.spec);
  absl::StatusOr<QueueTree> tree = QueueTree::Create(specs);
  if (tree.ok()) return absl::OkStatus();
  // "queues[I].FIELD: MESSAGE", I indexing `specs`: name the queue's path and line instead.
  const std::string text(tree.status().message());
  const std::string_view message = text;
  constexpr std::string_view kPrefix = "queues[";
  const size_t close = message.find(']');
  size_t index = 0;
  const bool indexed =
      message.starts_with(kPrefix) && close != std::string_view::npos &&
      std::from_chars(message.data() + kPrefix.size(), message.data() + close, index).ptr ==
          message.data() + close;
  if (!indexed || index >= queue_sources_.size()) {
    return r_.ErrorAtLine(queue_sources_.front().line, "queues", message);
  }
  const QueueSource& source = queue_sources_[index];
  const std::string_view rest = message.substr(close + 1);  // ".guaranteed.gpu: ..." or ": ..."
  std::string key(rest.substr(0, rest.find(": ")));
  if (key.starts_with('.')) key.erase(0, 1);
  // The line of the key named, or of its closest enclosing key, or of the queue.
  int line = source.line;
  while (!key.empty()) {
    if (auto it = source.key_lines.find(key); it != source.key_lines.end()) {
      line = it->second;
      break;
    }
    const size_t dot = key.rfind('.');
    key.resize(dot == std::string::npos ? 0 : dot);
  }
  return absl::InvalidArgumentError(Cat(r_.file(), ":", line, ": ", source.path, rest));
}

// {required: [REQUIREMENT...], preferred: [{weight: 1..100, match: [REQUIREMENT...]}...]}, a
// REQUIREMENT being {key, operator: In | NotIn | Exists | DoesNotExist, values: [...]}.
absl::StatusOr<ClusterAffinityTerms> Parser::ParseClusterAffinity(const YAML::Node& n,
                                                                  const std::string& path) {
  ClusterAffinityTerms terms;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"required", "preferred"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "required") {
          TESSERA_ASSIGN_OR_RETURN(terms.required, ParseRequirements(v, field));
          return absl::OkStatus();
        }
        return r_.ForEachItem(v, field, [&](const YAML::Node& t, const std::string& tp) {
          PreferredLabelTerm term;
          bool has_weight = false;
          TESSERA_RETURN_IF_ERROR(r_.ForEach(
              t, tp, {"weight", "match"},
              [&](std::string_view k, const YAML::Node& tv, const std::string& f) -> absl::Status {
                if (k == "weight") {
                  has_weight = true;
                  TESSERA_ASSIGN_OR_RETURN(int64_t w, r_.Int(tv, f, INT64_MIN));
                  if (w < 1 || w > kMaxPreferredWeight) {
                    return r_.Error(tv, f, Cat("must be 1..", kMaxPreferredWeight));
                  }
                  term.weight = static_cast<int32_t>(w);
                } else {
                  TESSERA_ASSIGN_OR_RETURN(term.match, ParseRequirements(tv, f));
                  if (term.match.empty()) {
                    return r_.Error(tv, f, "must list at least one requirement");
                  }
                }
                return absl::OkStatus();
              }));
          if (!has_weight) {
            return r_.Error(t, Field(tp, "weight"), Cat("required (1..", kMaxPreferredWeight, ")"));
          }
          if (term.match.empty()) return r_.Error(t, Field(tp, "match"), "required");
          terms.preferred.push_back(std::move(term));
          return absl::OkStatus();
        });
      }));
  return terms;
}

absl::StatusOr<std::vector<LabelRequirement>> Parser::ParseRequirements(const YAML::Node& n,
                                                                        const std::string& path) {
  std::vector<LabelRequirement> out;
  TESSERA_RETURN_IF_ERROR(
      r_.ForEachItem(n, path, [&](const YAML::Node& item, const std::string& ip) -> absl::Status {
        LabelRequirement r;
        bool has_operator = false;
        int values_line = 0;
        TESSERA_RETURN_IF_ERROR(r_.ForEach(
            item, ip, {"key", "operator", "values"},
            [&](std::string_view k, const YAML::Node& v, const std::string& f) -> absl::Status {
              if (k == "key") {
                TESSERA_ASSIGN_OR_RETURN(r.key, r_.Name(v, f));
              } else if (k == "operator") {
                has_operator = true;
                TESSERA_ASSIGN_OR_RETURN(
                    std::string op, r_.Choice(v, f, {"In", "NotIn", "Exists", "DoesNotExist"}));
                r.op = op == "In"       ? LabelOperator::kIn
                       : op == "NotIn"  ? LabelOperator::kNotIn
                       : op == "Exists" ? LabelOperator::kExists
                                        : LabelOperator::kDoesNotExist;
              } else {
                values_line = YamlReader::Line(v);
                TESSERA_ASSIGN_OR_RETURN(r.values, r_.StringList(v, f));
              }
              return absl::OkStatus();
            }));
        if (r.key.empty()) return r_.Error(item, Field(ip, "key"), "required");
        if (!has_operator) {
          return r_.Error(item, Field(ip, "operator"),
                          "required (In, NotIn, Exists or DoesNotExist)");
        }
        const bool set_based = r.op == LabelOperator::kIn || r.op == LabelOperator::kNotIn;
        if (set_based && r.values.empty()) {
          return r_.Error(
              item, Field(ip, "values"),
              Cat("must list at least one value for operator ", LabelOperatorName(r.op)));
        }
        if (!set_based && !r.values.empty()) {
          return r_.ErrorAtLine(values_line, Field(ip, "values"),
                                Cat("must be empty for operator ", LabelOperatorName(r.op)));
        }
        out.push_back(std::move(r));
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<Toleration> Parser::ParseToleration(const YAML::Node& n, const std::string& path) {
  Toleration t;
  int value_line = 0;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"key", "value", "operator", "effect"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "key") {
          TESSERA_ASSIGN_OR_RETURN(t.key, r_.String(v, field));
        } else if (key == "value") {
          value_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(t.value, r_.String(v, field));
        } else if (key == "operator") {
          TESSERA_ASSIGN_OR_RETURN(std::string op, r_.Choice(v, field, {"Equal", "Exists"}));
          t.exists = op == "Exists";
        } else {
          TESSERA_ASSIGN_OR_RETURN(t.effect, ParseEffect(r_, v, field));
        }
        return absl::OkStatus();
      }));
  if (t.exists && value_line > 0) {
    return r_.ErrorAtLine(value_line, Field(path, "value"),
                          "must be left out with operator Exists");
  }
  if (!t.exists && t.key.empty()) {
    return r_.Error(n, Field(path, "key"), "required unless operator is Exists");
  }
  return t;
}

absl::Status Parser::ParseJob(const YAML::Node& n, const std::string& path) {
  ScenarioJob job;
  job.line = YamlReader::Line(n);
  JobSpec& spec = job.spec;
  bool named = false;
  bool has_duration = false;
  bool has_tasks = false;
  int queue_line = job.line;
  int name_line = job.line;
  int min_available_line = 0;
  int selector_line = 0;
  std::vector<std::pair<YAML::Node, std::string>> task_nodes;  // (node, path)
  std::vector<Toleration> tolerations;
  Labels node_selector;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path,
      {"name", "at", "queue", "priority", "min_available", "tasks", "duration", "outcome",
       "time_limit", "preemptible", "min_runtime", "termination_grace", "restart_policy",
       "node_selector", "tolerations", "cluster_selector", "cluster_affinity",
       "cluster_anti_affinity", "labels"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "name") {
          named = true;
          name_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(spec.name, r_.Name(v, field));
        } else if (key == "at") {
          TESSERA_ASSIGN_OR_RETURN(job.at, r_.Dur(v, field));
        } else if (key == "queue") {
          queue_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(spec.queue, r_.Name(v, field));
        } else if (key == "priority") {
          TESSERA_ASSIGN_OR_RETURN(int64_t p, r_.Int(v, field, INT32_MIN, INT32_MAX));
          spec.priority = static_cast<int32_t>(p);
        } else if (key == "min_available") {
          min_available_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(int64_t m, r_.Int(v, field, 1, INT32_MAX));
          spec.min_available = static_cast<int32_t>(m);
        } else if (key == "tasks") {
          has_tasks = true;
          return r_.ForEachItem(v, field, [&](const YAML::Node& t, const std::string& tp) {
            task_nodes.emplace_back(t, tp);
            return absl::OkStatus();
          });
        } else if (key == "duration") {
          has_duration = true;
          TESSERA_ASSIGN_OR_RETURN(job.duration, r_.Dur(v, field));
          if (job.duration <= Duration::zero()) return r_.Error(v, field, "must be > 0");
        } else if (key == "outcome") {
          TESSERA_ASSIGN_OR_RETURN(std::string outcome, r_.Choice(v, field, {"succeed", "fail"}));
          job.fails = outcome == "fail";
        } else if (key == "time_limit") {
          TESSERA_ASSIGN_OR_RETURN(spec.time_limit, r_.Dur(v, field));
          if (*spec.time_limit <= Duration::zero()) return r_.Error(v, field, "must be > 0");
        } else if (key == "preemptible") {
          TESSERA_ASSIGN_OR_RETURN(spec.preemptible, r_.Bool(v, field));
        } else if (key == "min_runtime") {
          TESSERA_ASSIGN_OR_RETURN(spec.min_runtime, r_.Dur(v, field));
        } else if (key == "termination_grace") {
          TESSERA_ASSIGN_OR_RETURN(spec.termination_grace, r_.Dur(v, field));
        } else if (key == "restart_policy") {
          return r_.ForEach(
              v, field, {"on_failure", "max_restarts"},
              [&](std::string_view k, const YAML::Node& rv, const std::string& f) -> absl::Status {
                if (k == "on_failure") {
                  TESSERA_ASSIGN_OR_RETURN(std::string a, r_.Choice(rv, f, {"requeue", "fail"}));
                  spec.restart_policy.on_failure =
                      a == "requeue" ? RestartAction::kRequeue : RestartAction::kFail;
                } else {
                  TESSERA_ASSIGN_OR_RETURN(int64_t m, r_.Int(rv, f, 0, INT32_MAX));
                  spec.restart_policy.max_restarts = static_cast<int32_t>(m);
                }
                return absl::OkStatus();
              });
        } else if (key == "node_selector") {
          TESSERA_ASSIGN_OR_RETURN(node_selector, r_.LabelMap(v, field));
        } else if (key == "tolerations") {
          return r_.ForEachItem(v, field, [&](const YAML::Node& t, const std::string& tp) {
            TESSERA_ASSIGN_OR_RETURN(Toleration tol, ParseToleration(t, tp));
            tolerations.push_back(std::move(tol));
            return absl::OkStatus();
          });
        } else if (key == "cluster_selector") {
          selector_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(spec.cluster_selector, r_.LabelMap(v, field));
        } else if (key == "cluster_affinity") {
          TESSERA_ASSIGN_OR_RETURN(spec.cluster_affinity, ParseClusterAffinity(v, field));
        } else if (key == "cluster_anti_affinity") {
          TESSERA_ASSIGN_OR_RETURN(spec.cluster_anti_affinity, ParseClusterAffinity(v, field));
        } else {
          TESSERA_ASSIGN_OR_RETURN(spec.labels, r_.LabelMap(v, field));
        }
        return absl::OkStatus();
      }));
  if (!named) return r_.Error(n, Field(path, "name"), "required");
  if (!has_tasks || task_nodes.empty()) {
    return r_.Error(n, Field(path, "tasks"), "required: at least one task group");
  }
  if (!has_duration) return r_.Error(n, Field(path, "duration"), "required");
  auto queue = index_.queues.find(spec.queue);
  if (queue == index_.queues.end()) {
    return r_.ErrorAtLine(queue_line, Field(path, "queue"),
                          Cat("queue '", spec.queue, "' does not exist"));
  }
  if (!queue->second) {
    return r_.ErrorAtLine(queue_line, Field(path, "queue"),
                          Cat("queue '", spec.queue, "' has children; submit to a leaf queue"));
  }
  // The cluster selector matches the cluster labels every node carries.
  for (const auto& [key, value] : spec.cluster_selector) {
    auto [it, added] = node_selector.emplace(key, value);
    if (!added && it->second != value) {
      return r_.ErrorAtLine(selector_line, Field(Field(path, "cluster_selector"), key),
                            Cat("conflicts with node_selector ", key, "=", it->second));
    }
  }
  std::set<std::string> group_names;
  for (auto& [task_node, task_path] : task_nodes) {
    TaskGroup group;
    group.request.node_selector = node_selector;
    group.request.tolerations = tolerations;
    TESSERA_RETURN_IF_ERROR(ParseTaskGroup(task_node, task_path, group));
    if (!group_names.insert(group.name).second) {
      return r_.Error(task_node, Field(task_path, "name"),
                      Cat("task group '", group.name, "' given twice"));
    }
    spec.tasks.push_back(std::move(group));
  }
  if (spec.TotalTasks() == 0) {
    return r_.Error(n, Field(path, "tasks"), "the job has no task (every replicas is 0)");
  }
  if (spec.min_available && *spec.min_available > spec.TotalTasks()) {
    return r_.ErrorAtLine(min_available_line, Field(path, "min_available"),
                          Cat("must be <= the number of tasks (", spec.TotalTasks(), ")"));
  }
  // A brace range in the name makes one identical job per name ("infer-{0..7}").
  absl::StatusOr<std::vector<std::string>> names = ExpandNameRanges(spec.name, 10000);
  if (!names.ok()) {
    return r_.ErrorAtLine(name_line, Field(path, "name"), std::string(names.status().message()));
  }
  for (std::string& name : *names) {
    if (index_.jobs.contains(name)) {
      return r_.ErrorAtLine(name_line, Field(path, "name"), Cat("job '", name, "' given twice"));
    }
    total_tasks_ += spec.TotalTasks();
    if (total_tasks_ > kMaxTasks) {
      return r_.Error(n, Field(path, "tasks"),
                      Cat("a scenario has at most ", kMaxTasks, " tasks (replicas of every job)"));
    }
    ScenarioJob copy = job;
    copy.spec.name = std::move(name);
    TESSERA_RETURN_IF_ERROR(r_.Wrap(n, copy.spec.Validate(path)));
    index_.jobs.emplace(copy.spec.name, static_cast<int32_t>(scenario_.jobs.size()));
    scenario_.jobs.push_back(std::move(copy));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseTaskGroup(const YAML::Node& n, const std::string& path,
                                    TaskGroup& group) {
  TaskRequest& req = group.request;
  int64_t gpu = 0;
  int gpu_line = 0;
  int gpu_memory_line = 0;
  int gpu_model_line = 0;
  bool named = false;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path,
      {"name", "replicas", "cpu", "memory", "gpu", "gpu_memory", "gpu_model", "command", "args",
       "env", "working_dir"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "name") {
          named = true;
          TESSERA_ASSIGN_OR_RETURN(group.name, r_.Name(v, field));
        } else if (key == "replicas") {
          TESSERA_ASSIGN_OR_RETURN(int64_t replicas, r_.Int(v, field, 0, 100000));
          group.replicas = static_cast<int32_t>(replicas);
        } else if (key == "cpu") {
          TESSERA_ASSIGN_OR_RETURN(req.cpu, r_.CpuMillis(v, field));
        } else if (key == "memory") {
          TESSERA_ASSIGN_OR_RETURN(req.memory, r_.Bytes(v, field));
        } else if (key == "gpu") {
          gpu_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(gpu, r_.MilliGpu(v, field));
        } else if (key == "gpu_memory") {
          gpu_memory_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(req.gpu_memory, r_.Bytes(v, field));
        } else if (key == "gpu_model") {
          gpu_model_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(req.gpu_models, r_.StringList(v, field));
        } else if (key == "command" || key == "args") {
          TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> list, r_.StringList(v, field));
          (key == "command" ? group.command : group.args) = std::move(list);
        } else if (key == "env") {
          TESSERA_ASSIGN_OR_RETURN(Labels env, r_.LabelMap(v, field));
          group.env.insert(env.begin(), env.end());
        } else {
          TESSERA_ASSIGN_OR_RETURN(group.working_dir, r_.String(v, field));
        }
        return absl::OkStatus();
      }));
  if (!named) return r_.Error(n, Field(path, "name"), "required");
  if (gpu > kMilliGpuPerDevice && gpu % kMilliGpuPerDevice != 0) {
    return r_.ErrorAtLine(gpu_line, Field(path, "gpu"),
                          "must be a whole number of GPUs, or a share of one GPU below 1");
  }
  if (gpu > 0) {
    req.gpu_count = static_cast<int32_t>(gpu < kMilliGpuPerDevice ? 1 : gpu / kMilliGpuPerDevice);
    req.gpu_milli = gpu < kMilliGpuPerDevice ? gpu : kMilliGpuPerDevice;
  }
  if (req.gpu_memory > 0 && gpu == 0) {
    return r_.ErrorAtLine(gpu_memory_line, Field(path, "gpu_memory"), "needs gpu > 0");
  }
  if (req.gpu_memory > 0 && !gpu_memory_user_) {
    gpu_memory_user_ = std::pair{Field(path, "gpu_memory"), gpu_memory_line};
  }
  if (!req.gpu_models.empty() && gpu == 0) {
    return r_.ErrorAtLine(gpu_model_line, Field(path, "gpu_model"), "needs gpu > 0");
  }
  return r_.Wrap(n, req.Validate(path));
}

absl::Status Parser::ParseEvent(const YAML::Node& n, const std::string& path) {
  ScenarioEvent event;
  event.line = YamlReader::Line(n);
  bool has_at = false;
  bool has_action = false;
  bool has_gpu = false;
  bool has_taint = false;
  int gpu_line = 0;
  TESSERA_RETURN_IF_ERROR(r_.ForEach(
      n, path, {"at", "node", "job", "gpu", "action", "taint"},
      [&](std::string_view key, const YAML::Node& v, const std::string& field) -> absl::Status {
        if (key == "at") {
          has_at = true;
          TESSERA_ASSIGN_OR_RETURN(event.at, r_.Dur(v, field));
        } else if (key == "node") {
          TESSERA_ASSIGN_OR_RETURN(event.node, r_.Name(v, field));
          if (!index_.nodes.contains(event.node)) {
            return r_.Error(v, field, Cat("node '", event.node, "' does not exist"));
          }
        } else if (key == "job") {
          TESSERA_ASSIGN_OR_RETURN(event.job, r_.Name(v, field));
          if (!index_.jobs.contains(event.job)) {
            return r_.Error(v, field, Cat("job '", event.job, "' does not exist"));
          }
        } else if (key == "gpu") {
          has_gpu = true;
          gpu_line = YamlReader::Line(v);
          TESSERA_ASSIGN_OR_RETURN(int64_t gpu, r_.Int(v, field, 0, 1024));
          event.gpu = static_cast<int32_t>(gpu);
        } else if (key == "action") {
          has_action = true;
          TESSERA_ASSIGN_OR_RETURN(
              std::string action,
              r_.Choice(v, field,
                        {"down", "up", "cordon", "uncordon", "drain", "remove", "gpu_unhealthy",
                         "gpu_healthy", "taint", "untaint", "cancel"}));
          static const std::map<std::string, EventAction, std::less<>> kActions = {
              {"down", EventAction::kDown},
              {"up", EventAction::kUp},
              {"cordon", EventAction::kCordon},
              {"uncordon", EventAction::kUncordon},
              {"drain", EventAction::kDrain},
              {"remove", EventAction::kRemove},
              {"gpu_unhealthy", EventAction::kGpuUnhealthy},
              {"gpu_healthy", EventAction::kGpuHealthy},
              {"taint", EventAction::kTaint},
              {"untaint", EventAction::kUntaint},
              {"cancel", EventAction::kCancel}};
          event.action = kActions.find(action)->second;
        } else {
          has_taint = true;
          TESSERA_ASSIGN_OR_RETURN(event.taint, ParseTaint(v, field, false, &event.has_effect));
        }
        return absl::OkStatus();
      }));
  if (!has_at) return r_.Error(n, Field(path, "at"), "required");
  if (!has_action) return r_.Error(n, Field(path, "action"), "required");
  TESSERA_RETURN_IF_ERROR(CheckEventTarget(event, n, path, has_gpu, has_taint));
  if (has_gpu && event.gpu >= index_.nodes.at(event.node)) {
    return r_.ErrorAtLine(
        gpu_line, Field(path, "gpu"),
        Cat("node '", event.node, "' has ", index_.nodes.at(event.node), " GPUs"));
  }
  scenario_.events.push_back(std::move(event));
  return absl::OkStatus();
}

absl::Status Parser::CheckEventTarget(const ScenarioEvent& event, const YAML::Node& n,
                                      const std::string& path, bool has_gpu, bool has_taint) {
  const bool cancel = event.action == EventAction::kCancel;
  const bool gpu_action =
      event.action == EventAction::kGpuUnhealthy || event.action == EventAction::kGpuHealthy;
  const bool taint_action =
      event.action == EventAction::kTaint || event.action == EventAction::kUntaint;
  const std::string action(ToString(event.action));
  if (cancel && event.job.empty()) return r_.Error(n, Field(path, "job"), "required by cancel");
  if (cancel && !event.node.empty()) return r_.Error(n, Field(path, "node"), "not used by cancel");
  if (!cancel && event.node.empty()) {
    return r_.Error(n, Field(path, "node"), Cat("required by ", action));
  }
  if (!cancel && !event.job.empty()) {
    return r_.Error(n, Field(path, "job"), Cat("not used by ", action));
  }
  if (gpu_action != has_gpu) {
    return r_.Error(n, Field(path, "gpu"),
                    gpu_action ? Cat("required by ", action) : Cat("not used by ", action));
  }
  if (taint_action != has_taint) {
    return r_.Error(n, Field(path, "taint"),
                    taint_action ? Cat("required by ", action) : Cat("not used by ", action));
  }
  if (event.action == EventAction::kTaint && !event.has_effect) {
    return r_.Error(n, Field(Field(path, "taint"), "effect"), "required by taint");
  }
  return absl::OkStatus();
}

}  // namespace

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
    Parser parser(file, options);
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

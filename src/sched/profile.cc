#include "sched/profile.h"

#include <array>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "yaml-cpp/yaml.h"

namespace tessera {
namespace {

// The built-in profiles, one per placement policy. The FGD paper's policies run only their own
// scorer (the paper's artifact turns every default Kubernetes scorer off), choose the GPU
// devices in their Reserve, and take the first of tied nodes as the artifact's scheduler does.
// Every profile filters by the job's cluster constraints (before the node-level filters, so a
// node of a cluster the job may not use says so); default and mostallocated also rank clusters
// by preferred cluster affinity and cost tier, each weighted 10 so that they decide between
// clusters and the allocation score decides within one (docs/policies/cluster-selection.md).
// Their PreFilter/PreScore turn them off for jobs without cluster constraints and, cost tiers,
// for a single cluster, so a single-cluster fleet does not pay for them per node.
constexpr std::string_view kFilters =
    "queueSort: PrioritySort\n"
    "preFilter: [NodeResourcesFit, ClusterSelector, ClusterAffinity]\n"
    "filter: [ClusterSelector, ClusterAffinity, NodeUnschedulable, NodeResourcesFit, "
    "TaintToleration, NodeAffinity]\n"
    "permit: [Gang]\n"
    "bind: [DefaultBinder]\n";

struct BuiltinSpec {
  std::string_view name;
  std::string_view score_and_reserve;
};

constexpr std::array<BuiltinSpec, 9> kBuiltins = {{
    {"default",
     "preScore: [ClusterAffinity, ClusterScore]\n"
     "score: [{name: LeastAllocated, weight: 1}, {name: TaintToleration, weight: 1}, "
     "{name: ClusterAffinity, weight: 10}, {name: ClusterScore, weight: 10}]\n"},
    {"mostallocated",
     "preScore: [ClusterAffinity, ClusterScore]\n"
     "score: [{name: MostAllocated, weight: 1}, {name: TaintToleration, weight: 1}, "
     "{name: ClusterAffinity, weight: 10}, {name: ClusterScore, weight: 10}]\n"},
    {"random", "tieBreak: first\nscore: [Random]\nreserve: [Random]\n"},
    {"dotprod", "tieBreak: first\nscore: [DotProduct]\nreserve: [DotProduct]\n"},
    {"packing", "tieBreak: first\nscore: [GpuPacking]\nreserve: [GpuPacking]\n"},
    {"clustering", "tieBreak: first\nscore: [GpuClustering]\nreserve: [GpuClustering]\n"},
    {"bestfit", "tieBreak: first\nscore: [BestFit]\nreserve: [BestFit]\n"},
    {"fgd", "tieBreak: first\nscore: [FGD]\nreserve: [FGD]\n"},
    {"fgdcpu", "tieBreak: first\nscore: [FGD-CPU]\nreserve: [FGD-CPU]\n"},
}};

absl::Status FieldError(std::string_view source, const YAML::Node& node, std::string_view field,
                        std::string_view problem) {
  return absl::InvalidArgumentError(
      fmt::format("{}:{}: {}: {}", source, node.Mark().line + 1, field, problem));
}

absl::StatusOr<std::string> ReadName(std::string_view source, const YAML::Node& node,
                                     std::string_view field) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return FieldError(source, node, field, "must be a plugin name");
  }
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> ReadNames(std::string_view source, const YAML::Node& node,
                                                   std::string_view field) {
  if (!node.IsSequence()) return FieldError(source, node, field, "must be a list of plugin names");
  std::vector<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    auto name = ReadName(source, node[i], fmt::format("{}[{}]", field, i));
    if (!name.ok()) return name.status();
    names.push_back(*std::move(name));
  }
  return names;
}

absl::StatusOr<std::vector<WeightedPlugin>> ReadScores(std::string_view source,
                                                       const YAML::Node& node) {
  if (!node.IsSequence()) return FieldError(source, node, "score", "must be a list");
  std::vector<WeightedPlugin> scores;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    const std::string field = fmt::format("score[{}]", i);
    WeightedPlugin plugin;
    if (item.IsScalar()) {
      plugin.name = item.Scalar();
    } else if (item.IsMap()) {
      for (const auto& kv : item) {
        const std::string key = kv.first.as<std::string>();
        if (key == "name") {
          auto name = ReadName(source, kv.second, field + ".name");
          if (!name.ok()) return name.status();
          plugin.name = *std::move(name);
        } else if (key == "weight") {
          int64_t weight = 0;
          if (!YAML::convert<int64_t>::decode(kv.second, weight) || weight < 1) {
            return FieldError(source, kv.second, field + ".weight", "must be an integer >= 1");
          }
          plugin.weight = weight;
        } else {
          return FieldError(source, kv.first, fmt::format("{}.{}", field, key), "unknown key");
        }
      }
    } else {
      return FieldError(source, item, field, "must be a name or {name, weight}");
    }
    if (plugin.name.empty()) return FieldError(source, item, field + ".name", "is required");
    scores.push_back(std::move(plugin));
  }
  return scores;
}

absl::StatusOr<std::map<std::string, PluginArgs, std::less<>>> ReadPluginArgs(
    std::string_view source, const YAML::Node& node) {
  if (!node.IsMap()) return FieldError(source, node, "pluginArgs", "must be a mapping");
  std::map<std::string, PluginArgs, std::less<>> all;
  for (const auto& plugin : node) {
    const std::string name = plugin.first.as<std::string>();
    const std::string field = fmt::format("pluginArgs.{}", name);
    if (!plugin.second.IsMap())
      return FieldError(source, plugin.second, field, "must be a mapping");
    PluginArgs args;
    for (const auto& kv : plugin.second) {
      if (!kv.second.IsScalar()) {
        return FieldError(source, kv.second,
                          fmt::format("{}.{}", field, kv.first.as<std::string>()),
                          "must be a scalar");
      }
      args[kv.first.as<std::string>()] = kv.second.Scalar();
    }
    all[name] = std::move(args);
  }
  return all;
}

absl::Status ParseInto(std::string_view source, const YAML::Node& root, Profile& profile) {
  if (!root.IsMap()) return FieldError(source, root, "profile", "must be a mapping");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& value = kv.second;
    auto assign_names = [&](std::vector<std::string>& out) -> absl::Status {
      auto names = ReadNames(source, value, key);
      if (!names.ok()) return names.status();
      out = *std::move(names);
      return absl::OkStatus();
    };
    absl::Status status;
    if (key == "name") {
      if (!value.IsScalar()) return FieldError(source, value, key, "must be a string");
      profile.name = value.Scalar();
    } else if (key == "tieBreak") {
      if (!value.IsScalar() || (value.Scalar() != "random" && value.Scalar() != "first")) {
        return FieldError(source, value, key, "must be random or first");
      }
      profile.tie_break = value.Scalar() == "first" ? TieBreak::kFirst : TieBreak::kRandom;
    } else if (key == "queueSort") {
      auto name = ReadName(source, value, key);
      if (!name.ok()) return name.status();
      profile.queue_sort = *std::move(name);
    } else if (key == "preFilter") {
      status = assign_names(profile.pre_filter);
    } else if (key == "filter") {
      status = assign_names(profile.filter);
    } else if (key == "postFilter") {
      status = assign_names(profile.post_filter);
    } else if (key == "preScore") {
      status = assign_names(profile.pre_score);
    } else if (key == "score") {
      auto scores = ReadScores(source, value);
      if (!scores.ok()) return scores.status();
      profile.score = *std::move(scores);
    } else if (key == "reserve") {
      status = assign_names(profile.reserve);
    } else if (key == "permit") {
      status = assign_names(profile.permit);
    } else if (key == "bind") {
      status = assign_names(profile.bind);
    } else if (key == "pluginArgs") {
      auto args = ReadPluginArgs(source, value);
      if (!args.ok()) return args.status();
      profile.plugin_args = *std::move(args);
    } else {
      return FieldError(source, kv.first, key, "unknown key");
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Profile> ParseProfile(std::string_view yaml_text, std::string_view source) {
  Profile profile;
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    absl::Status status = ParseInto(source, root, profile);
    if (!status.ok()) return status;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  return profile;
}

absl::StatusOr<Profile> BuiltinProfile(std::string_view name) {
  for (const BuiltinSpec& spec : kBuiltins) {
    if (spec.name != name) continue;
    const std::string text =
        fmt::format("name: {}\n{}{}", spec.name, kFilters, spec.score_and_reserve);
    return ParseProfile(text, fmt::format("builtin profile {}", name));
  }
  return absl::NotFoundError(fmt::format("unknown profile \"{}\"; known: {}", name,
                                         fmt::join(BuiltinProfileNames(), ", ")));
}

std::vector<std::string> BuiltinProfileNames() {
  std::vector<std::string> names;
  for (const BuiltinSpec& spec : kBuiltins) names.emplace_back(spec.name);
  return names;
}

}  // namespace tessera

// The clusters and nodes sections of a scenario file: clusters, nodes (name ranges, pools,
// labels, capacity), their GPUs and taints (the Parser of scenario_parser_impl.h).
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_name.h"
#include "sim/scenario/name_range.h"
#include "sim/scenario/scenario_parser_impl.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::scenario_parsing {
namespace {

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

}  // namespace

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

namespace {

// A taint effect: NoSchedule, PreferNoSchedule or NoExecute.
absl::StatusOr<TaintEffect> ParseEffect(const YamlReader& r, const YAML::Node& v,
                                        const std::string& field) {
  TESSERA_ASSIGN_OR_RETURN(std::string effect,
                           r.Choice(v, field, {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
  return effect == "NoSchedule"         ? TaintEffect::kNoSchedule
         : effect == "PreferNoSchedule" ? TaintEffect::kPreferNoSchedule
                                        : TaintEffect::kNoExecute;
}

}  // namespace

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

}  // namespace tessera::sim::scenario_parsing

// Profile: which plugins run at each extension point, their score weights and arguments.
//
// YAML form (plugin names as registered in BuiltinPlugins()):
//
//   name: fgd
//   tieBreak: first                      # random (default) | first
//   queueSort: PrioritySort
//   preFilter: [NodeResourcesFit]
//   filter: [NodeUnschedulable, NodeResourcesFit, TaintToleration, NodeAffinity]
//   postFilter: []
//   preScore: []
//   score: [{name: FGD, weight: 1}]
//   reserve: [FGD]
//   permit: [Gang]
//   bind: [DefaultBinder]
//   pluginArgs: {LeastAllocated: {resources: "cpu=1,memory=1,gpu=2"}}
//
// tieBreak says how the framework chooses among nodes with the same best total: `random`
// picks one uniformly with the injected Rng (kube-scheduler's selectHost); `first` picks the
// lowest node index, so the choice follows the order nodes were added in (the FGD artifact's
// scheduler does this "for reproducibility"; its simulator shuffles the node order per seed).
//
// Unknown keys are errors naming the key. The built-in profiles are one per placement policy:
// "default" (LeastAllocated), "mostallocated", and the FGD paper's six: "random", "dotprod",
// "packing", "clustering", "bestfit", "fgd". Every built-in profile runs the cluster filters
// (ClusterSelector, ClusterAffinity); "default" and "mostallocated" also score clusters
// (ClusterAffinity, ClusterScore). A profile of one's own that leaves them out ignores
// clusterAffinity (clusterSelector still holds through the node selector). A value type.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/sched/registry.h"

namespace tessera {

struct WeightedPlugin {
  std::string name;
  int64_t weight = 1;
};

enum class TieBreak { kRandom, kFirst };

struct Profile {
  std::string name;
  TieBreak tie_break = TieBreak::kRandom;
  std::string queue_sort = "PrioritySort";
  std::vector<std::string> pre_filter;
  std::vector<std::string> filter;
  std::vector<std::string> post_filter;
  std::vector<std::string> pre_score;
  std::vector<WeightedPlugin> score;
  std::vector<std::string> reserve;
  std::vector<std::string> permit;
  std::vector<std::string> bind;
  std::map<std::string, PluginArgs, std::less<>> plugin_args;
};

// Parses a profile document; errors name `source` and the field ("profile.yaml: score[0].weight:
// must be >= 1").
absl::StatusOr<Profile> ParseProfile(std::string_view yaml_text, std::string_view source);

// A built-in profile by name; NotFound lists the known names.
absl::StatusOr<Profile> BuiltinProfile(std::string_view name);
std::vector<std::string> BuiltinProfileNames();

}  // namespace tessera

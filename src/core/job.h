// Jobs, task groups and the per-task request the scheduler places.
//
// A Job has one or more TaskGroups (roles such as "master", "worker"); each group has
// `replicas` identical tasks. The gang is the all-or-nothing set of `min_available` tasks.
// A TaskRequest is what one task asks of one node:
//   cpu         millicores        memory      bytes
//   gpu_count   devices           gpu_milli   milli-GPU per device (1..1000; 1000 = whole)
//   gpu_memory  bytes per device  gpu_models  allowed device models (empty = any)
// A sharing task has gpu_count == 1 and gpu_milli < 1000; a whole-GPU task has
// gpu_milli == 1000 and needs gpu_count fully free devices on one node.
//
// Value types; safe to share when const.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/node.h"
#include "core/resources.h"
#include "tessera/common/clock.h"

namespace tessera {

struct Toleration {
  std::string key;       // empty with operator Exists = tolerate everything
  std::string value;     // ignored when exists == true
  bool exists = false;   // operator Exists (any value) instead of Equal
  std::optional<TaintEffect> effect;  // nullopt = every effect

  // Kubernetes semantics: key, value (unless Exists) and effect (when set) must match.
  bool Tolerates(const Taint& taint) const;
};

// A requirement on labels, as Kubernetes' NodeSelectorRequirement: the label `key` is In / NotIn
// `values`, or Exists / DoesNotExist (then `values` is empty). Used over cluster labels by
// clusterAffinity and clusterAntiAffinity (sched/plugins/cluster/cluster_affinity.h).
enum class LabelOperator { kIn, kNotIn, kExists, kDoesNotExist };

// "In", "NotIn", "Exists", "DoesNotExist": the names documents use.
std::string_view LabelOperatorName(LabelOperator op);

struct LabelRequirement {
  std::string key;
  LabelOperator op = LabelOperator::kIn;
  std::vector<std::string> values;

  // Kubernetes semantics: NotIn and DoesNotExist hold when the label is absent.
  bool Matches(const Labels& labels) const;
  friend bool operator==(const LabelRequirement&, const LabelRequirement&) = default;
};

// A preferred term: `weight` (1..100) counts when every requirement of `match` holds.
struct PreferredLabelTerm {
  int32_t weight = 1;
  std::vector<LabelRequirement> match;
  friend bool operator==(const PreferredLabelTerm&, const PreferredLabelTerm&) = default;
};

// Cluster affinity or anti-affinity of a job (JOBSPEC keys clusterAffinity and
// clusterAntiAffinity). For affinity, every `required` requirement must hold on a cluster's
// labels and each matching `preferred` term adds its weight; for anti-affinity, a cluster on
// which any `required` requirement holds is excluded and each matching `preferred` term takes
// its weight away.
struct ClusterAffinityTerms {
  std::vector<LabelRequirement> required;
  std::vector<PreferredLabelTerm> preferred;

  bool empty() const { return required.empty() && preferred.empty(); }
  // Checks keys, operators' values and weights; errors name the path under `field`
  // ("spec.cluster_affinity.preferred[0].weight: must be 1..100").
  absl::Status Validate(std::string_view field) const;
  friend bool operator==(const ClusterAffinityTerms&, const ClusterAffinityTerms&) = default;
};

inline constexpr int32_t kMaxPreferredWeight = 100;

struct TaskRequest {
  int64_t cpu = 0;          // millicores
  int64_t memory = 0;       // bytes
  int32_t gpu_count = 0;    // devices
  int64_t gpu_milli = 0;    // milli-GPU per device; 0 when gpu_count == 0
  int64_t gpu_memory = 0;   // bytes per device; needs gpu_count > 0
  std::vector<std::string> gpu_models;  // allowed models; empty = any
  std::map<std::string, int64_t, std::less<>> extended;
  Labels node_selector;                 // every pair must be on the node's labels
  std::vector<Toleration> tolerations;
  // The job's cluster constraints, copied onto each of its tasks by the Scheduler (Submit):
  // matched against the cluster labels every node carries (tessera.io/cluster: NAME included).
  Labels cluster_selector;
  ClusterAffinityTerms cluster_affinity;
  ClusterAffinityTerms cluster_anti_affinity;

  bool IsSharing() const { return gpu_count == 1 && gpu_milli < kMilliGpuPerDevice; }
  bool NeedsGpu() const { return gpu_count > 0; }
  // Total milli-GPU: gpu_count x gpu_milli.
  int64_t TotalGpuMilli() const { return gpu_count * gpu_milli; }
  // The node-level resources this task holds once placed.
  Resources AsResources() const;
  // True when `model` is allowed (gpu_models empty, or contains it).
  bool AllowsModel(std::string_view model) const {
    for (const std::string& allowed : gpu_models) {
      if (allowed == model) return true;
    }
    return gpu_models.empty();
  }
  // A canonical string: tasks with equal keys get identical filter and score results
  // (the scheduler's equivalence classes).
  std::string EquivalenceKey() const;

  // Checks every field; errors name the path, prefixed by `field` (e.g. "spec.tasks[1]"). A
  // task asks for at most kMaxGpusPerNode devices (core/node.h): it runs on one node.
  absl::Status Validate(std::string_view field) const;
};

enum class RestartAction { kRequeue, kFail };

struct RestartPolicy {
  RestartAction on_failure = RestartAction::kRequeue;
  int32_t max_restarts = 3;
};

struct TaskGroup {
  std::string name;
  int32_t replicas = 1;
  TaskRequest request;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string working_dir;
};

// The most tasks one job may have (the sum of its groups' replicas): every task is tracked,
// stored and shown one by one.
inline constexpr int64_t kMaxTasksPerJob = 4096;

struct JobSpec {
  std::string name;
  Labels labels;
  std::string queue = "default";
  int32_t priority = 0;
  std::optional<int32_t> min_available;  // nullopt = all tasks
  std::optional<Duration> time_limit;
  // How long the job's tasks run on simulated nodes (a replayed trace's durations); real
  // clusters ignore it. nullopt: a simulated task runs until its time limit, or until cancelled.
  std::optional<Duration> duration;
  bool preemptible = true;
  Duration min_runtime{0};
  Duration termination_grace{0};
  RestartPolicy restart_policy;
  Labels cluster_selector;
  ClusterAffinityTerms cluster_affinity;  // over cluster labels; see ClusterAffinityTerms
  ClusterAffinityTerms cluster_anti_affinity;
  std::vector<TaskGroup> tasks;

  int32_t TotalTasks() const;
  int32_t GangSize() const { return min_available.value_or(TotalTasks()); }
  // Checks every field and every task group; errors name the path under `field` ("spec").
  absl::Status Validate(std::string_view field) const;
};

}  // namespace tessera

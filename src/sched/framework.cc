#include "sched/framework.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/device_selection.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "sched/max_tree.h"
#include "tessera/sched/cluster_count.h"

namespace tessera {
namespace {

constexpr int64_t kInfeasible = std::numeric_limits<int64_t>::min();

// The reason recorded when no node is in the inventory at all.
inline constexpr Reason kNoNodes{"InsufficientResources", "no nodes in the inventory"};

template <typename Point>
absl::Status Resolve(const std::vector<std::string>& names, std::string_view point,
                     const std::map<std::string, Plugin*, std::less<>>& plugins,
                     std::vector<Point*>& out) {
  for (const std::string& name : names) {
    auto it = plugins.find(name);
    auto* typed = dynamic_cast<Point*>(it->second);
    if (typed == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("profile: {}: plugin \"{}\" does not implement {}", point, name, point));
    }
    out.push_back(typed);
  }
  return absl::OkStatus();
}

// Every plugin name the profile mentions, in first-mention order.
std::vector<std::string> MentionedPlugins(const Profile& p) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  add(p.queue_sort);
  for (const auto* list :
       {&p.pre_filter, &p.filter, &p.post_filter, &p.pre_score, &p.reserve, &p.permit, &p.bind}) {
    for (const std::string& n : *list) add(n);
  }
  for (const WeightedPlugin& w : p.score) add(w.name);
  return names;
}

}  // namespace

// The per-class cache holds, for every node, the node version it last saw and the rejection
// reason (a small id), and keeps the weighted totals in the leaves of a MaxTree: 16 bytes per
// node and class, so the caches of many classes stay in the processor's cache.
constexpr uint64_t kMaxChangesBetweenRefreshes = uint64_t{1} << 31;  // versions are 32-bit
constexpr uint16_t kFeasible = 0;
// The reason of a removed node: it does not count among the nodes looked at.
constexpr uint16_t kRemoved = std::numeric_limits<uint16_t>::max();
// Caches are evicted, least recently used first, beyond this many bytes.
constexpr size_t kClassCacheBudgetBytes = size_t{256} << 20;

// Cached verdicts and scores of one task equivalence class over every node.
struct Framework::ClassCache {
  struct Entry {
    uint32_t version = 0;         // the node version evaluated
    uint16_t reason = kFeasible;  // 1 + index into Framework::reasons_ when rejected; kRemoved
  };
  std::vector<Entry> nodes;
  MaxTree totals;             // weighted totals per node; kInfeasible when rejected or removed
  std::vector<int64_t> raw;   // raw scores, node-major [node * plugins + plugin]; kept only when
                              // some scorer normalizes
  uint64_t seen_changes = 0;  // ClusterState::change_count() at the last refresh
  bool complete = false;      // every node has been evaluated once
  uint64_t last_used = 0;     // Framework::use_clock_ at the last attempt, for eviction
  // With several clusters: the totals again, one tree per cluster (leaves in the cluster's node
  // order), in step with `totals` when cluster_layout is the index's layout.
  std::vector<MaxTree> cluster_totals;
  uint64_t cluster_layout = 0;
  uint64_t evaluations = 0;  // node entries written so far (Evaluate)
  // The last Diagnose of this class, kept while no entry was written since: every pending job
  // of a class that fits nowhere is told the same, without counting the nodes again.
  struct DiagnosisMemo {
    uint64_t evaluations = 0;
    int32_t cluster = 0;
    int32_t nodes = 0;    // the state's size
    uint64_t layout = 0;  // the cluster index's layout
    Diagnosis diagnosis;
  };
  std::optional<DiagnosisMemo> diagnosis_memo;
};

absl::StatusOr<std::unique_ptr<Framework>> Framework::Create(const Profile& profile,
                                                             const Registry& registry,
                                                             const Handle& handle) {
  std::unique_ptr<Framework> fw(new Framework());
  fw->profile_name_ = profile.name;
  fw->tie_break_ = profile.tie_break;
  fw->handle_ = handle;

  std::map<std::string, Plugin*, std::less<>> plugins;
  for (const std::string& name : MentionedPlugins(profile)) {
    const PluginFactory* factory = registry.Find(name);
    if (factory == nullptr) {
      return absl::InvalidArgumentError(
          fmt::format("profile {}: unknown plugin \"{}\"", profile.name, name));
    }
    static const PluginArgs kNoArgs;
    auto args_it = profile.plugin_args.find(name);
    auto plugin =
        (*factory)(args_it == profile.plugin_args.end() ? kNoArgs : args_it->second, handle);
    if (!plugin.ok()) {
      return absl::InvalidArgumentError(fmt::format("profile {}: plugin {}: {}", profile.name, name,
                                                    std::string(plugin.status().message())));
    }
    plugins[name] = plugin->get();
    if (auto* reader = dynamic_cast<TargetWorkloadPlugin*>(plugin->get())) {
      fw->workload_readers_.push_back(reader);
    }
    fw->owned_.push_back(*std::move(plugin));
  }
  for (const auto& [name, plugin] : profile.plugin_args) {
    if (!plugins.contains(name)) {
      return absl::InvalidArgumentError(
          fmt::format("profile {}: pluginArgs.{}: plugin is not enabled", profile.name, name));
    }
  }

  std::vector<QueueSortPlugin*> sort;
  absl::Status s = Resolve({profile.queue_sort}, "queueSort", plugins, sort);
  if (s.ok()) s = Resolve(profile.pre_filter, "preFilter", plugins, fw->pre_filter_);
  if (s.ok()) s = Resolve(profile.filter, "filter", plugins, fw->filter_);
  if (s.ok()) s = Resolve(profile.post_filter, "postFilter", plugins, fw->post_filter_);
  if (s.ok()) s = Resolve(profile.pre_score, "preScore", plugins, fw->pre_score_);
  if (s.ok()) s = Resolve(profile.reserve, "reserve", plugins, fw->reserve_);
  if (s.ok()) s = Resolve(profile.permit, "permit", plugins, fw->permit_);
  if (s.ok()) s = Resolve(profile.bind, "bind", plugins, fw->bind_);
  if (!s.ok()) return s;
  fw->queue_sort_ = sort.front();
  for (const WeightedPlugin& w : profile.score) {
    std::vector<ScorePlugin*> one;
    absl::Status r = Resolve({w.name}, "score", plugins, one);
    if (!r.ok()) return r;
    if (w.weight < 1) {
      return absl::InvalidArgumentError(
          fmt::format("profile {}: score {}: weight must be >= 1", profile.name, w.name));
    }
    fw->score_.push_back(one.front());
    fw->score_weights_.push_back(w.weight);
    fw->any_normalize_ = fw->any_normalize_ || one.front()->HasNormalizeScore();
  }
  if (fw->bind_.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("profile {}: bind: at least one bind plugin is required", profile.name));
  }
  return fw;
}

Framework::~Framework() = default;

absl::Status Framework::SetTargetWorkload(const TargetWorkload& workload) {
  if (workload_readers_.empty()) return absl::OkStatus();
  // Cached scores were computed against the previous workload.
  caches_.clear();
  for (TargetWorkloadPlugin* reader : workload_readers_) {
    if (absl::Status s = reader->SetTargetWorkload(workload); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void Framework::IndexClusters(const ClusterState& state) {
  ClusterIndex& index = clusters_;
  if (index.state_uid == state.uid() && index.nodes == state.size()) return;
  const bool several = index.several();
  if (index.state_uid != state.uid()) {
    const uint64_t layout = index.layout;
    index = ClusterIndex{};
    index.state_uid = state.uid();
    index.layout = layout;  // keeps growing: caches of an earlier state never look current
  }
  for (int32_t i = index.nodes; i < state.size(); ++i) {
    const std::string& name = state.node(i).cluster;
    auto it = std::find(index.names.begin(), index.names.end(), name);
    const auto id = static_cast<int32_t>(it - index.names.begin());
    if (it == index.names.end()) {
      index.names.push_back(name);
      index.members.emplace_back();
    }
    index.of_node.push_back(id);
    index.position.push_back(static_cast<int32_t>(index.members[id].size()));
    index.members[id].push_back(i);
  }
  index.nodes = state.size();
  ++index.layout;
  // Plugins may skip with one cluster (cluster_count.h): scores cached before a second cluster
  // appeared lack theirs.
  if (index.several() != several) caches_.clear();
}

void Framework::RebuildClusterTotals(ClassCache& cache) const {
  cache.cluster_totals.resize(clusters_.names.size());
  for (size_t c = 0; c < clusters_.members.size(); ++c) {
    MaxTree& tree = cache.cluster_totals[c];
    const std::vector<int32_t>& members = clusters_.members[c];
    tree.Resize(static_cast<int32_t>(members.size()));
    for (size_t k = 0; k < members.size(); ++k) {
      tree.SetLeaf(static_cast<int32_t>(k), cache.totals.Leaf(members[k]));
    }
    tree.Rebuild();
  }
  cache.cluster_layout = clusters_.layout;
}

Framework::ClassCache& Framework::CacheFor(const ClusterState& state, const TaskRequest& task) {
  if (state.uid() != cache_state_uid_) {
    caches_.clear();
    cache_state_uid_ = state.uid();
  }
  IndexClusters(state);
  std::unique_ptr<ClassCache>& cache = caches_[task.EquivalenceKey()];
  if (cache == nullptr) {
    cache = std::make_unique<ClassCache>();
    EvictIfOverBudget(state, cache.get());
  }
  cache->last_used = ++use_clock_;
  return *cache;
}

void Framework::EvictIfOverBudget(const ClusterState& state, const ClassCache* keep) {
  const size_t per_class =
      static_cast<size_t>(state.size()) *
      (sizeof(ClassCache::Entry) + sizeof(int64_t) * (any_normalize_ ? score_.size() + 1 : 1));
  const size_t limit = std::max<size_t>(8, kClassCacheBudgetBytes / std::max<size_t>(per_class, 1));
  while (caches_.size() > limit) {
    auto oldest = caches_.end();
    for (auto it = caches_.begin(); it != caches_.end(); ++it) {
      if (it->second.get() == keep) continue;
      if (oldest == caches_.end() || it->second->last_used < oldest->second->last_used) oldest = it;
    }
    caches_.erase(oldest);
  }
}

uint16_t Framework::ReasonId(const Reason* reason) {
  for (size_t i = 0; i < reasons_.size(); ++i) {
    if (reasons_[i] == reason) return static_cast<uint16_t>(i + 1);
  }
  reasons_.push_back(reason);
  return static_cast<uint16_t>(reasons_.size());
}

SchedStatus Framework::Evaluate(ClassCache& cache, const CycleState& cycle,
                                const ClusterState& state, const TaskRequest& task, int32_t index,
                                int64_t* total) {
  const Node& node = state.node(index);
  ClassCache::Entry& entry = cache.nodes[index];
  ++cache.evaluations;
  entry.version = state.version(index);
  entry.reason = kFeasible;
  *total = kInfeasible;
  if (node.removed) {
    entry.reason = kRemoved;
    return {};
  }
  for (FilterPlugin* filter : active_filters_) {
    SchedStatus verdict = filter->Filter(cycle, task, node);
    if (verdict.code() == SchedStatus::Code::kError) return verdict.WithPlugin(filter->name());
    if (!verdict.ok()) {
      entry.reason = ReasonId(verdict.reason());
      return {};
    }
  }
  const size_t plugins = score_.size();
  int64_t sum = 0;
  for (const ActiveScore& active : active_scores_) {
    int64_t score = 0;
    SchedStatus s = score_[active.index]->Score(cycle, task, node, &score);
    if (!s.ok()) return s.WithPlugin(score_[active.index]->name());
    // A skipped scorer's raw score stays 0: skips are fixed per class (cluster_count.h).
    if (any_normalize_) cache.raw[index * plugins + active.index] = score;
    sum += active.weight * score;
  }
  *total = sum;
  return {};
}

SchedStatus Framework::Refresh(ClassCache& cache, const CycleState& cycle,
                               const ClusterState& state, const TaskRequest& task) {
  const auto n = static_cast<size_t>(state.size());
  if (cache.nodes.size() < n) {
    cache.nodes.resize(n);
    if (any_normalize_) cache.raw.resize(n * score_.size(), 0);
    cache.totals.Resize(static_cast<int32_t>(n));
  }
  SchedStatus error;
  int64_t total = 0;
  // Re-evaluates node `index` when `force` or its version moved; true when it was evaluated.
  auto evaluate = [&](int32_t index, bool force) {
    if (!error.ok() || (!force && cache.nodes[index].version == state.version(index))) {
      return false;
    }
    error = Evaluate(cache, cycle, state, task, index, &total);
    return error.ok();
  };
  const bool everything =
      !cache.complete || state.change_count() - cache.seen_changes >= kMaxChangesBetweenRefreshes;
  const std::optional<std::span<const int32_t>> changes =
      everything ? std::nullopt : state.ChangesSince(cache.seen_changes);
  // Per-cluster trees follow node by node when they are current, else are rebuilt below.
  const bool per_cluster = clusters_.several();
  const bool cluster_trees_current =
      per_cluster && changes.has_value() && cache.cluster_layout == clusters_.layout;
  if (changes.has_value()) {
    // The changed nodes' entries of a class not used for a while are cold: fetch a few ahead.
    constexpr size_t kPrefetchDistance = 8;
    for (size_t j = 0; j < changes->size(); ++j) {
      if (j + kPrefetchDistance < changes->size()) {
        const int32_t ahead = (*changes)[j + kPrefetchDistance];
        __builtin_prefetch(&cache.nodes[ahead]);
        cache.totals.PrefetchLeaf(ahead);
      }
      const int32_t index = (*changes)[j];
      if (evaluate(index, false)) {
        cache.totals.Set(index, total);
        if (cluster_trees_current) {
          cache.cluster_totals[clusters_.of_node[index]].Set(clusters_.position[index], total);
        }
      }
    }
  } else {
    // Every node (first use, or the log does not reach back far enough): set the leaves, then
    // rebuild the tree once.
    for (int32_t i = 0; i < state.size(); ++i) {
      if (evaluate(i, everything)) cache.totals.SetLeaf(i, total);
    }
    cache.totals.Rebuild();
  }
  if (!error.ok()) {
    cache.complete = false;  // a node may be half-evaluated: start over next time
    return error;
  }
  if (per_cluster && !cluster_trees_current) RebuildClusterTotals(cache);
  cache.complete = true;
  cache.seen_changes = state.change_count();
  return {};
}

int32_t Framework::SelectNode(ClassCache& cache, const CycleState& cycle, const TaskRequest& task,
                              int32_t cluster) {
  if (!any_normalize_) {
    if (cluster != kAnyCluster) {
      const MaxTree& tree = cache.cluster_totals[cluster];
      if (tree.Best() == kInfeasible) return -1;
      return clusters_.members[cluster][tree.KthBest(PickTie(tree.BestCount()))];
    }
    if (cache.totals.Best() == kInfeasible) return -1;
    return cache.totals.KthBest(PickTie(cache.totals.BestCount()));
  }
  // Normalization looks at every feasible node's scores together: rebuild the totals.
  std::vector<int32_t> feasible;
  auto consider = [&](int32_t i) {
    if (cache.totals.Leaf(i) != kInfeasible) feasible.push_back(i);
  };
  if (cluster != kAnyCluster) {
    for (int32_t i : clusters_.members[cluster]) consider(i);
  } else {
    const auto n = static_cast<int32_t>(cache.nodes.size());
    for (int32_t i = 0; i < n; ++i) consider(i);
  }
  if (feasible.empty()) return -1;
  std::vector<int64_t> totals(feasible.size(), 0);
  std::vector<int64_t> scores(feasible.size());
  const size_t plugins = score_.size();
  for (size_t p = 0; p < plugins; ++p) {
    if (skipped_scores_[p]) continue;
    for (size_t k = 0; k < feasible.size(); ++k) scores[k] = cache.raw[feasible[k] * plugins + p];
    if (score_[p]->HasNormalizeScore()) score_[p]->NormalizeScore(cycle, task, scores);
    for (size_t k = 0; k < feasible.size(); ++k) totals[k] += score_weights_[p] * scores[k];
  }
  int64_t best = kInfeasible;
  int64_t ties = 0;
  for (int64_t t : totals) {
    if (t > best) {
      best = t;
      ties = 0;
    }
    ties += (t == best);
  }
  int64_t pick = PickTie(ties);
  for (size_t k = 0; k < totals.size(); ++k) {
    if (totals[k] == best && pick-- == 0) return feasible[k];
  }
  return -1;
}

int64_t Framework::PickTie(int64_t ties) {
  if (tie_break_ == TieBreak::kFirst || ties <= 1) return 0;
  // Uniformly at random, as kube-scheduler's selectHost does.
  return static_cast<int64_t>(handle_.rng->Uniform(static_cast<uint64_t>(ties)));
}

const Diagnosis& Framework::Diagnose(ClassCache& cache, const ClusterState& state,
                                     int32_t cluster) const {
  std::optional<ClassCache::DiagnosisMemo>& memo = cache.diagnosis_memo;
  if (memo.has_value() && memo->evaluations == cache.evaluations && memo->cluster == cluster &&
      memo->nodes == state.size() && memo->layout == clusters_.layout) {
    return memo->diagnosis;
  }
  memo = ClassCache::DiagnosisMemo{.evaluations = cache.evaluations,
                                   .cluster = cluster,
                                   .nodes = state.size(),
                                   .layout = clusters_.layout};
  Diagnosis& diagnosis = memo->diagnosis;
  // From the cached verdicts alone (the nodes themselves are not read), counted per reason and
  // added in the order the reasons are first met.
  int64_t total = 0;
  std::vector<int64_t> per_reason(reasons_.size() + 1, 0);
  std::vector<uint16_t> met;
  auto count = [&](int32_t i) {
    const uint16_t reason = cache.nodes[i].reason;
    if (reason == kRemoved) return;
    ++total;
    if (reason != kFeasible && per_reason[reason]++ == 0) met.push_back(reason);
  };
  if (cluster != kAnyCluster) {
    for (int32_t i : clusters_.members[cluster]) count(i);
  } else {
    for (int32_t i = 0; i < state.size(); ++i) count(i);
  }
  for (uint16_t reason : met) diagnosis.Add(reasons_[reason - 1], per_reason[reason]);
  diagnosis.set_total_nodes(total);
  if (total == 0) diagnosis.Add(&kNoNodes, 0);
  return diagnosis;
}

SchedStatus Framework::RunPreFilter(CycleState& cycle, const TaskRequest& task) {
  skipped_filters_.assign(filter_.size(), false);
  skipped_scores_.assign(score_.size(), false);
  if (clusters_.several()) {
    cycle.Write(kClusterCountKey, ClusterCount{static_cast<int32_t>(clusters_.names.size())});
  }
  for (PreFilterPlugin* plugin : pre_filter_) {
    SchedStatus s = plugin->PreFilter(cycle, task);
    if (s.code() == SchedStatus::Code::kSkip) {
      for (size_t f = 0; f < filter_.size(); ++f) {
        if (static_cast<Plugin*>(filter_[f]) == static_cast<Plugin*>(plugin)) {
          skipped_filters_[f] = true;
        }
      }
      continue;
    }
    if (!s.ok()) return s.WithPlugin(plugin->name());
  }
  for (PreScorePlugin* plugin : pre_score_) {
    SchedStatus s = plugin->PreScore(cycle, task);
    if (s.code() == SchedStatus::Code::kSkip) {
      for (size_t p = 0; p < score_.size(); ++p) {
        if (static_cast<Plugin*>(score_[p]) == static_cast<Plugin*>(plugin)) {
          skipped_scores_[p] = true;
        }
      }
      continue;
    }
    if (!s.ok()) return s.WithPlugin(plugin->name());
  }
  // The filters and scorers that run for this attempt, so that the per-node loops skip nothing.
  active_filters_.clear();
  for (size_t f = 0; f < filter_.size(); ++f) {
    if (!skipped_filters_[f]) active_filters_.push_back(filter_[f]);
  }
  active_scores_.clear();
  for (size_t p = 0; p < score_.size(); ++p) {
    if (!skipped_scores_[p]) active_scores_.push_back({p, score_weights_[p]});
  }
  return {};
}

TaskAttempt Framework::PlaceTask(const ClusterState& state, const TaskRequest& task,
                                 MatchMode mode) {
  if (mode == MatchMode::kSatisfiability) return PlaceOnEmptyNodes(state, task);
  return PlaceTaskIn(state, task, kAnyCluster);
}

TaskAttempt Framework::PlaceTaskIn(const ClusterState& state, const TaskRequest& task,
                                   int32_t cluster) {
  IndexClusters(state);
  TaskAttempt attempt;
  CycleState cycle;
  attempt.status = RunPreFilter(cycle, task);
  if (!attempt.status.ok()) return attempt;

  ClassCache& cache = CacheFor(state, task);
  attempt.status = Refresh(cache, cycle, state, task);
  if (!attempt.status.ok()) return attempt;

  const int32_t chosen = SelectNode(cache, cycle, task, cluster);
  if (chosen < 0) {
    attempt.diagnosis = Diagnose(cache, state, cluster);
    const std::vector<ReasonCount> counts = attempt.diagnosis.Counts();
    attempt.status = SchedStatus::Unschedulable(counts.empty() ? kNoNodes : *counts.front().reason);
    for (PostFilterPlugin* plugin : post_filter_) {
      if (plugin->PostFilter(cycle, task, attempt.diagnosis).ok()) {
        attempt.nominated = true;
        break;
      }
    }
    return attempt;
  }

  const Node& node = state.node(chosen);
  Placement placement;
  placement.node_index = chosen;
  placement.node = node.name;
  for (size_t r = 0; r < reserve_.size(); ++r) {
    SchedStatus s = reserve_[r]->Reserve(cycle, task, node, &placement);
    if (!s.ok()) {
      for (size_t u = 0; u <= r; ++u) reserve_[u]->Unreserve(cycle, task, placement);
      attempt.status = s.WithPlugin(reserve_[r]->name());
      return attempt;
    }
  }
  if (task.NeedsGpu() && placement.gpus.empty()) {
    placement.gpus = SelectTightestDevices(node, task);
    placement.gpu_milli = task.gpu_milli;
    placement.gpu_memory = task.gpu_memory;
  }
  if (static_cast<int32_t>(placement.gpus.size()) != task.gpu_count) {
    UnreserveAll(cycle, task, placement);
    attempt.status = SchedStatus::Error(
        fmt::format("node {} passed every filter but its devices do not fit the task", node.name));
    return attempt;
  }
  attempt.placement = std::move(placement);
  return attempt;
}

TaskAttempt Framework::PlaceOnEmptyNodes(const ClusterState& state, const TaskRequest& task) {
  IndexClusters(state);
  TaskAttempt attempt;
  CycleState cycle;
  attempt.status = RunPreFilter(cycle, task);
  if (!attempt.status.ok()) return attempt;
  int64_t total = 0;
  for (const Node& original : state.nodes()) {
    if (original.removed) continue;
    ++total;
    const Node empty = EmptiedNode(original);
    const Reason* rejection = nullptr;
    for (size_t f = 0; f < active_filters_.size() && rejection == nullptr; ++f) {
      SchedStatus verdict = active_filters_[f]->Filter(cycle, task, empty);
      if (verdict.code() == SchedStatus::Code::kError) {
        attempt.status = verdict.WithPlugin(active_filters_[f]->name());
        return attempt;
      }
      if (!verdict.ok()) rejection = verdict.reason();
    }
    if (rejection == nullptr) {
      Placement placement;
      placement.node_index = &original - state.nodes().data();
      placement.node = original.name;
      attempt.placement = std::move(placement);
    } else {
      attempt.diagnosis.Add(rejection);
    }
  }
  attempt.diagnosis.set_total_nodes(total);
  if (!attempt.placement.has_value()) {
    const std::vector<ReasonCount> counts = attempt.diagnosis.Counts();
    attempt.status = SchedStatus::Unresolvable(counts.empty() ? kNoNodes : *counts.front().reason);
  }
  return attempt;
}

void Framework::UnreserveAll(CycleState& cycle, const TaskRequest& task,
                             const Placement& placement) {
  for (ReservePlugin* plugin : reserve_) plugin->Unreserve(cycle, task, placement);
}

SchedStatus Framework::Permit(const GangProgress& progress) {
  for (PermitPlugin* plugin : permit_) {
    SchedStatus s = plugin->Permit(progress);
    if (!s.ok()) return s.WithPlugin(plugin->name());
  }
  return {};
}

GangAttempt Framework::ScheduleGang(ClusterState& state, std::string_view job,
                                    std::span<const TaskRequest> tasks, int32_t min_available,
                                    MatchMode mode, std::string_view cluster) {
  IndexClusters(state);
  if (!cluster.empty()) {
    const auto it = std::find(clusters_.names.begin(), clusters_.names.end(), cluster);
    if (it == clusters_.names.end()) {
      GangAttempt none;
      none.status = SchedStatus::Unschedulable(kNoNodes);
      none.failed_task = 0;
      none.diagnosis.Add(&kNoNodes, 0);
      return none;
    }
    const int32_t id =
        clusters_.several() ? static_cast<int32_t>(it - clusters_.names.begin()) : kAnyCluster;
    return GangIn(state, job, tasks, min_available, mode, id);
  }
  // One task: its best node decides its cluster.
  if (!clusters_.several() || tasks.size() == 1) {
    return GangIn(state, job, tasks, min_available, mode, kAnyCluster);
  }
  return ScheduleAcrossClusters(state, job, tasks, min_available, mode);
}

std::vector<int32_t> Framework::ClusterOrder(const ClusterState& state, const TaskRequest& first,
                                             Diagnosis& skipped) {
  CycleState cycle;
  if (!RunPreFilter(cycle, first).ok()) return {};
  ClassCache& cache = CacheFor(state, first);
  if (!Refresh(cache, cycle, state, first).ok()) return {};
  std::vector<std::pair<int64_t, int32_t>> ranked;  // (best total, cluster)
  for (size_t c = 0; c < clusters_.names.size(); ++c) {
    const auto id = static_cast<int32_t>(c);
    const int64_t best = cache.cluster_totals[c].Best();
    if (best == kInfeasible) {
      skipped.Merge(Diagnose(cache, state, id));
      continue;
    }
    ranked.emplace_back(best, id);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int32_t> order;
  for (size_t begin = 0; begin < ranked.size();) {
    size_t end = begin;
    while (end < ranked.size() && ranked[end].first == ranked[begin].first) ++end;
    // Equal clusters are drawn one by one as equal nodes are (PickTie), else kept in order.
    std::vector<int32_t> tied;
    for (size_t k = begin; k < end; ++k) tied.push_back(ranked[k].second);
    while (!tied.empty()) {
      const auto pick = static_cast<size_t>(PickTie(static_cast<int64_t>(tied.size())));
      order.push_back(tied[pick]);
      tied.erase(tied.begin() + static_cast<ptrdiff_t>(pick));
    }
    begin = end;
  }
  return order;
}

GangAttempt Framework::ScheduleAcrossClusters(ClusterState& state, std::string_view job,
                                              std::span<const TaskRequest> tasks,
                                              int32_t min_available, MatchMode mode) {
  Diagnosis merged;
  const std::vector<int32_t> order = ClusterOrder(state, tasks.front(), merged);
  // No cluster takes the first task (or it failed before any node was looked at): the plain
  // attempt gives the usual answer.
  if (order.empty()) return GangIn(state, job, tasks, min_available, mode, kAnyCluster);
  GangAttempt closest;
  int32_t closest_fits = -1;
  std::vector<std::pair<int32_t, int32_t>> progress;  // (fits, cluster) per cluster tried
  for (int32_t cluster : order) {
    int32_t fits = 0;
    GangAttempt attempt = GangIn(state, job, tasks, min_available, mode, cluster, &fits);
    if (attempt.status.ok() || attempt.status.code() == SchedStatus::Code::kError) return attempt;
    progress.emplace_back(fits, cluster);
    merged.Merge(attempt.diagnosis);
    if (fits > closest_fits) {
      closest_fits = fits;
      closest = std::move(attempt);
    }
  }
  closest.diagnosis = std::move(merged);
  int64_t across = 0;
  for (const auto& [n, cluster] : progress) across += n;
  if (across >= min_available) {
    std::stable_sort(progress.begin(), progress.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    constexpr size_t kNamed = 4;
    std::vector<std::string> parts;
    for (size_t k = 0; k < progress.size() && k < kNamed; ++k) {
      parts.push_back(fmt::format("{} {}", clusters_.names[progress[k].second], progress[k].first));
    }
    if (progress.size() > kNamed) parts.push_back(fmt::format("{} more", progress.size() - kNamed));
    closest.note = fmt::format(
        "the gang fits no single cluster (a gang runs within one cluster; gang tasks that fit: "
        "{} of {})",
        fmt::join(parts, ", "), min_available);
  }
  return closest;
}

GangAttempt Framework::GangIn(ClusterState& state, std::string_view job,
                              std::span<const TaskRequest> tasks, int32_t min_available,
                              MatchMode mode, int32_t cluster, int32_t* fits) {
  GangAttempt gang;
  std::vector<int32_t> placed_tasks;  // task index of each entry of gang.placements
  auto rollback = [&] {
    for (size_t k = gang.placements.size(); k-- > 0;) {
      const TaskRequest& task = tasks[placed_tasks[k]];
      state.Forget(task, gang.placements[k]);
      CycleState cycle;
      UnreserveAll(cycle, task, gang.placements[k]);
    }
    gang.placements.clear();
  };

  const auto n = static_cast<int32_t>(tasks.size());
  bool permitted = false;
  std::optional<SchedStatus> refused;   // the permit plugins' verdict once they gave up
  std::set<std::string> failed_classes;  // with `fits`: equivalence classes that fit no node
  for (int32_t i = 0; i < n; ++i) {
    if (refused.has_value() && failed_classes.contains(tasks[i].EquivalenceKey())) continue;
    TaskAttempt attempt = PlaceTaskIn(state, tasks[i], cluster);
    if (attempt.status.code() == SchedStatus::Code::kError) {
      rollback();
      gang.status = attempt.status;
      return gang;
    }
    if (attempt.placement.has_value()) {
      absl::Status assumed = state.Assume(tasks[i], *attempt.placement);
      if (!assumed.ok()) {
        rollback();
        gang.status = SchedStatus::Error(std::string(assumed.message()));
        return gang;
      }
      gang.placements.push_back(*std::move(attempt.placement));
      placed_tasks.push_back(i);
    } else {
      if (fits != nullptr) failed_classes.insert(tasks[i].EquivalenceKey());
      if (gang.failed_task < 0) {
        gang.failed_task = i;
        gang.diagnosis = std::move(attempt.diagnosis);
        gang.status = attempt.status;
      }
    }
    if (permitted || refused.has_value()) continue;
    const GangProgress progress{min_available, static_cast<int32_t>(gang.placements.size()),
                                n - i - 1};
    SchedStatus verdict = Permit(progress);
    if (verdict.ok()) {
      permitted = true;
    } else if (verdict.code() != SchedStatus::Code::kWait || progress.remaining == 0) {
      refused = std::move(verdict);
      if (fits == nullptr) break;
    }
  }
  if (fits != nullptr) *fits = static_cast<int32_t>(gang.placements.size());
  if (!permitted) {
    rollback();
    if (gang.failed_task < 0 && refused.has_value()) gang.status = *refused;
    return gang;
  }
  gang.status = {};
  if (mode == MatchMode::kWithoutAllocating) {
    std::vector<Placement> placements = gang.placements;
    rollback();
    gang.placements = std::move(placements);
    gang.task_indices = std::move(placed_tasks);
    return gang;
  }
  for (size_t k = 0; k < gang.placements.size(); ++k) {
    SchedStatus bound = SchedStatus::Skip();
    for (BindPlugin* plugin : bind_) {
      bound = plugin->Bind(job, placed_tasks[k], gang.placements[k]);
      if (bound.code() != SchedStatus::Code::kSkip) {
        bound.WithPlugin(plugin->name());
        break;
      }
    }
    if (!bound.ok()) {
      rollback();
      gang.status = bound.code() == SchedStatus::Code::kSkip
                        ? SchedStatus::Error("no bind plugin accepted the task")
                        : bound;
      return gang;
    }
  }
  gang.task_indices = std::move(placed_tasks);
  return gang;
}

}  // namespace tessera

// The jobs section of a scenario file: jobs, task groups, tolerations and cluster affinity
// (the Parser of scenario_parser_impl.h).
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/name_range.h"
#include "sim/scenario/scenario_parser_impl.h"
#include "tessera/common/status_macros.h"

namespace tessera::sim::scenario_parsing {

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

}  // namespace tessera::sim::scenario_parsing

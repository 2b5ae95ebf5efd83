#include "spec/job_json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "core/duration.h"
#include "core/quantity.h"
#include "nlohmann/json.hpp"

namespace tessera::spec {
namespace {

using Json = nlohmann::ordered_json;

Json GpuQuantity(const TaskRequest& r) {
  if (r.gpu_milli == kMilliGpuPerDevice) return r.gpu_count;
  return static_cast<double>(r.TotalGpuMilli()) / kMilliGpuPerDevice;  // a share: 0.5
}

// Extended resources counted in bytes read better in binary notation.
bool IsByteResource(std::string_view name) {
  return name == "ephemeral-storage" || name.starts_with("hugepages-");
}

Json Resources(const TaskRequest& r) {
  Json out = Json::object();
  if (r.cpu != 0) out["cpu"] = FormatCpuMillis(r.cpu);
  if (r.memory != 0) out["memory"] = FormatBytes(r.memory);
  if (r.gpu_count != 0) out["gpu"] = GpuQuantity(r);
  if (r.gpu_memory != 0) out["gpuMemory"] = FormatBytes(r.gpu_memory);
  if (!r.gpu_models.empty()) out["gpuModel"] = r.gpu_models;
  for (const auto& [name, value] : r.extended) {
    if (IsByteResource(name)) {
      out[name] = FormatBytes(value);
    } else {
      out[name] = value;
    }
  }
  return out;
}

Json Tolerations(const std::vector<Toleration>& tolerations) {
  Json out = Json::array();
  for (const Toleration& t : tolerations) {
    Json item = Json::object();
    if (!t.key.empty()) item["key"] = t.key;
    item["operator"] = t.exists ? "Exists" : "Equal";
    if (!t.exists) item["value"] = t.value;
    if (t.effect.has_value()) item["effect"] = TaintEffectName(*t.effect);
    out.push_back(std::move(item));
  }
  return out;
}

bool SamePlacement(const TaskRequest& a, const TaskRequest& b) {
  if (a.node_selector != b.node_selector || a.tolerations.size() != b.tolerations.size()) {
    return false;
  }
  for (size_t i = 0; i < a.tolerations.size(); ++i) {
    const Toleration& x = a.tolerations[i];
    const Toleration& y = b.tolerations[i];
    if (x.key != y.key || x.value != y.value || x.exists != y.exists || x.effect != y.effect) {
      return false;
    }
  }
  return true;
}

void AddPlacement(const TaskRequest& r, Json& out) {
  if (!r.node_selector.empty()) out["nodeSelector"] = StringMapToJson(r.node_selector);
  if (!r.tolerations.empty()) out["tolerations"] = Tolerations(r.tolerations);
}

Json Task(const TaskGroup& group, bool with_placement) {
  Json out = Json::object();
  out["name"] = group.name;
  out["replicas"] = group.replicas;
  out["resources"] = Resources(group.request);
  if (!group.command.empty()) out["command"] = group.command;
  if (!group.args.empty()) out["args"] = group.args;
  if (!group.env.empty()) {
    Json env = Json::object();
    for (const auto& [name, value] : group.env) env[name] = value;
    out["env"] = std::move(env);
  }
  if (!group.working_dir.empty()) out["workingDir"] = group.working_dir;
  if (with_placement) AddPlacement(group.request, out);
  return out;
}

Json Requirements(const std::vector<LabelRequirement>& requirements) {
  Json out = Json::array();
  for (const LabelRequirement& r : requirements) {
    Json item = {{"key", r.key}, {"operator", LabelOperatorName(r.op)}};
    if (!r.values.empty()) item["values"] = r.values;
    out.push_back(std::move(item));
  }
  return out;
}

Json Affinity(const ClusterAffinityTerms& terms) {
  Json out = Json::object();
  if (!terms.required.empty()) out["required"] = Requirements(terms.required);
  if (!terms.preferred.empty()) {
    Json preferred = Json::array();
    for (const PreferredLabelTerm& term : terms.preferred) {
      preferred.push_back({{"weight", term.weight}, {"match", Requirements(term.match)}});
    }
    out["preferred"] = std::move(preferred);
  }
  return out;
}

Json Spec(const JobSpec& spec) {
  Json out = Json::object();
  out["queue"] = spec.queue;
  out["priority"] = spec.priority;
  if (spec.min_available.has_value()) out["minAvailable"] = *spec.min_available;
  if (spec.time_limit.has_value()) out["timeLimit"] = FormatDuration(*spec.time_limit);
  if (spec.duration.has_value()) out["duration"] = FormatDuration(*spec.duration);
  out["preemptible"] = spec.preemptible;
  out["minRuntime"] = FormatDuration(spec.min_runtime);
  out["terminationGracePeriod"] = FormatDuration(spec.termination_grace);
  out["restartPolicy"] = {
      {"onFailure", spec.restart_policy.on_failure == RestartAction::kRequeue ? "requeue" : "fail"},
      {"maxRestarts", spec.restart_policy.max_restarts}};
  bool shared_placement = true;
  for (const TaskGroup& group : spec.tasks) {
    shared_placement = shared_placement && SamePlacement(group.request, spec.tasks[0].request);
  }
  if (shared_placement && !spec.tasks.empty()) AddPlacement(spec.tasks[0].request, out);
  if (!spec.cluster_selector.empty())
    out["clusterSelector"] = StringMapToJson(spec.cluster_selector);
  if (!spec.cluster_affinity.empty()) out["clusterAffinity"] = Affinity(spec.cluster_affinity);
  if (!spec.cluster_anti_affinity.empty()) {
    out["clusterAntiAffinity"] = Affinity(spec.cluster_anti_affinity);
  }
  Json tasks = Json::array();
  for (const TaskGroup& group : spec.tasks) tasks.push_back(Task(group, !shared_placement));
  out["tasks"] = std::move(tasks);
  return out;
}

Json Status(const JobStatus& status) {
  Json out = Json::object();
  out["phase"] = JobPhaseName(status.phase);
  out["reason"] = status.reason;
  out["message"] = status.message;
  out["cluster"] = status.cluster;
  Json tasks = Json::array();
  for (const TaskStatus& task : status.tasks) {
    Json item = Json::object();
    item["name"] = task.name;
    item["node"] = task.node;
    item["devices"] = task.devices;
    item["phase"] = TaskPhaseName(task.phase);
    item["exitCode"] = task.exit_code.has_value() ? Json(*task.exit_code) : Json(nullptr);
    tasks.push_back(std::move(item));
  }
  out["tasks"] = std::move(tasks);
  const auto time = [&](std::string_view key, const std::optional<TimePoint>& t) {
    if (t.has_value()) out[std::string(key)] = FormatRfc3339(*t);
  };
  time("submitTime", status.submit_time);
  time("startTime", status.start_time);
  time("endTime", status.end_time);
  time("estimatedStartTime", status.estimated_start_time);
  if (status.preemptions > 0) out["preemptions"] = status.preemptions;
  return out;
}

}  // namespace

std::string FormatRfc3339(TimePoint t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ",
                          absl::FromUnixMillis(t.time_since_epoch().count()), absl::UTCTimeZone());
}

Json StringMapToJson(const std::map<std::string, std::string, std::less<>>& map) {
  Json out = Json::object();
  for (const auto& [key, value] : map) out[key] = value;
  return out;
}

nlohmann::ordered_json JobDocumentToJson(const JobDocument& job) {
  Json out = Json::object();
  out["apiVersion"] = "tessera/v1";
  out["kind"] = "Job";
  Json metadata = Json::object();
  if (!job.metadata.id.empty()) metadata["id"] = job.metadata.id;
  if (!job.spec.name.empty()) metadata["name"] = job.spec.name;
  if (!job.spec.labels.empty()) metadata["labels"] = StringMapToJson(job.spec.labels);
  if (!job.metadata.request_id.empty()) metadata["requestId"] = job.metadata.request_id;
  out["metadata"] = std::move(metadata);
  out["spec"] = Spec(job.spec);
  if (job.status.has_value()) out["status"] = Status(*job.status);
  return out;
}

}  // namespace tessera::spec

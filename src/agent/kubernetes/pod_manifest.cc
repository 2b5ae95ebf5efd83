#include "agent/kubernetes/pod_manifest.h"

#include "agent/kubernetes/node_conversion.h"
#include "agent/kubernetes/pod_names.h"
#include "agent/kubernetes/rendezvous.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

// Whole seconds, rounded up; 0 for a negative duration.
int64_t CeilSeconds(Duration d) {
  return d.count() <= 0 ? 0 : d.count() / 1000 + (d.count() % 1000 != 0 ? 1 : 0);
}

Json StringList(const std::vector<std::string>& values) {
  Json list = Json::array();
  for (const std::string& value : values) list.push_back(value);
  return list;
}

Json Tolerations(const std::vector<Taint>& taints) {
  Json list = Json::array();
  for (const Taint& taint : taints) {
    list.push_back({{"key", taint.key},
                    {"operator", "Equal"},
                    {"value", taint.value},
                    {"effect", std::string(TaintEffectName(taint.effect))}});
  }
  return list;
}

// `rendezvous` (a multi-task job's variables) overrides the task's own env.
Json Container(const TaskLaunchSpec& spec, const std::string& image,
               const EnvMap& rendezvous) {
  EnvMap merged = spec.env;
  for (const auto& [name, value] : rendezvous) merged[name] = value;
  merged.erase("TESSERA_TASK_ID");
  Json env = Json::array();
  for (const auto& [name, value] : merged) env.push_back({{"name", name}, {"value", value}});
  env.push_back({{"name", "TESSERA_TASK_ID"}, {"value", spec.launch_id}});
  Json container = {{"name", std::string(kContainerName)}, {"image", image}, {"env", env}};
  if (!spec.command.empty()) container["command"] = StringList(spec.command);
  if (!spec.args.empty()) container["args"] = StringList(spec.args);
  if (!spec.working_dir.empty()) container["workingDir"] = spec.working_dir;
  Json requests = Json::object();
  if (spec.cpu > 0) requests["cpu"] = fmt::format("{}m", spec.cpu);
  if (spec.memory > 0) requests["memory"] = std::to_string(spec.memory);
  if (!requests.empty()) container["resources"]["requests"] = std::move(requests);
  if (!spec.placement.gpus.empty()) {
    container["resources"]["limits"] = {
        {std::string(kGpuResource), std::to_string(spec.placement.gpus.size())}};
  }
  return container;
}

}  // namespace

absl::StatusOr<Json> BuildPod(const TaskLaunchSpec& spec, const PodTemplate& pod_template,
                              const std::vector<Taint>& node_taints) {
  if (spec.placement.node.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("task {}: placement.node: not set", spec.launch_id));
  }
  std::string image = pod_template.default_image;
  if (auto it = spec.env.find(pod_template.image_env_key); it != spec.env.end()) {
    image = it->second;
  }
  if (image.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("task {}: no container image: set env {} in the job's task spec or the agent's "
                    "--kube-image",
                    spec.launch_id, pod_template.image_env_key));
  }
  EnvMap rendezvous;
  if (IsMultiTask(spec)) {
    absl::StatusOr<EnvMap> env = RendezvousEnv(spec);
    if (!env.ok()) return env.status();
    rendezvous = *std::move(env);
  }
  Json labels = {{std::string(kLaunchIdKey), LabelValue(spec.launch_id)},
                 {std::string(kJobKey), LabelValue(spec.job_id)},
                 {std::string(kTaskKey), LabelValue(spec.task_name)},
                 {std::string(kManagedByLabel), "tessera"}};
  if (!pod_template.cluster.empty()) {
    labels[std::string(kClusterLabel)] = LabelValue(pod_template.cluster);
  }
  Json pod_spec = {{"nodeName", spec.placement.node},
                   {"restartPolicy", "Never"},
                   {"terminationGracePeriodSeconds", CeilSeconds(spec.termination_grace)},
                   {"containers", Json::array({Container(spec, image, rendezvous)})}};
  if (IsMultiTask(spec)) {
    pod_spec["hostname"] = HostnameForRank(spec.job_id, spec.rank);
    pod_spec["subdomain"] = ServiceNameForJob(spec.job_id);
  }
  if (spec.time_limit.has_value()) {
    pod_spec["activeDeadlineSeconds"] = std::max<int64_t>(1, CeilSeconds(*spec.time_limit));
  }
  if (!node_taints.empty()) pod_spec["tolerations"] = Tolerations(node_taints);
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", PodNameForLaunch(spec.launch_id)},
                {"namespace", pod_template.kube_namespace},
                {"labels", labels},
                {"annotations",
                 {{std::string(kLaunchIdKey), spec.launch_id},
                  {std::string(kJobKey), spec.job_id},
                  {std::string(kTaskKey), spec.task_name}}}}},
              {"spec", pod_spec}};
}

}  // namespace tessera::agent::k8s

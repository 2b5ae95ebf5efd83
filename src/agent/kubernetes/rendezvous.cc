#include "agent/kubernetes/rendezvous.h"

#include "agent/kubernetes/pod_names.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {

bool IsMultiTask(const TaskLaunchSpec& spec) { return spec.peer_nodes.size() > 1; }

std::string RendezvousAddress(std::string_view job_id, int32_t rank) {
  return fmt::format("{}.{}", HostnameForRank(job_id, rank), ServiceNameForJob(job_id));
}

absl::StatusOr<EnvMap> RendezvousEnv(const TaskLaunchSpec& spec) {
  if (!IsMultiTask(spec)) {
    return absl::InvalidArgumentError(
        fmt::format("task {}: peer_nodes: a rendezvous needs more than one task ({} given)",
                    spec.launch_id, spec.peer_nodes.size()));
  }
  const auto size = static_cast<int32_t>(spec.peer_nodes.size());
  if (spec.rank < 0 || spec.rank >= size) {
    return absl::InvalidArgumentError(
        fmt::format("task {}: rank: {} is outside 0..{}", spec.launch_id, spec.rank, size - 1));
  }
  DistributedTask task{.index = spec.rank};
  task.tasks.reserve(spec.peer_nodes.size());
  for (int32_t rank = 0; rank < size; ++rank) {
    task.tasks.push_back(
        {.address = RendezvousAddress(spec.job_id, rank), .port = kRendezvousPort});
  }
  return DistributedEnv(task);
}

Json BuildRendezvousService(std::string_view job_id, const PodTemplate& pod_template) {
  Json selector = {{std::string(kJobKey), LabelValue(job_id)}};
  Json labels = {{std::string(kManagedByLabel), "tessera"},
                 {std::string(kJobKey), LabelValue(job_id)}};
  if (!pod_template.cluster.empty()) {
    selector[std::string(kClusterLabel)] = LabelValue(pod_template.cluster);
    labels[std::string(kClusterLabel)] = LabelValue(pod_template.cluster);
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata",
               {{"name", ServiceNameForJob(job_id)},
                {"namespace", pod_template.kube_namespace},
                {"labels", labels},
                {"annotations", {{std::string(kJobKey), std::string(job_id)}}}}},
              {"spec",
               {{"clusterIP", "None"},
                {"publishNotReadyAddresses", true},
                {"selector", selector},
                {"ports", Json::array({{{"name", std::string(kRendezvousPortName)},
                                        {"port", kRendezvousPort},
                                        {"targetPort", kRendezvousPort},
                                        {"protocol", "TCP"}}})}}}};
}

std::string RendezvousServiceSelector(std::string_view cluster) {
  return fmt::format("{}=tessera,{},{}={}", kManagedByLabel, kJobKey, kClusterLabel,
                     LabelValue(cluster));
}

}  // namespace tessera::agent::k8s

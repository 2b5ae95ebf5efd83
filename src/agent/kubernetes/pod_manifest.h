// BuildPod: the Kubernetes Pod that runs one Tessera task.
//
//   TaskLaunchSpec              Pod
//   launch_id                   metadata.name (PodNameForLaunch), label tessera.io/launch-id
//                               (LabelValue) and annotation tessera.io/launch-id (exact)
//   job_id, task_name           labels tessera.io/job, tessera.io/task (LabelValue) and
//                               annotations of the same names (exact)
//   placement.node              spec.nodeName: the pod is bound directly, Kubernetes' scheduler
//                               does not place it again
//   placement.gpus              containers[0].resources.limits["nvidia.com/gpu"] = the number of
//                               devices (the device plugin picks which physical devices; a
//                               sharing placement asks for one whole device)
//   cpu, memory                 containers[0].resources.requests.cpu ("<millicores>m") and
//                               .memory (bytes), when not 0: the kubelet admits the pod by them
//   command, args               containers[0].command, .args (empty: the image's entrypoint)
//   env                         containers[0].env, plus TESSERA_TASK_ID = launch_id
//   peer_nodes, rank            a multi-task job only (rendezvous.h): spec.hostname =
//   (more than one peer)        HostnameForRank(job, rank), spec.subdomain = the job's
//                               Service (ServiceNameForJob), and the env of RendezvousEnv
//                               (MASTER_ADDR, ..., TF_CONFIG), which overrides the task's own
//   working_dir                 containers[0].workingDir
//   time_limit                  spec.activeDeadlineSeconds (whole seconds, rounded up)
//   termination_grace           spec.terminationGracePeriodSeconds (rounded up)
//   (the node's taints)         spec.tolerations: one per taint of the target node, so the
//                               kubelet admits the pod where Tessera's scheduler placed it
// restartPolicy is Never: a failed task is Tessera's to retry. The image is env[image_env_key]
// when the task sets it, else `default_image`. The container is named "task".
//
// Errors: InvalidArgument when no image is known, the spec has no node, or a multi-task
// launch's rank is outside its peer_nodes. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/kubernetes/internal/json_fields.h"
#include "core/node.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent::k8s {

inline constexpr std::string_view kLaunchIdKey = "tessera.io/launch-id";
inline constexpr std::string_view kJobKey = "tessera.io/job";
inline constexpr std::string_view kTaskKey = "tessera.io/task";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kContainerName = "task";
inline constexpr std::string_view kDefaultImageEnv = "TESSERA_IMAGE";

struct PodTemplate {
  std::string kube_namespace;
  std::string default_image;
  std::string image_env_key = std::string(kDefaultImageEnv);
  std::string cluster;  // label tessera.io/cluster
};

absl::StatusOr<Json> BuildPod(const TaskLaunchSpec& spec, const PodTemplate& pod_template,
                              const std::vector<Taint>& node_taints);

}  // namespace tessera::agent::k8s

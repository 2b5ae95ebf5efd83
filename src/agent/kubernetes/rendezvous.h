// Rendezvous: how the tasks of a multi-task (gang) job find each other on Kubernetes, the way
// Volcano's svc plugin and JobSet do it. A pod's address is only known once it runs, so the
// tasks meet through DNS names fixed in advance instead:
//   - one headless Service per job (BuildRendezvousService): named ServiceNameForJob(job),
//     clusterIP None, publishNotReadyAddresses true (a name resolves as soon as the pod has an
//     IP, before it is Ready), selecting the job's pods of this cluster (labels tessera.io/job
//     and tessera.io/cluster), one TCP port kRendezvousPort named "rendezvous";
//   - each pod of the job gets spec.hostname = HostnameForRank(job, rank) and
//     spec.subdomain = the Service's name, so the cluster DNS answers
//     "<hostname>.<service>" (through the pod's search path <namespace>.svc.<cluster domain>)
//     and "<hostname>.<service>.<namespace>.svc" with the pod's IP.
// RendezvousEnv gives a task the environment DistributedEnv (agent/local/distributed_env.h)
// derives from the endpoints "<hostname>.<service>":kRendezvousPort of every rank: MASTER_ADDR
// (rank 0's name), MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK and
// TF_CONFIG. Every pod has its own IP, so the port is the same for every rank, LOCAL_RANK is 0,
// LOCAL_WORLD_SIZE 1 and GROUP_RANK the rank.
//
// A launch is multi-task when its spec carries peer_nodes (more than one). Single-task launches
// get none of this. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/kubernetes/internal/json_fields.h"
#include "agent/kubernetes/pod_manifest.h"
#include "agent/local/distributed_env.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent::k8s {

inline constexpr int32_t kRendezvousPort = 29500;
inline constexpr std::string_view kRendezvousPortName = "rendezvous";

// True when the launch belongs to a job of more than one task.
bool IsMultiTask(const TaskLaunchSpec& spec);

// "<hostname>.<service>": the DNS name of rank `rank` of the job, within the namespace.
std::string RendezvousAddress(std::string_view job_id, int32_t rank);

// The distributed-training environment of a multi-task launch (see above).
// Errors: InvalidArgument naming `rank` when it is outside 0..peer_nodes.size()-1, or
// `peer_nodes` when the launch is not multi-task.
absl::StatusOr<EnvMap> RendezvousEnv(const TaskLaunchSpec& spec);

// The job's headless Service in pod_template.kube_namespace, labelled
// app.kubernetes.io/managed-by=tessera, tessera.io/job and tessera.io/cluster (when the
// template names a cluster), with the exact job id in annotation tessera.io/job.
Json BuildRendezvousService(std::string_view job_id, const PodTemplate& pod_template);

// The label selector of the rendezvous Services of `cluster` (Recover lists them).
std::string RendezvousServiceSelector(std::string_view cluster);

}  // namespace tessera::agent::k8s

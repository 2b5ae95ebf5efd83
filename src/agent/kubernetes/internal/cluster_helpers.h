// Helpers KubernetesCluster's files share (kubernetes_cluster.cc, kubernetes_cluster_worker.cc):
// which API failures are worth a retry, and the TaskEnd of a pod that could not be created.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent::k8s {

// Unavailable and DeadlineExceeded: the API server or the network, worth another attempt.
inline bool IsTransient(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

// The end of a task whose pod could not be created: Failed, reason "StartFailed".
inline TaskEnd StartFailed(std::string_view launch_id, std::string_view message, TimePoint now) {
  return {.launch_id = std::string(launch_id),
          .phase = TaskPhase::kFailed,
          .reason = "StartFailed",
          .message = std::string(message),
          .time = now};
}

}  // namespace tessera::agent::k8s

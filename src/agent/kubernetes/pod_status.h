// PodObservation: what a Tessera pod's object says about its task, and the TaskEnd it implies.
//
//   Pod                                              task
//   status.phase Pending                             not started yet
//   status.phase Running                             started (OnTaskStarted)
//   status.phase Succeeded                           Succeeded, exit code 0
//   status.phase Failed, status.reason               Failed "TimeLimitExceeded"
//     DeadlineExceeded (activeDeadlineSeconds)
//   status.phase Failed, container terminated        Failed with its exitCode: reason "Error";
//                                                    "Killed" for OOMKilled; "StartFailed" for
//                                                    StartError / ContainerCannotRun
//   status.phase Failed, no container ran            Failed "StartFailed" (admission refused:
//     (status.reason OutOfnvidia.com/gpu, ...)       status.reason and message say why);
//                                                    "Killed" when the reason is Evicted
//   Pending, container waiting InvalidImageName or   Failed "StartFailed" (no retry can help)
//     ErrImageNeverPull
//   any terminal phase after Tessera cancelled it    Cancelled
//   deleted before it ended                          Cancelled when Tessera cancelled it, else
//                                                    Failed "Lost"
//   status.phase Unknown                             still running (the node lost contact)
// The task's container is the one named "task", else the first one. Times are the pod's own
// (RFC 3339): the container's startedAt / finishedAt, else status.startTime.
//
// Errors: InvalidArgument naming the field of a malformed pod. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/kubernetes/internal/json_fields.h"
#include "tessera/cluster/cluster.h"

namespace tessera::agent::k8s {

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct PodObservation {
  std::string name;
  std::string launch_id;  // annotation tessera.io/launch-id, else the label; "" if neither
  std::string resource_version;
  PodPhase phase = PodPhase::kPending;
  bool deleting = false;  // metadata.deletionTimestamp is set
  bool ran = false;       // the task's container started
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> finished_at;
  std::optional<int32_t> exit_code;
  std::string reason;             // status.reason
  std::string message;            // status.message
  std::string container_reason;   // terminated or waiting reason
  std::string container_message;  // terminated or waiting message
};

absl::StatusOr<PodObservation> ObservePod(const Json& pod);

bool IsTerminal(PodPhase phase);

// The task's end as `pod` shows it; nullopt while the task runs or waits to start.
// `cancelled`: Tessera asked for the pod's deletion. `now` stamps an end with no time of its own.
std::optional<TaskEnd> EndOfPod(const PodObservation& pod, bool cancelled, TimePoint now);

// The end of a task whose pod is gone without having shown an end.
TaskEnd EndOfVanishedPod(std::string_view launch_id, bool cancelled, TimePoint now);

// "2024-05-01T12:00:00Z" (fractions and offsets allowed); nullopt when malformed.
std::optional<TimePoint> ParseRfc3339(std::string_view text);

}  // namespace tessera::agent::k8s

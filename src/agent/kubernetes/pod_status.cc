#include "agent/kubernetes/pod_status.h"

#include <limits>

#include "absl/time/time.h"
#include "agent/kubernetes/pod_manifest.h"
#include "fmt/format.h"

namespace tessera::agent::k8s {
namespace {

const Json& EmptyObject() {
  static const Json* const kEmpty = new Json(Json::object());
  return *kEmpty;
}

// Member `key` as an object: the empty object when missing or null, an error when another type.
absl::StatusOr<const Json*> ObjectMember(const Json& object, std::string_view key,
                                         std::string_view path) {
  const Json* value = Member(object, key);
  if (value == nullptr || value->is_null()) return &EmptyObject();
  if (!value->is_object()) {
    return absl::InvalidArgumentError(fmt::format("{}.{}: must be a map", path, key));
  }
  return value;
}

absl::StatusOr<PodPhase> Phase(const std::string& text, std::string_view path) {
  if (text.empty() || text == "Pending") return PodPhase::kPending;
  if (text == "Running") return PodPhase::kRunning;
  if (text == "Succeeded") return PodPhase::kSucceeded;
  if (text == "Failed") return PodPhase::kFailed;
  if (text == "Unknown") return PodPhase::kUnknown;
  return absl::InvalidArgumentError(
      fmt::format("{}.status.phase: unknown phase '{}'", path, text.substr(0, 64)));
}

absl::StatusOr<std::optional<TimePoint>> TimeMember(const Json& object, std::string_view key,
                                                    std::string_view path) {
  absl::StatusOr<std::optional<std::string>> text = StringMember(object, key, path);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::optional<TimePoint>();
  std::optional<TimePoint> time = ParseRfc3339(**text);
  if (!time.has_value()) {
    return absl::InvalidArgumentError(fmt::format("{}.{}: not an RFC 3339 time", path, key));
  }
  return time;
}

// The task's container status: the one named "task", else the first; nullptr when none.
absl::StatusOr<const Json*> TaskContainer(const Json& status, std::string_view path) {
  const Json* list = Member(status, "containerStatuses");
  if (list == nullptr || list->is_null()) return nullptr;
  if (!list->is_array()) {
    return absl::InvalidArgumentError(
        fmt::format("{}.status.containerStatuses: must be a list", path));
  }
  const Json* first = nullptr;
  for (const Json& entry : *list) {
    if (!entry.is_object()) continue;
    if (first == nullptr) first = &entry;
    const Json* name = Member(entry, "name");
    if (name != nullptr && name->is_string() &&
        name->get_ref<const std::string&>() == kContainerName) {
      return &entry;
    }
  }
  return first;
}

absl::Status ReadContainer(const Json& container, std::string_view path, PodObservation& pod) {
  absl::StatusOr<const Json*> state = ObjectMember(container, "state", path);
  if (!state.ok()) return state.status();
  absl::StatusOr<const Json*> running = ObjectMember(**state, "running", path);
  if (!running.ok()) return running.status();
  absl::StatusOr<const Json*> terminated = ObjectMember(**state, "terminated", path);
  if (!terminated.ok()) return terminated.status();
  absl::StatusOr<const Json*> waiting = ObjectMember(**state, "waiting", path);
  if (!waiting.ok()) return waiting.status();
  if (Member(**state, "running") != nullptr) {
    pod.ran = true;
    absl::StatusOr<std::optional<TimePoint>> started = TimeMember(**running, "startedAt", path);
    if (!started.ok()) return started.status();
    if (started->has_value()) pod.started_at = *started;
  }
  const Json* detail = *waiting;
  if (Member(**state, "terminated") != nullptr) {
    detail = *terminated;
    absl::StatusOr<std::optional<int64_t>> code = IntMember(**terminated, "exitCode", path);
    if (!code.ok()) return code.status();
    if (code->has_value() && **code >= std::numeric_limits<int32_t>::min() &&
        **code <= std::numeric_limits<int32_t>::max()) {
      pod.exit_code = static_cast<int32_t>(**code);
    }
    absl::StatusOr<std::optional<TimePoint>> started = TimeMember(**terminated, "startedAt", path);
    if (!started.ok()) return started.status();
    absl::StatusOr<std::optional<TimePoint>> finished =
        TimeMember(**terminated, "finishedAt", path);
    if (!finished.ok()) return finished.status();
    if (started->has_value()) pod.started_at = *started;
    if (finished->has_value()) pod.finished_at = *finished;
  }
  absl::StatusOr<std::string> reason = StringOr(*detail, "reason", path);
  if (!reason.ok()) return reason.status();
  absl::StatusOr<std::string> message = StringOr(*detail, "message", path);
  if (!message.ok()) return message.status();
  pod.container_reason = *reason;
  pod.container_message = *message;
  if (detail == *terminated) {
    pod.ran = *reason != "StartError" && *reason != "ContainerCannotRun";
  }
  return absl::OkStatus();
}

absl::StatusOr<PodObservation> Observe(const Json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("pod: not a JSON object");
  const Json* metadata = Member(object, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    return absl::InvalidArgumentError("pod: metadata: missing or not a map");
  }
  PodObservation pod;
  absl::StatusOr<std::string> name = StringOr(*metadata, "name", "pod: metadata");
  if (!name.ok()) return name.status();
  if (name->empty()) return absl::InvalidArgumentError("pod: metadata.name: missing");
  pod.name = *name;
  const std::string path = fmt::format("pod \"{}\"", name->substr(0, 253));
  absl::StatusOr<const Json*> annotations =
      ObjectMember(*metadata, "annotations", path + ".metadata");
  if (!annotations.ok()) return annotations.status();
  absl::StatusOr<const Json*> labels = ObjectMember(*metadata, "labels", path + ".metadata");
  if (!labels.ok()) return labels.status();
  for (const Json* map : {*annotations, *labels}) {
    absl::StatusOr<std::string> id = StringOr(*map, kLaunchIdKey, path + ".metadata");
    if (!id.ok()) return id.status();
    if (!id->empty()) {
      pod.launch_id = *id;
      break;
    }
  }
  absl::StatusOr<std::string> rv = StringOr(*metadata, "resourceVersion", path + ".metadata");
  if (!rv.ok()) return rv.status();
  pod.resource_version = *rv;
  pod.deleting = Member(*metadata, "deletionTimestamp") != nullptr &&
                 !(*metadata)["deletionTimestamp"].is_null();

  absl::StatusOr<const Json*> status = ObjectMember(object, "status", path);
  if (!status.ok()) return status.status();
  const std::string status_path = path + ".status";
  absl::StatusOr<std::string> phase = StringOr(**status, "phase", status_path);
  if (!phase.ok()) return phase.status();
  absl::StatusOr<PodPhase> parsed_phase = Phase(*phase, path);
  if (!parsed_phase.ok()) return parsed_phase.status();
  pod.phase = *parsed_phase;
  absl::StatusOr<std::string> reason = StringOr(**status, "reason", status_path);
  if (!reason.ok()) return reason.status();
  absl::StatusOr<std::string> message = StringOr(**status, "message", status_path);
  if (!message.ok()) return message.status();
  pod.reason = *reason;
  pod.message = *message;
  absl::StatusOr<std::optional<TimePoint>> start_time =
      TimeMember(**status, "startTime", status_path);
  if (!start_time.ok()) return start_time.status();
  absl::StatusOr<const Json*> container = TaskContainer(**status, path);
  if (!container.ok()) return container.status();
  if (*container != nullptr) {
    if (absl::Status read =
            ReadContainer(**container, status_path + ".containerStatuses[task]", pod);
        !read.ok()) {
      return read;
    }
  }
  if (pod.phase == PodPhase::kRunning) pod.ran = true;
  if (!pod.started_at.has_value() && pod.ran) pod.started_at = *start_time;
  return pod;
}

std::string Join(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return fmt::format("{}: {}", a, b);
}

TaskEnd FailedEnd(const PodObservation& pod, TimePoint time) {
  TaskEnd end{.launch_id = pod.launch_id,
                      .phase = TaskPhase::kFailed,
                      .exit_code = pod.exit_code,
                      .time = time};
  if (pod.reason == "DeadlineExceeded") {
    end.reason = "TimeLimitExceeded";
    end.message = Join(pod.reason, pod.message);
  } else if (pod.exit_code.has_value()) {
    if (pod.container_reason == "OOMKilled") {
      end.reason = "Killed";
    } else if (!pod.ran) {
      end.reason = "StartFailed";
    } else {
      end.reason = "Error";
    }
    end.message = Join(pod.container_reason, pod.container_message);
  } else {
    end.reason = pod.reason == "Evicted" ? "Killed" : (pod.ran ? "Error" : "StartFailed");
    end.message = Join(pod.reason, pod.message);
  }
  return end;
}

}  // namespace

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &time, &error)) return std::nullopt;
  const int64_t millis = absl::ToUnixMillis(time);
  return TimePoint(Duration(millis));
}

absl::StatusOr<PodObservation> ObservePod(const Json& pod) {
  try {
    return Observe(pod);
  } catch (const Json::exception& e) {  // a bug guard: the reads above do not throw
    return absl::InvalidArgumentError(fmt::format("pod: {}", e.what()));
  }
}

bool IsTerminal(PodPhase phase) {
  return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed;
}

std::optional<TaskEnd> EndOfPod(const PodObservation& pod, bool cancelled, TimePoint now) {
  const TimePoint time = pod.finished_at.value_or(now);
  if (IsTerminal(pod.phase) && cancelled) {
    return TaskEnd{.launch_id = pod.launch_id,
                           .phase = TaskPhase::kCancelled,
                           .exit_code = pod.exit_code,
                           .message = "cancelled",
                           .time = time};
  }
  if (pod.phase == PodPhase::kSucceeded) {
    return TaskEnd{.launch_id = pod.launch_id,
                           .phase = TaskPhase::kSucceeded,
                           .exit_code = pod.exit_code.value_or(0),
                           .time = time};
  }
  if (pod.phase == PodPhase::kFailed) return FailedEnd(pod, time);
  if (pod.phase == PodPhase::kPending && !cancelled &&
      (pod.container_reason == "InvalidImageName" || pod.container_reason == "ErrImageNeverPull")) {
    return TaskEnd{.launch_id = pod.launch_id,
                           .phase = TaskPhase::kFailed,
                           .reason = "StartFailed",
                           .message = Join(pod.container_reason, pod.container_message),
                           .time = now};
  }
  return std::nullopt;
}

TaskEnd EndOfVanishedPod(std::string_view launch_id, bool cancelled, TimePoint now) {
  if (cancelled) {
    return {.launch_id = std::string(launch_id),
            .phase = TaskPhase::kCancelled,
            .message = "cancelled",
            .time = now};
  }
  return {.launch_id = std::string(launch_id),
          .phase = TaskPhase::kFailed,
          .reason = "Lost",
          .message = "the task's pod was deleted outside Tessera",
          .time = now};
}

}  // namespace tessera::agent::k8s

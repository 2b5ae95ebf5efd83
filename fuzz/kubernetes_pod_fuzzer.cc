// Feeds arbitrary bytes to the Kubernetes backend's reading of pod objects from the API
// server: a PodList answer or a watch line, each object through ObservePod and EndOfPod.
// Checks: no crash or undefined behaviour; rejections are InvalidArgument naming the pod or
// the part, with a bounded message; an observed pod has a name; EndOfPod gives no end while
// the pod runs, gives an end for every ended pod (Cancelled when Tessera cancelled it,
// Succeeded or Failed otherwise, Failed ends with a reason), and carries the pod's launch id.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/kubernetes/pod_status.h"
#include "agent/kubernetes/watch_event.h"
#include "fuzz_check.h"

namespace tessera::agent::k8s {
namespace {

using ::tessera::fuzz::Require;

constexpr size_t kMaxMessage = 1200;
const TimePoint kNow = TimePoint(std::chrono::seconds(1'700'000'000));

void CheckError(const absl::Status& status, std::string_view input) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "error is InvalidArgument", input);
  const std::string message(status.message());
  Require(message.starts_with("pod") || message.starts_with("watch event"),
          "error names the pod or the part", input, message);
  Require(message.size() <= kMaxMessage, "error message is bounded", input, message);
}

void CheckPod(const Json& object, std::string_view input) {
  absl::StatusOr<PodObservation> pod = ObservePod(object);
  if (!pod.ok()) return CheckError(pod.status(), input);
  Require(!pod->name.empty(), "an observed pod has a name", input);
  for (bool cancelled : {false, true}) {
    std::optional<TaskEnd> end = EndOfPod(*pod, cancelled, kNow);
    if (pod->phase == PodPhase::kRunning || pod->phase == PodPhase::kUnknown) {
      Require(!end.has_value(), "a running pod has no end", input);
      continue;
    }
    if (IsTerminal(pod->phase)) Require(end.has_value(), "an ended pod has an end", input);
    if (!end.has_value()) continue;
    Require(end->launch_id == pod->launch_id, "the end carries the launch id", input);
    if (cancelled && IsTerminal(pod->phase)) {
      Require(end->phase == TaskPhase::kCancelled, "a cancelled pod ends Cancelled", input);
    } else if (end->phase == TaskPhase::kFailed) {
      Require(!end->reason.empty(), "a failure has a reason", input);
    } else {
      Require(end->phase == TaskPhase::kSucceeded && pod->phase == PodPhase::kSucceeded,
              "only a Succeeded pod succeeds", input);
    }
  }
}

}  // namespace
}  // namespace tessera::agent::k8s

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::agent::k8s;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ObjectList> list = ParseObjectList(input, "pods");
  if (list.ok()) {
    for (const Json& item : list->items) CheckPod(item, input);
  }
  absl::StatusOr<WatchEvent> event = ParseWatchEvent(input);
  if (event.ok()) CheckPod(event->object, input);
  return 0;
}

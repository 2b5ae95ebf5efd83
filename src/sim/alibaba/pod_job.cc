#include "sim/alibaba/pod_job.h"

#include <algorithm>
#include <chrono>

namespace tessera::sim::alibaba {

std::optional<int64_t> PodRunSeconds(const TraceTask& pod) {
  if (!pod.deletion_time) return std::nullopt;
  const std::optional<int64_t> start = pod.scheduled_time ? pod.scheduled_time : pod.creation_time;
  if (!start) return std::nullopt;
  return std::max<int64_t>(0, *pod.deletion_time - *start);
}

PodJobMapping PodJobSpec(const TraceTask& pod) {
  PodJobMapping out;
  const std::optional<int64_t> run = PodRunSeconds(pod);
  if (!run) {
    out.skip_reason = "unknown run time";
    return out;
  }
  JobSpec spec;
  spec.duration = std::chrono::seconds(*run);
  TaskGroup group;
  group.name = kPodTaskGroup;
  group.replicas = 1;
  group.request = pod.request;
  spec.tasks.push_back(std::move(group));
  spec.min_available = 1;
  out.spec = std::move(spec);
  return out;
}

}  // namespace tessera::sim::alibaba

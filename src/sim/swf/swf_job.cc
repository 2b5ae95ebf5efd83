#include "sim/swf/swf_job.h"

#include <chrono>

#include "fmt/format.h"

namespace tessera::sim::swf {
namespace {

constexpr int64_t kBytesPerKb = 1024;

std::string SkipReason(const SwfJob& job) {
  if (job.submit_time < 0) return "submit time unknown";
  if (job.run_time <= 0) return "run time <= 0 or unknown";
  const std::optional<int64_t> procs = SwfJobProcessors(job);
  if (!procs) return "processors unknown";
  if (*procs > kMaxTasksPerJob) {
    return fmt::format("more than {} processors (tasks per job)", kMaxTasksPerJob);
  }
  if (job.requested_memory > kMaxSwfMemoryKb) return "requested memory too large";
  return "";
}

}  // namespace

std::optional<int64_t> SwfJobProcessors(const SwfJob& job) {
  if (job.requested_processors > 0) return job.requested_processors;
  if (job.allocated_processors > 0) return job.allocated_processors;
  return std::nullopt;
}

SwfJobMapping SwfJobSpec(const SwfJob& job) {
  SwfJobMapping out;
  out.skip_reason = SkipReason(job);
  if (!out.skip_reason.empty()) return out;
  const auto procs = static_cast<int32_t>(*SwfJobProcessors(job));
  const Duration run = std::chrono::seconds(job.run_time);
  out.time_limit_raised = job.requested_time != kSwfUnknown && job.requested_time < job.run_time;
  JobSpec spec;
  spec.duration = run;
  spec.time_limit =
      job.requested_time >= job.run_time ? Duration(std::chrono::seconds(job.requested_time)) : run;
  TaskGroup group;
  group.name = kSwfTaskGroup;
  group.replicas = procs;
  group.request.cpu = kSwfMilliPerCpu;
  if (job.requested_memory > 0) group.request.memory = job.requested_memory * kBytesPerKb;
  spec.tasks.push_back(std::move(group));
  spec.min_available = procs;
  out.spec = std::move(spec);
  return out;
}

}  // namespace tessera::sim::swf

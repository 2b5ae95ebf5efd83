#include "agent/slurm/slurm_jobs.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "agent/slurm/slurm_json.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tessera/common/status_macros.h"

namespace tessera::agent {
namespace {

using nlohmann::json;

// Epoch seconds up to this bound are taken as times (year 2286); above would overflow
// milliseconds and is taken as malformed.
constexpr int64_t kMaxEpochSeconds = int64_t{1} << 33;

absl::StatusOr<std::optional<TimePoint>> Time(const json& entry, std::string_view key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> seconds, slurm_json::NonNegative(entry, key));
  if (!seconds.has_value() || *seconds == 0) return std::nullopt;
  if (*seconds > kMaxEpochSeconds) {
    return absl::InvalidArgumentError(fmt::format("{}: {} is out of range", key, *seconds));
  }
  return TimePoint(Duration(*seconds * 1000));
}

absl::StatusOr<std::string> Text(const json& entry, std::string_view key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> text, slurm_json::String(entry, key));
  return text.value_or("");
}

absl::StatusOr<SlurmJob> ParseJob(const json& entry) {
  if (!entry.is_object()) return absl::InvalidArgumentError("must be an object");
  SlurmJob job;
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> id, slurm_json::NonNegative(entry, "job_id"));
  if (!id.has_value() || *id == 0) return absl::InvalidArgumentError("job_id: missing");
  job.id = *id;
  TESSERA_ASSIGN_OR_RETURN(job.name, Text(entry, "name"));
  TESSERA_ASSIGN_OR_RETURN(job.comment, Text(entry, "comment"));
  std::string state;
  if (entry.contains("job_state") && entry["job_state"].is_array()) {
    // Later versions send the state as a list: ["RUNNING"].
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> states,
                             slurm_json::Strings(entry, "job_state"));
    if (!states.empty()) state = states.front();
  } else {
    TESSERA_ASSIGN_OR_RETURN(state, Text(entry, "job_state"));
  }
  if (state.empty()) return absl::InvalidArgumentError("job_state: missing");
  job.state = absl::AsciiStrToUpper(state);
  TESSERA_ASSIGN_OR_RETURN(job.state_reason, Text(entry, "state_reason"));
  TESSERA_ASSIGN_OR_RETURN(job.nodes, Text(entry, "nodes"));
  TESSERA_ASSIGN_OR_RETURN(job.partition, Text(entry, "partition"));
  TESSERA_ASSIGN_OR_RETURN(job.exit_code, slurm_json::NonNegative(entry, "exit_code"));
  TESSERA_ASSIGN_OR_RETURN(job.start_time, Time(entry, "start_time"));
  TESSERA_ASSIGN_OR_RETURN(job.end_time, Time(entry, "end_time"));
  return job;
}

TaskEnd Failed(std::string_view launch_id, std::string reason, std::string message) {
  return {.launch_id = std::string(launch_id),
          .phase = TaskPhase::kFailed,
          .reason = std::move(reason),
          .message = std::move(message)};
}

// An ended job that was not cancelled by Tessera: its exit status decides.
TaskEnd ByExitStatus(const SlurmJob& job, std::string_view launch_id) {
  const int64_t status = job.exit_code.value_or(0);
  const int64_t signal = status & 0x7f;
  const int64_t code = (status >> 8) & 0xff;
  if (signal != 0) {
    TaskEnd end =
        Failed(launch_id, "Killed",
               fmt::format("Slurm job {} {}: killed by signal {}", job.id, job.state, signal));
    end.exit_code = static_cast<int32_t>(128 + signal);
    return end;
  }
  if (code == 0 && job.state == "COMPLETED") {
    return {.launch_id = std::string(launch_id),
            .phase = TaskPhase::kSucceeded,
            .exit_code = 0,
            .message = fmt::format("Slurm job {} completed", job.id)};
  }
  if (code == 0 && job.state_reason == "JobLaunchFailure") {
    return Failed(launch_id, "StartFailed",
                  fmt::format("Slurm job {} could not start its batch script", job.id));
  }
  TaskEnd end = Failed(launch_id, "Error",
                               fmt::format("Slurm job {} {} with exit code {} ({})", job.id,
                                           job.state, code, job.state_reason));
  end.exit_code = static_cast<int32_t>(code);
  return end;
}

}  // namespace

absl::StatusOr<SlurmJobList> ParseSlurmJobs(std::string_view text) {
  const json reply = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object()) {
    return absl::InvalidArgumentError("slurm jobs: the reply is not a JSON object");
  }
  auto jobs = reply.find("jobs");
  if (jobs == reply.end() || !jobs->is_array()) {
    const std::string errors = slurm_json::ErrorText(reply);
    return absl::InvalidArgumentError(fmt::format("slurm jobs: the reply has no \"jobs\" list{}",
                                                  errors.empty() ? "" : ": " + errors));
  }
  SlurmJobList list;
  for (size_t i = 0; i < jobs->size(); ++i) {
    absl::StatusOr<SlurmJob> job = ParseJob((*jobs)[i]);
    if (job.ok()) {
      list.jobs.push_back(*std::move(job));
    } else {
      list.errors.push_back(
          fmt::format("slurm jobs[{}]: {}", i, std::string(job.status().message())));
    }
  }
  return list;
}

std::string LaunchIdOf(const SlurmJob& job) {
  if (!job.comment.starts_with(kCommentPrefix)) return "";
  return job.comment.substr(kCommentPrefix.size());
}

SlurmJobPhase PhaseOf(std::string_view job_state) {
  static const std::set<std::string_view> kRunning = {
      "RUNNING", "COMPLETING", "SUSPENDED", "STAGE_OUT", "SIGNALING", "RESIZING", "STOPPED"};
  static const std::set<std::string_view> kEnded = {
      "COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT",       "DEADLINE",
      "NODE_FAIL", "BOOT_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "REVOKED"};
  if (kRunning.contains(job_state)) return SlurmJobPhase::kRunning;
  if (kEnded.contains(job_state)) return SlurmJobPhase::kEnded;
  return SlurmJobPhase::kWaiting;
}

std::optional<TaskEnd> TaskEndOf(const SlurmJob& job, std::string_view launch_id,
                                         bool cancel_requested, TimePoint now) {
  if (PhaseOf(job.state) != SlurmJobPhase::kEnded) return std::nullopt;
  TaskEnd end;
  if (cancel_requested || job.state == "CANCELLED") {
    end = {.launch_id = std::string(launch_id),
           .phase = TaskPhase::kCancelled,
           .message = fmt::format("Slurm job {} {}", job.id, job.state)};
  } else if (job.state == "TIMEOUT" || job.state == "DEADLINE") {
    end = Failed(launch_id, "TimeLimitExceeded",
                 fmt::format("Slurm job {} ran past its time limit ({})", job.id, job.state));
  } else if (job.state == "NODE_FAIL" || job.state == "BOOT_FAIL") {
    end = Failed(launch_id, "Lost",
                 fmt::format("Slurm job {} {}: its node {} failed", job.id, job.state, job.nodes));
  } else if (job.state == "PREEMPTED" || job.state == "OUT_OF_MEMORY" || job.state == "REVOKED") {
    end = Failed(launch_id, "Killed", fmt::format("Slurm job {} {}", job.id, job.state));
  } else {
    end = ByExitStatus(job, launch_id);
  }
  end.time = job.end_time.value_or(now);
  return end;
}

}  // namespace tessera::agent

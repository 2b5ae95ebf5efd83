#include "agent/slurm/slurm_jobs.h"

#include <algorithm>
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

// Prefixes a field error with the object it lies in: "exit_code.return_code.number: ...".
absl::Status Within(std::string_view object, const absl::Status& status) {
  return absl::InvalidArgumentError(fmt::format("{}.{}", object, std::string(status.message())));
}

// v0.0.38 and v0.0.39 send job_state as one word; later versions as a list of the base state
// and its flags (["PENDING", "REQUEUED"]). The list is read as v0.0.38's word: the flag Slurm's
// own job_state_string() names before the base state, else the base state.
absl::StatusOr<std::string> StateOf(const json& entry) {
  std::string state;
  if (entry.contains("job_state") && entry["job_state"].is_array()) {
    static constexpr std::string_view kNamedFirst[] = {
        "COMPLETING",   "STAGE_OUT",    "CONFIGURING", "RESIZING", "REQUEUED",      "REQUEUE_FED",
        "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED",     "REVOKED",  "RESV_DEL_HOLD", "SIGNALING"};
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> words,
                             slurm_json::Strings(entry, "job_state"));
    for (std::string& word : words) word = absl::AsciiStrToUpper(word);
    for (std::string_view flag : kNamedFirst) {
      if (std::find(words.begin(), words.end(), flag) != words.end()) return std::string(flag);
    }
    if (!words.empty()) state = words.front();
  } else {
    TESSERA_ASSIGN_OR_RETURN(state, Text(entry, "job_state"));
  }
  if (state.empty()) return absl::InvalidArgumentError("job_state: missing");
  return absl::AsciiStrToUpper(state);
}

// v0.0.40's {"status": [...], "return_code": N, "signal": {"id": N, "name": ...}} as the raw wait
// status v0.0.38 sends (return code << 8 | signal); nullopt while neither is known.
absl::StatusOr<std::optional<int64_t>> VerboseExitStatus(const json& exit_code) {
  absl::StatusOr<std::optional<int64_t>> code = slurm_json::NonNegative(exit_code, "return_code");
  if (!code.ok()) return Within("exit_code", code.status());
  std::optional<int64_t> signal;
  if (exit_code.contains("signal") && !exit_code["signal"].is_null()) {
    if (!exit_code["signal"].is_object()) {
      return absl::InvalidArgumentError("exit_code.signal: must be an object");
    }
    absl::StatusOr<std::optional<int64_t>> id = slurm_json::NonNegative(exit_code["signal"], "id");
    if (!id.ok()) return Within("exit_code.signal", id.status());
    signal = *id;
  }
  if (signal.value_or(0) > 0) return *signal & 0x7f;
  if (!code->has_value()) return std::nullopt;
  return (**code & 0xff) << 8;
}

// The raw wait status: a plain number (v0.0.38), a flagged number (v0.0.39) or v0.0.40's
// verbose object.
absl::StatusOr<std::optional<int64_t>> ExitStatusOf(const json& entry) {
  auto it = entry.find("exit_code");
  if (it != entry.end() && it->is_object() &&
      (it->contains("return_code") || it->contains("signal") || it->contains("status"))) {
    return VerboseExitStatus(*it);
  }
  return slurm_json::NonNegative(entry, "exit_code");
}

absl::StatusOr<SlurmJob> ParseJob(const json& entry) {
  if (!entry.is_object()) return absl::InvalidArgumentError("must be an object");
  SlurmJob job;
  TESSERA_ASSIGN_OR_RETURN(std::optional<int64_t> id, slurm_json::NonNegative(entry, "job_id"));
  if (!id.has_value() || *id == 0) return absl::InvalidArgumentError("job_id: missing");
  job.id = *id;
  TESSERA_ASSIGN_OR_RETURN(job.name, Text(entry, "name"));
  TESSERA_ASSIGN_OR_RETURN(job.comment, Text(entry, "comment"));
  TESSERA_ASSIGN_OR_RETURN(job.state, StateOf(entry));
  TESSERA_ASSIGN_OR_RETURN(job.state_reason, Text(entry, "state_reason"));
  TESSERA_ASSIGN_OR_RETURN(job.nodes, Text(entry, "nodes"));
  TESSERA_ASSIGN_OR_RETURN(job.partition, Text(entry, "partition"));
  TESSERA_ASSIGN_OR_RETURN(job.exit_code, ExitStatusOf(entry));
  TESSERA_ASSIGN_OR_RETURN(job.start_time, Time(entry, "start_time"));
  TESSERA_ASSIGN_OR_RETURN(job.end_time, Time(entry, "end_time"));
  return job;
}

// No jobs (an empty list, or none at all), and a warning "No job changes since update_time=T"
// (see SlurmJobList::unchanged).
bool SaysUnchanged(const json& reply) {
  auto jobs = reply.find("jobs");
  auto warnings = reply.find("warnings");
  if (jobs != reply.end() && !jobs->is_null() && !(jobs->is_array() && jobs->empty())) {
    return false;
  }
  if (warnings == reply.end() || !warnings->is_array()) return false;
  for (const json& warning : *warnings) {
    absl::StatusOr<std::optional<std::string>> text = slurm_json::String(warning, "description");
    if (text.ok() && text->has_value() && (*text)->starts_with("No job changes since")) {
      return true;
    }
  }
  return false;
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
  if (SaysUnchanged(reply)) return SlurmJobList{.unchanged = true};
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

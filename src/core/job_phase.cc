#include "core/job_phase.h"

namespace tessera {

std::string_view JobPhaseName(JobPhase phase) {
  switch (phase) {
    case JobPhase::kPending:
      return "Pending";
    case JobPhase::kAdmitted:
      return "Admitted";
    case JobPhase::kRunning:
      return "Running";
    case JobPhase::kSucceeded:
      return "Succeeded";
    case JobPhase::kFailed:
      return "Failed";
    case JobPhase::kCancelled:
      return "Cancelled";
  }
  return "Pending";
}

std::string_view TaskPhaseName(TaskPhase phase) {
  switch (phase) {
    case TaskPhase::kPending:
      return "Pending";
    case TaskPhase::kRunning:
      return "Running";
    case TaskPhase::kSucceeded:
      return "Succeeded";
    case TaskPhase::kFailed:
      return "Failed";
    case TaskPhase::kCancelled:
      return "Cancelled";
  }
  return "Pending";
}

std::optional<JobPhase> ParseJobPhase(std::string_view name) {
  for (JobPhase phase : {JobPhase::kPending, JobPhase::kAdmitted, JobPhase::kRunning,
                         JobPhase::kSucceeded, JobPhase::kFailed, JobPhase::kCancelled}) {
    if (JobPhaseName(phase) == name) return phase;
  }
  return std::nullopt;
}

std::optional<TaskPhase> ParseTaskPhase(std::string_view name) {
  for (TaskPhase phase : {TaskPhase::kPending, TaskPhase::kRunning, TaskPhase::kSucceeded,
                          TaskPhase::kFailed, TaskPhase::kCancelled}) {
    if (TaskPhaseName(phase) == name) return phase;
  }
  return std::nullopt;
}

bool IsTerminal(JobPhase phase) {
  return phase == JobPhase::kSucceeded || phase == JobPhase::kFailed ||
         phase == JobPhase::kCancelled;
}

}  // namespace tessera

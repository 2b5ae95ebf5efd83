// JobPhase and TaskPhase: where a job and each of its tasks are in their lifecycle — the
// `status.phase` values of the job status contract (../shared/JOBSPEC.md).
//
//   Pending → Admitted → Running → Succeeded | Failed | Cancelled
//
// "Preempted" is an event, not a phase: a preempted job is Pending again once requeued.
// Thread-safe: values and pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace tessera {

enum class JobPhase { kPending, kAdmitted, kRunning, kSucceeded, kFailed, kCancelled };

enum class TaskPhase { kPending, kRunning, kSucceeded, kFailed, kCancelled };

// "Pending", "Admitted", ... as written in documents.
std::string_view JobPhaseName(JobPhase phase);
std::string_view TaskPhaseName(TaskPhase phase);

// The phase a name stands for (exact, case-sensitive); nullopt for any other text.
std::optional<JobPhase> ParseJobPhase(std::string_view name);
std::optional<TaskPhase> ParseTaskPhase(std::string_view name);

// Succeeded, Failed and Cancelled: the job will not run again.
bool IsTerminal(JobPhase phase);

}  // namespace tessera

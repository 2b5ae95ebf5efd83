// ExitFile: how a supervised task ended, written by tessera-task-supervisor for the executor.
//
// The supervisor (task_supervisor_main.cc) runs between the executor and the task's program so
// that the program's exit status survives a restart of the control plane: it waits for the
// program and writes one line to "<log_dir>/<task_id>.exit" (temporary file, then rename):
//   "exit N"           the program exited with status N
//   "signal N"         the program was ended by signal N
//   "exec-error E"     the program could not be executed; E is the errno value
//   "not-started"      the start gate closed without the go-ahead (the executor went away or
//                      gave up before the task's state file was written): the program never ran
// The executor reads it when a supervised task ends, whether or not it is still the
// supervisor's parent.
//
// Pure functions; thread-safe. ParseExitFile returns nullopt for text that is none of the above
// (a torn or foreign file counts as no file).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::agent {

struct ExitRecord {
  enum class Kind { kExit, kSignal, kExecError, kNotStarted };
  Kind kind = Kind::kExit;
  int value = 0;  // exit status, signal number or errno; 0 for kNotStarted
};

std::string FormatExitFile(const ExitRecord& record);
std::optional<ExitRecord> ParseExitFile(std::string_view text);

inline constexpr std::string_view kExitFileSuffix = ".exit";

}  // namespace tessera::agent

// SpawnTaskProcess: starts one task's program as the leader of a new session and process group.
//
// The child gets stdin from /dev/null, stdout and stderr appended to the given log files
// (created 0640 when missing, never truncated), the given environment, default signal
// dispositions and an empty signal mask (an agent that ignores SIGPIPE must not pass that on),
// and no other inherited file descriptor (except the start gate below). posix_spawn (vfork-based in
// glibc) is used, so it is safe to call from a multi-threaded process.
//
// The program is looked up before spawning so that failures say what is wrong: a missing or
// unusable working directory, a command not found in the task's PATH, a file that is not
// executable, a log file that cannot be opened. Those come back as a non-OK status whose message
// is the sentence for the task's StartFailed outcome. Thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/local/distributed_env.h"

namespace tessera::agent::internal {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is the command as the task wrote it
  EnvMap env;
  std::string working_dir;  // "" = the caller's working directory
  std::string stdout_path;
  std::string stderr_path;
  // When set, this program is what runs: "supervisor [--start-gate=3] EXIT_FILE PROGRAM argv..."
  // (see task_supervisor_main.cc); the task's program is still looked up and checked first.
  std::string supervisor;
  std::string exit_file;
  // With a supervisor: when >= 0, this descriptor becomes the supervisor's fd 3 and the
  // supervisor runs the program only after reading one byte from it (the start gate). The
  // caller keeps its own copy and closes it after the call.
  int start_gate_fd = -1;
};

absl::StatusOr<pid_t> SpawnTaskProcess(const SpawnRequest& request);

// The file that `command` names: itself when it holds a '/', else the first executable match in
// `path_var` (a PATH value; an empty entry means the working directory). Relative results are
// relative to `working_dir`. NotFound / PermissionDenied with a sentence otherwise.
absl::StatusOr<std::string> ResolveCommand(std::string_view command, std::string_view path_var,
                                           std::string_view working_dir);

}  // namespace tessera::agent::internal

// Process tools for the integration tests: starting a program under test with its output in a
// log file, a task's pid file, whether a process is alive, and cleaning up the task processes a
// server leaves behind.
//
// A task of the local cluster runs as the leader of its own process group (under
// tessera-task-supervisor, whose command line names the task's exit file inside the server's
// data directory), so killing the groups of every process whose command line mentions the
// data directory ends the tasks and their children. Linux only (reads /proc).
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::integration {

// Starts `args[0]` (a path) with `args`: stdin from /dev/null, stdout and stderr appended to
// `log_path` (which must exist), no other descriptor of this process inherited. The child is
// SIGKILLed when this process dies, so a test killed by a timeout leaves nothing behind. Its
// pid; Unavailable when fork fails (an exec that fails makes the child exit 127).
absl::StatusOr<pid_t> SpawnLogged(std::vector<std::string> args, const std::string& log_path);

// The pid a task wrote to `path` ("echo $$ > path"); 0 while there is none.
pid_t ReadPidFile(const std::string& path);

// Whether `pid` exists and is not a zombie.
bool ProcessAlive(pid_t pid);

// SIGKILLs the process group (and the process) of every process other than this one whose
// command line contains `text`. Returns how many processes matched.
int KillProcessesMentioning(std::string_view text);

}  // namespace tessera::integration

// Process tools for the integration tests: a task's pid file, whether a process is alive, and
// cleaning up the task processes a server leaves behind.
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

namespace tessera::integration {

// The pid a task wrote to `path` ("echo $$ > path"); 0 while there is none.
pid_t ReadPidFile(const std::string& path);

// Whether `pid` exists and is not a zombie.
bool ProcessAlive(pid_t pid);

// SIGKILLs the process group (and the process) of every process other than this one whose
// command line contains `text`. Returns how many processes matched.
int KillProcessesMentioning(std::string_view text);

}  // namespace tessera::integration

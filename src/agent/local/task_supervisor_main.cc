// tessera-task-supervisor: keeps a task's exit status for an executor that may restart.
//
//   tessera-task-supervisor EXIT_FILE PROGRAM ARGV0 [ARG...]
//
// Started by the local executor as the leader of the task's session and process group, with the
// task's working directory, environment and log files already in place. It runs PROGRAM (with
// ARGV0 as its argv[0]) as its child, in the same process group, waits for it, writes how it
// ended to EXIT_FILE (exit_file.h) and then ends the same way: the same exit status, or the same
// signal. So an executor that is still its parent sees the program's own status, and one that
// adopted the task after a restart reads EXIT_FILE.
//
// Signals: every signal Tessera sends goes to the whole group, so the program receives it
// directly. The supervisor catches the terminating ones (SIGTERM, SIGINT, SIGHUP, SIGQUIT,
// SIGUSR1, SIGUSR2) and does nothing with them, so it outlives the program long enough to record
// its end; caught (not ignored) dispositions return to their defaults in the program at exec.
// SIGKILL ends both, and then no file is written.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "agent/local/exit_file.h"

namespace {

constexpr int kCaughtSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void IgnoreForNow(int) {}

void CatchSignals() {
  struct sigaction action {};
  action.sa_handler = IgnoreForNow;
  sigemptyset(&action.sa_mask);
  for (int signal : kCaughtSignals) sigaction(signal, &action, nullptr);
}

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void Record(const std::string& path, const tessera::agent::ExitRecord& record) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return;
  const bool ok = WriteAll(fd, tessera::agent::FormatExitFile(record)) && ::fsync(fd) == 0;
  ::close(fd);
  if (ok) ::rename(tmp.c_str(), path.c_str());
}

// Ends this process the way the program ended.
[[noreturn]] void EndLike(const tessera::agent::ExitRecord& record) {
  if (record.kind == tessera::agent::ExitRecord::Kind::kSignal) {
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the program dumped core already, if it was to
    ::signal(record.value, SIG_DFL);
    ::raise(record.value);
    ::_exit(128 + record.value);  // a signal whose default is not to terminate
  }
  ::_exit(record.kind == tessera::agent::ExitRecord::Kind::kExit ? record.value : 127);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s EXIT_FILE PROGRAM ARGV0 [ARG...]\n", argv[0]);
    return 2;
  }
  const std::string exit_file = argv[1];
  CatchSignals();
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    std::perror("tessera-task-supervisor: pipe");
    return 127;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("tessera-task-supervisor: fork");
    return 127;
  }
  if (child == 0) {
    ::close(exec_pipe[0]);
    ::execv(argv[2], argv + 3);
    const int err = errno;
    (void)!::write(exec_pipe[1], &err, sizeof(err));
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  ::close(exec_pipe[0]);

  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  tessera::agent::ExitRecord record;
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    record = {.kind = tessera::agent::ExitRecord::Kind::kExecError, .value = exec_errno};
    std::fprintf(stderr, "tessera-task-supervisor: cannot execute %s: %s\n", argv[2],
                 std::strerror(exec_errno));
  } else if (WIFSIGNALED(status)) {
    record = {.kind = tessera::agent::ExitRecord::Kind::kSignal, .value = WTERMSIG(status)};
  } else {
    record = {.kind = tessera::agent::ExitRecord::Kind::kExit, .value = WEXITSTATUS(status)};
  }
  Record(exit_file, record);
  EndLike(record);
}

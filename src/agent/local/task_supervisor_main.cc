// tessera-task-supervisor: keeps a task's exit status for an executor that may restart.
//
//   tessera-task-supervisor [--start-gate=FD] EXIT_FILE PROGRAM ARGV0 [ARG...]
//
// Started by the local executor as the leader of the task's session and process group, with the
// task's working directory, environment and log files already in place. It runs PROGRAM (with
// ARGV0 as its argv[0]) as its child, in the same process group, waits for it, writes how it
// ended to EXIT_FILE (exit_file.h) and then ends the same way: the same exit status, or the same
// signal. So an executor that is still its parent sees the program's own status, and one that
// adopted the task after a restart reads EXIT_FILE.
//
// Start gate. With --start-gate=FD the supervisor first reads one byte from descriptor FD (the
// executor passes one end of a socket pair as FD 3) and closes it; only then does it start
// PROGRAM. The executor sends that byte once the task's state file is written, so a task runs
// only if a restarted executor can find it again. When FD reaches end of file instead (the
// executor died or gave up before writing the state file) or cannot be read, PROGRAM is never
// started: the supervisor writes "not-started" to EXIT_FILE and exits with status 125.
// A usage error exits with status 2 and runs nothing.
//
// Signals: every signal Tessera sends goes to the whole group, so the program receives it
// directly. The supervisor catches the terminating ones (SIGTERM, SIGINT, SIGHUP, SIGQUIT,
// SIGUSR1, SIGUSR2) and does nothing with them, so it outlives the program long enough to record
// its end (and keeps waiting at the gate); caught (not ignored) dispositions return to their
// defaults in the program at exec. SIGKILL ends both, and then no file is written.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "agent/local/exit_file.h"

namespace {

constexpr int kCaughtSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
constexpr std::string_view kStartGateFlag = "--start-gate=";
// The exit status when the start gate closed without the go-ahead.
constexpr int kNotStartedStatus = 125;

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
  if (record.kind == tessera::agent::ExitRecord::Kind::kNotStarted) ::_exit(kNotStartedStatus);
  ::_exit(record.kind == tessera::agent::ExitRecord::Kind::kExit ? record.value : 127);
}

// The descriptor named by "--start-gate=FD"; nullopt when `arg` is not that flag or FD is not a
// non-negative number.
std::optional<int> ParseStartGate(std::string_view arg) {
  if (!arg.starts_with(kStartGateFlag)) return std::nullopt;
  arg.remove_prefix(kStartGateFlag.size());
  int fd = -1;
  const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), fd);
  if (ec != std::errc() || end != arg.data() + arg.size() || fd < 0) return std::nullopt;
  return fd;
}

// Waits for the executor's go-ahead: true once one byte has been read from `fd`, false at end of
// file or on an error. Closes `fd` either way, so the program does not inherit it.
bool PassStartGate(int fd) {
  char go = 0;
  ssize_t n;
  do {
    n = ::read(fd, &go, 1);
  } while (n < 0 && errno == EINTR);  // a caught signal interrupts the wait, it does not end it
  ::close(fd);
  return n == 1;
}

[[noreturn]] void Usage(const char* self) {
  std::fprintf(stderr, "usage: %s [--start-gate=FD] EXIT_FILE PROGRAM ARGV0 [ARG...]\n", self);
  ::_exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const char* self = argv[0];
  std::optional<int> start_gate;
  if (argc > 1 && std::string_view(argv[1]).starts_with("--")) {
    start_gate = ParseStartGate(argv[1]);
    if (!start_gate.has_value()) Usage(self);
    --argc;
    ++argv;  // from here on, argv[1] is EXIT_FILE as without the flag
  }
  if (argc < 4) Usage(self);
  const std::string exit_file = argv[1];
  CatchSignals();
  if (start_gate.has_value() && !PassStartGate(*start_gate)) {
    constexpr tessera::agent::ExitRecord kNotStarted{
        .kind = tessera::agent::ExitRecord::Kind::kNotStarted};
    Record(exit_file, kNotStarted);
    EndLike(kNotStarted);
  }
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

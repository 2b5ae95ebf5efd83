#include "process_tools.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

extern char** environ;

namespace tessera::integration {
namespace {

// The state letter of /proc/PID/stat ('R', 'S', 'Z', ...); '\0' when unreadable.
char ProcState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) S ...": comm may hold spaces and parentheses; the state follows the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return '\0';
  return stat[close + 2];
}

}  // namespace

absl::StatusOr<pid_t> SpawnLogged(std::vector<std::string> args, const std::string& log_path) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // fork + exec rather than posix_spawn: the child asks for SIGKILL when the test dies. Between
  // fork and exec the child only makes async-signal-safe calls.
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return absl::UnavailableError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(log_path.c_str(), O_WRONLY | O_APPEND);
    if (in < 0 || out < 0) ::_exit(127);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::syscall(SYS_close_range, 3u, ~0u, 0u);  // the test's own sockets and files stay here
    ::execve(argv[0], argv.data(), environ);
    ::_exit(127);
  }
  return pid;
}

pid_t ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  int pid = 0;
  return (in >> pid) ? pid : 0;
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const char state = ProcState(pid);
  return state != '\0' && state != 'Z' && state != 'X';
}

int KillProcessesMentioning(std::string_view text) {
  int matched = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::strtol(name.c_str(), nullptr, 10));
    if (pid == ::getpid()) continue;
    std::ifstream in(entry.path() / "cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    if (cmdline.find(text) == std::string::npos) continue;
    ++matched;
    const pid_t group = ::getpgid(pid);
    if (group > 0 && group != ::getpgrp()) ::kill(-group, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  return matched;
}

}  // namespace tessera::integration

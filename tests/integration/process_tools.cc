#include "process_tools.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

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

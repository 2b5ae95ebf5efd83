#include "agent/local/internal/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/local/task_env.h"
#include "fmt/format.h"

namespace tessera::agent::internal {
namespace {

// The PATH execvp uses when the environment has none.
constexpr std::string_view kDefaultPath = "/bin:/usr/bin";
// Where the supervisor finds its start gate.
constexpr int kStartGateFd = 3;

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty() || (!name.empty() && name.front() == '/')) return std::string(name);
  return fmt::format("{}{}{}", dir, dir.back() == '/' ? "" : "/", name);
}

// OK when `path` is a regular file this process may execute.
absl::Status CheckExecutable(const std::string& path, std::string_view command) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        fmt::format("command \"{}\": {}: {}", command, path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::PermissionDeniedError(
        fmt::format("command \"{}\": {} is a directory", command, path));
  }
  if (::access(path.c_str(), X_OK) != 0) {
    return absl::PermissionDeniedError(fmt::format("command \"{}\": {} is not executable: {}",
                                                   command, path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status CheckWorkingDir(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        fmt::format("working directory \"{}\": {}", dir, std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        fmt::format("working directory \"{}\" is not a directory", dir));
  }
  if (::access(dir.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        fmt::format("working directory \"{}\": {}", dir, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> OpenLog(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        fmt::format("cannot open log file {}: {}", path, std::strerror(errno)));
  }
  return fd;
}

// Owns the spawn attribute objects and the log descriptors for one posix_spawn call.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
    for (int fd : fds_) ::close(fd);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  absl::Status Prepare(const SpawnRequest& request) {
    absl::StatusOr<int> out = OpenLog(request.stdout_path);
    if (!out.ok()) return out.status();
    fds_.push_back(*out);
    absl::StatusOr<int> err = OpenLog(request.stderr_path);
    if (!err.ok()) return err.status();
    fds_.push_back(*err);

    sigset_t all;
    sigset_t none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setflags(&attr_,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_adddup2(&actions_, *out, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, *err, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (!request.working_dir.empty()) {
      posix_spawn_file_actions_addchdir_np(&actions_, request.working_dir.c_str());
    }
    int first_closed = STDERR_FILENO + 1;
    if (request.start_gate_fd >= 0) {
      // A dup2 onto itself clears close-on-exec as well (POSIX; glibc >= 2.29).
      posix_spawn_file_actions_adddup2(&actions_, request.start_gate_fd, kStartGateFd);
      first_closed = kStartGateFd + 1;
    }
    posix_spawn_file_actions_addclosefrom_np(&actions_, first_closed);
    return absl::OkStatus();
  }

  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
  std::vector<int> fds_;
};

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

absl::StatusOr<std::string> ResolveCommand(std::string_view command, std::string_view path_var,
                                           std::string_view working_dir) {
  if (command.find('/') != std::string_view::npos) {
    const std::string path = JoinPath(working_dir, command);
    if (absl::Status status = CheckExecutable(path, command); !status.ok()) return status;
    return path;
  }
  absl::Status denied = absl::OkStatus();
  size_t begin = 0;
  while (begin <= path_var.size()) {
    size_t end = path_var.find(':', begin);
    if (end == std::string_view::npos) end = path_var.size();
    const std::string_view dir = path_var.substr(begin, end - begin);
    begin = end + 1;
    const std::string candidate = JoinPath(working_dir, JoinPath(dir, command));
    absl::Status status = CheckExecutable(candidate, command);
    if (status.ok()) return candidate;
    if (absl::IsPermissionDenied(status) && denied.ok()) denied = status;
  }
  if (!denied.ok()) return denied;
  return absl::NotFoundError(
      fmt::format("command \"{}\" not found in PATH \"{}\"", command, path_var));
}

namespace {

// `dir` made absolute against this process's working directory, so paths joined to it stay valid
// after the child changes into it.
std::string Absolute(const std::string& dir) {
  if (dir.empty() || dir.front() == '/') return dir;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return dir;
  return JoinPath(cwd, dir);
}

}  // namespace

absl::StatusOr<pid_t> SpawnTaskProcess(const SpawnRequest& original) {
  SpawnRequest request = original;
  request.working_dir = Absolute(original.working_dir);
  if (request.supervisor.empty()) request.start_gate_fd = -1;  // only a supervisor waits at it
  if (absl::Status status = CheckWorkingDir(request.working_dir); !status.ok()) return status;
  const auto path_entry = request.env.find("PATH");
  absl::StatusOr<std::string> program = ResolveCommand(
      request.argv.front(), path_entry != request.env.end() ? path_entry->second : kDefaultPath,
      request.working_dir);
  if (!program.ok()) return program.status();

  SpawnSetup setup;
  if (absl::Status status = setup.Prepare(request); !status.ok()) return status;
  std::vector<std::string> argv_strings = request.argv;
  std::string exec_path = *program;
  if (!request.supervisor.empty()) {
    argv_strings.insert(argv_strings.begin(), {request.exit_file, *program});
    if (request.start_gate_fd >= 0) {
      argv_strings.insert(argv_strings.begin(), fmt::format("--start-gate={}", kStartGateFd));
    }
    argv_strings.insert(argv_strings.begin(), request.supervisor);
    exec_path = request.supervisor;
  }
  std::vector<std::string> env_strings = ToEnvStrings(request.env);
  std::vector<char*> argv = CStrings(argv_strings);
  std::vector<char*> envp = CStrings(env_strings);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, exec_path.c_str(), setup.actions(), setup.attr(), argv.data(), envp.data());
  if (rc != 0) {
    return absl::FailedPreconditionError(
        fmt::format("cannot start \"{}\": {}", request.argv.front(), std::strerror(rc)));
  }
  return pid;
}

}  // namespace tessera::agent::internal

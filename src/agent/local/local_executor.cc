#include "agent/local/local_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "agent/local/exit_file.h"
#include "agent/local/internal/spawn.h"
#include "agent/local/proc_stat.h"
#include "agent/local/system_clock.h"
#include "agent/local/task_env.h"
#include "core/duration.h"
#include "fmt/format.h"

namespace tessera::agent {
namespace {

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

bool FdReadable(int fd) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

std::string SignalText(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("signal {} (SIG{})", signal, abbrev)
                           : fmt::format("signal {}", signal);
}

// How the process went down, as a phrase.
std::string HowItEnded(const std::optional<int>& exit_code, const std::optional<int>& signal) {
  if (exit_code.has_value()) return fmt::format("exited with status {}", *exit_code);
  if (signal.has_value()) return fmt::format("killed by {}", SignalText(*signal));
  return "exit status unknown: the process ended while this executor was not its parent";
}

// An exclusive, non-blocking flock on the directory's lock file. The descriptor is close-on-exec
// (and tasks get no descriptors beyond 0-2), so a task never keeps the lock after the agent dies.
absl::StatusOr<int> LockDirectory(const std::string& dir) {
  const std::string path = dir + "/.executor.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        fmt::format("log_dir: cannot open {}: {}", path, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::FailedPreconditionError(
        err == EWOULDBLOCK ? fmt::format("log_dir: {} is in use by another executor", dir)
                           : fmt::format("log_dir: cannot lock {}: {}", path, std::strerror(err)));
  }
  return fd;
}

// The outcome message of a supervised task whose start gate closed without the go-ahead.
constexpr std::string_view kNeverRan =
    "lost: the program never ran: its executor stopped before letting it start";

// The executor's side of a supervised task's start gate (see the header comment): a connected
// pair of Unix stream sockets, both ends close-on-exec. The supervisor gets one end as its fd 3
// and starts the program only after reading one byte from it. A socket pair rather than a pipe
// because send(MSG_NOSIGNAL) to a supervisor that has died fails with EPIPE, where writing to a
// pipe would raise SIGPIPE in the control plane. Destroying the gate without LetThrough() shuts
// it: the supervisor reads end of file and never starts the program.
class StartGate {
 public:
  StartGate() = default;
  ~StartGate() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  absl::Status Create() {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_) != 0) {
      return absl::ResourceExhaustedError(
          fmt::format("cannot create the start gate: {}", std::strerror(errno)));
    }
    return absl::OkStatus();
  }

  // The end the supervisor inherits; -1 when the gate was not created.
  int SupervisorEnd() const { return fds_[1]; }

  // Closes this process's copy of the supervisor's end, once the supervisor has its own.
  void ReleaseSupervisorEnd() { CloseEnd(1); }

  // Sends the go-ahead and closes the gate. An error means the supervisor is gone.
  absl::Status LetThrough() {
    const char go = 1;
    ssize_t n;
    do {
      n = ::send(fds_[0], &go, 1, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    const int err = errno;
    CloseEnd(0);
    if (n == 1) return absl::OkStatus();
    return absl::UnavailableError(std::strerror(err));
  }

  // Closes the gate without the go-ahead.
  void Shut() { CloseEnd(0); }

 private:
  void CloseEnd(int end) {
    if (fds_[end] >= 0) ::close(fds_[end]);
    fds_[end] = -1;
  }

  int fds_[2] = {-1, -1};
};

std::optional<ExitRecord> ReadExitFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParseExitFile(text.str());
}

}  // namespace

struct LocalExecutor::Task {
  TaskStateRecord record;
  int pidfd = -1;
  bool is_child = true;  // this process may waitid() for it
  Ending ending = Ending::kNone;
  std::optional<TimePoint> kill_at;  // SIGKILL to the group at this instant
  std::string abort_reason;          // set when the executor killed it right after starting it

  bool ended() const { return record.outcome.has_value(); }
};

absl::StatusOr<std::unique_ptr<LocalExecutor>> LocalExecutor::Create(LocalExecutorOptions options) {
  if (options.log_dir.empty()) return absl::InvalidArgumentError("log_dir: empty");
  std::error_code ec;
  std::filesystem::create_directories(options.log_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        fmt::format("log_dir: cannot create {}: {}", options.log_dir, ec.message()));
  }
  options.log_dir = std::filesystem::absolute(options.log_dir, ec).lexically_normal().string();
  if (!options.log_dir.empty() && options.log_dir.back() == '/') options.log_dir.pop_back();
  if (!options.base_env.has_value()) options.base_env = ProcessEnvironment();
  if (options.max_wait.count() <= 0) return absl::InvalidArgumentError("max_wait: not positive");
  if (!options.supervisor.empty() && ::access(options.supervisor.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        fmt::format("supervisor: {}: {}", options.supervisor, std::strerror(errno)));
  }
  absl::StatusOr<std::string> boot_id = ReadBootId(options.proc_root);
  if (!boot_id.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("cannot read the boot id: {}", std::string(boot_id.status().message())));
  }
  absl::StatusOr<int> lock_fd = LockDirectory(options.log_dir);
  if (!lock_fd.ok()) return lock_fd.status();
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    ::close(*lock_fd);
    return absl::ResourceExhaustedError(fmt::format("eventfd: {}", std::strerror(errno)));
  }
  return std::unique_ptr<LocalExecutor>(
      new LocalExecutor(std::move(options), *std::move(boot_id), *lock_fd, wake_fd));
}

LocalExecutor::LocalExecutor(LocalExecutorOptions options, std::string boot_id, int lock_fd,
                             int wake_fd)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : SystemClock::Get()),
      boot_id_(std::move(boot_id)),
      lock_fd_(lock_fd),
      wake_fd_(wake_fd) {
  reaper_ = std::thread([this] { ReaperLoop(); });
}

LocalExecutor::~LocalExecutor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  Wake();
  reaper_.join();
  for (auto& [id, task] : tasks_) {
    if (task->pidfd >= 0) ::close(task->pidfd);
  }
  ::close(wake_fd_);
  ::close(lock_fd_);
}

void LocalExecutor::Log(std::string_view line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "tessera local executor: " << line << "\n";
  }
}

void LocalExecutor::Wake() const {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

std::string LocalExecutor::ExitFilePath(std::string_view task_id) const {
  return fmt::format("{}/{}{}", options_.log_dir, task_id, kExitFileSuffix);
}

TaskLogs LocalExecutor::LogsFor(std::string_view task_id) const {
  return {.stdout_path = fmt::format("{}/{}.stdout.log", options_.log_dir, task_id),
          .stderr_path = fmt::format("{}/{}.stderr.log", options_.log_dir, task_id)};
}

// ---------------------------------------------------------------------------------------------
// Starting

absl::StatusOr<StartedTask> LocalExecutor::Start(const TaskLaunch& launch) {
  if (absl::Status status = ValidateTaskLaunch(launch); !status.ok()) return status;
  absl::StatusOr<EnvMap> env = TaskEnvironment(*options_.base_env, launch);
  if (!env.ok()) return env.status();
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = tasks_.find(launch.task_id); it != tasks_.end() && !it->second->ended()) {
    return absl::AlreadyExistsError(
        fmt::format("task_id: \"{}\" is already running", launch.task_id));
  }
  const TaskLogs logs = LogsFor(launch.task_id);
  auto task = std::make_unique<Task>();
  Task& t = *task;
  t.record.task_id = launch.task_id;
  t.record.boot_id = boot_id_;
  t.record.grace = launch.termination_grace;
  t.record.stdout_path = logs.stdout_path;
  t.record.stderr_path = logs.stderr_path;
  const TimePoint now = clock_.Now();
  t.record.started_at = now;
  if (launch.time_limit.has_value()) t.record.deadline = now + *launch.time_limit;
  tasks_[launch.task_id] = std::move(task);

  std::vector<std::string> argv = launch.command;
  argv.insert(argv.end(), launch.args.begin(), launch.args.end());
  const std::string exit_file = ExitFilePath(launch.task_id);
  ::unlink(exit_file.c_str());  // an earlier attempt's
  const bool gated = !options_.supervisor.empty();
  StartGate gate;
  absl::Status gate_created = gated ? gate.Create() : absl::OkStatus();
  absl::StatusOr<pid_t> pid =
      !gate_created.ok() ? gate_created
                         : internal::SpawnTaskProcess({.argv = std::move(argv),
                                                       .env = *std::move(env),
                                                       .working_dir = launch.working_dir,
                                                       .stdout_path = logs.stdout_path,
                                                       .stderr_path = logs.stderr_path,
                                                       .supervisor = options_.supervisor,
                                                       .exit_file = exit_file,
                                                       .start_gate_fd = gate.SupervisorEnd()});
  gate.ReleaseSupervisorEnd();
  if (!pid.ok()) {
    PublishLocked(t, {.task_id = launch.task_id,
                      .end = TaskEnd::kStartFailed,
                      .message = std::string(pid.status().message()),
                      .finished_at = now});
    Wake();
    return StartedTask{.task_id = launch.task_id, .pid = 0, .logs = logs};
  }
  t.record.pid = *pid;
  t.pidfd = PidfdOpen(*pid);  // -1 on kernels without pidfds: the reaper polls instead
  // The child cannot be reaped by anyone but us, so its /proc entry is there even if it exited.
  absl::StatusOr<ProcStat> stat = ReadProcStat(*pid, options_.proc_root);
  if (stat.ok()) t.record.start_ticks = stat->start_ticks;
  // A supervised program starts only once this record is on disk (the start gate), so a
  // restarted executor always finds a task that ran.
  if (absl::Status status =
          WriteTaskState(StateFilePath(options_.log_dir, t.record.task_id), t.record);
      !status.ok()) {
    // Without its state file the task could not be found again after a restart: do not run it.
    t.abort_reason =
        fmt::format("the state file could not be written: {}", std::string(status.message()));
    if (gated) {
      gate.Shut();  // the supervisor ends without starting the program
    } else {
      SignalGroupLocked(t, SIGKILL);  // direct mode: the program is already running
    }
  } else if (gated) {
    if (absl::Status go = gate.LetThrough(); !go.ok()) {
      t.abort_reason = fmt::format("the task's supervisor ended before it could start: {}",
                                   std::string(go.message()));
      SignalGroupLocked(t, SIGKILL);
    }
  }
  Wake();
  return StartedTask{.task_id = launch.task_id, .pid = *pid, .logs = logs};
}

// ---------------------------------------------------------------------------------------------
// Ending

void LocalExecutor::SignalGroupLocked(Task& task, int signal) {
  if (task.ended() || task.record.pid <= 0) return;
  // A child's pid stays ours until we reap it. A process we did not start is signalled only
  // while its pidfd says it is alive, so a recycled pid is never hit.
  if (!task.is_child && task.pidfd >= 0 && FdReadable(task.pidfd)) return;
  if (::kill(-task.record.pid, signal) != 0 && errno != ESRCH) {
    Log(fmt::format("task {}: kill({}): {}", task.record.task_id, SignalText(signal),
                    std::strerror(errno)));
  }
}

void LocalExecutor::TerminateLocked(Task& task, Duration grace, TimePoint now) {
  if (grace.count() <= 0) {
    SignalGroupLocked(task, SIGKILL);
    task.kill_at.reset();
    return;
  }
  SignalGroupLocked(task, SIGTERM);
  SignalGroupLocked(task, SIGCONT);  // a stopped process must run to act on SIGTERM
  const TimePoint kill_at = now + grace;
  if (!task.kill_at.has_value() || kill_at < *task.kill_at) task.kill_at = kill_at;
}

absl::Status LocalExecutor::Cancel(std::string_view task_id, Duration grace) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) {
    return absl::NotFoundError(fmt::format("task \"{}\" is not known", task_id));
  }
  Task& task = *it->second;
  if (task.ended()) return absl::OkStatus();
  if (task.ending == Ending::kNone) task.ending = Ending::kCancel;
  TerminateLocked(task, grace, clock_.Now());
  Wake();
  return absl::OkStatus();
}

void LocalExecutor::EnforceDeadlinesLocked(Task& task, TimePoint now) {
  if (task.ending == Ending::kNone && task.record.deadline.has_value() &&
      now >= *task.record.deadline) {
    task.ending = Ending::kTimeLimit;
    TerminateLocked(task, task.record.grace, now);
  }
  if (task.kill_at.has_value() && now >= *task.kill_at) {
    SignalGroupLocked(task, SIGKILL);
    task.kill_at.reset();
  }
}

// ---------------------------------------------------------------------------------------------
// Reaping

std::optional<TaskOutcome> LocalExecutor::CheckExitLocked(Task& task, TimePoint now) {
  const pid_t pid = task.record.pid;
  std::optional<int> exit_code;
  std::optional<int> signal;
  if (task.is_child) {
    siginfo_t info{};
    if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
      if (info.si_pid == 0) return std::nullopt;  // still running
      // The zombie still holds the pid, so the group id cannot have been recycled: clear out
      // whatever is left of the group, then reap.
      ::kill(-pid, SIGKILL);
      ::waitid(P_PID, pid, &info, WEXITED);
      if (info.si_code == CLD_EXITED) {
        exit_code = info.si_status;
      } else {
        signal = info.si_status;
      }
    } else if (errno == ECHILD) {
      task.is_child = false;  // reaped elsewhere; fall through to the check below
    } else {
      return std::nullopt;  // EINTR: look again on the next pass
    }
  }
  if (!task.is_child) {
    bool gone = false;
    if (task.pidfd >= 0) {
      gone = FdReadable(task.pidfd);
    } else {
      absl::StatusOr<ProcStat> stat = ReadProcStat(pid, options_.proc_root);
      gone = !stat.ok() || stat->start_ticks != task.record.start_ticks || stat->state == 'Z';
    }
    if (!gone) return std::nullopt;
    ::kill(-pid, SIGKILL);
  }
  // A supervisor's record is the program's own end, even when the supervisor's status is lost
  // or was changed by the group's SIGKILL.
  std::optional<ExitRecord> recorded = ReadExitFile(ExitFilePath(task.record.task_id));
  bool never_ran = false;
  if (recorded.has_value()) {
    switch (recorded->kind) {
      case ExitRecord::Kind::kExecError:
        task.abort_reason =
            fmt::format("cannot execute the task's program: {}", std::strerror(recorded->value));
        break;
      case ExitRecord::Kind::kNotStarted:
        never_ran = true;
        break;
      case ExitRecord::Kind::kExit:
        exit_code = recorded->value;
        signal.reset();
        break;
      case ExitRecord::Kind::kSignal:
        exit_code.reset();
        signal = recorded->value;
        break;
    }
  }
  TaskOutcome outcome{
      .task_id = task.record.task_id, .exit_code = exit_code, .signal = signal, .finished_at = now};
  const std::string how = HowItEnded(exit_code, signal);
  if (!task.abort_reason.empty()) {
    outcome.end = TaskEnd::kStartFailed;
    outcome.message = task.abort_reason;
    return outcome;
  }
  if (never_ran) {  // an adopted task whose previous executor died before letting it start
    outcome.exit_code.reset();
    outcome.signal.reset();
    outcome.end = TaskEnd::kLost;
    outcome.message = std::string(kNeverRan);
    return outcome;
  }
  switch (task.ending) {
    case Ending::kCancel:
      outcome.end = TaskEnd::kCancelled;
      outcome.message = fmt::format("cancelled; {}", how);
      break;
    case Ending::kTimeLimit:
      outcome.end = TaskEnd::kTimeLimitExceeded;
      outcome.message =
          fmt::format("time limit exceeded ({}); {}",
                      FormatDuration(*task.record.deadline - task.record.started_at), how);
      break;
    case Ending::kNone:
      outcome.end = exit_code == 0          ? TaskEnd::kSucceeded
                    : exit_code.has_value() ? TaskEnd::kFailed
                    : signal.has_value()    ? TaskEnd::kKilled
                                            : TaskEnd::kLost;
      outcome.message = how;
      break;
  }
  return outcome;
}

void LocalExecutor::PublishLocked(Task& task, TaskOutcome outcome) {
  task.record.outcome = outcome;
  task.kill_at.reset();
  if (task.pidfd >= 0) {
    ::close(task.pidfd);
    task.pidfd = -1;
  }
  if (absl::Status status =
          WriteTaskState(StateFilePath(options_.log_dir, task.record.task_id), task.record);
      !status.ok()) {
    Log(fmt::format("task {}: outcome not recorded: {}", task.record.task_id,
                    std::string(status.message())));
  }
  undelivered_.push_back(std::move(outcome));
  ended_cv_.notify_all();
}

void LocalExecutor::SweepLocked(TimePoint now) {
  for (auto& [id, task] : tasks_) {
    if (task->ended() || task->record.pid <= 0) continue;
    EnforceDeadlinesLocked(*task, now);
    std::optional<TaskOutcome> outcome = CheckExitLocked(*task, now);
    if (outcome.has_value()) PublishLocked(*task, *std::move(outcome));
  }
}

int LocalExecutor::PollTimeoutMsLocked(TimePoint now) const {
  Duration wait = options_.max_wait;
  for (const auto& [id, task] : tasks_) {
    if (task->ended()) continue;
    if (task->ending == Ending::kNone && task->record.deadline.has_value()) {
      wait = std::min(wait, *task->record.deadline - now);
    }
    if (task->kill_at.has_value()) wait = std::min(wait, *task->kill_at - now);
  }
  return static_cast<int>(std::max<int64_t>(wait.count(), 0));
}

void LocalExecutor::ReaperLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::vector<pollfd> fds = {{.fd = wake_fd_, .events = POLLIN, .revents = 0}};
    for (const auto& [id, task] : tasks_) {
      if (task->pidfd >= 0) fds.push_back({.fd = task->pidfd, .events = POLLIN, .revents = 0});
    }
    const int timeout_ms = undelivered_.empty() ? PollTimeoutMsLocked(clock_.Now()) : 0;
    // pidfds are closed only on this thread, so the numbers stay valid while unlocked.
    lock.unlock();
    ::poll(fds.data(), fds.size(), timeout_ms);
    uint64_t drained = 0;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &drained, sizeof(drained));
    lock.lock();
    SweepLocked(clock_.Now());
    std::vector<TaskOutcome> deliver = std::move(undelivered_);
    undelivered_.clear();
    if (deliver.empty() || !options_.on_outcome) continue;
    lock.unlock();
    for (const TaskOutcome& outcome : deliver) options_.on_outcome(outcome);
    lock.lock();
  }
}

// ---------------------------------------------------------------------------------------------
// Adoption

// The outcome of a task whose process ended while no executor ran: the supervisor's exit file
// tells how its program ended (or that its start gate closed before it ran); without one the
// task is lost.
TaskOutcome LocalExecutor::EndedWhileUnsupervised(const std::string& id,
                                                  const std::optional<ExitRecord>& recorded,
                                                  const std::string& lost) const {
  TaskOutcome outcome{.task_id = id, .end = TaskEnd::kLost, .finished_at = clock_.Now()};
  if (!recorded.has_value()) {
    outcome.message = fmt::format("lost: {}", lost);
    return outcome;
  }
  switch (recorded->kind) {
    case ExitRecord::Kind::kNotStarted:
      outcome.message = std::string(kNeverRan);
      return outcome;
    case ExitRecord::Kind::kExecError:
      outcome.end = TaskEnd::kStartFailed;
      outcome.message =
          fmt::format("cannot execute the task's program: {}", std::strerror(recorded->value));
      return outcome;
    case ExitRecord::Kind::kExit:
      outcome.exit_code = recorded->value;
      outcome.end = recorded->value == 0 ? TaskEnd::kSucceeded : TaskEnd::kFailed;
      break;
    case ExitRecord::Kind::kSignal:
      outcome.signal = recorded->value;
      outcome.end = TaskEnd::kKilled;
      break;
  }
  outcome.message = fmt::format("{} while no executor was running",
                                HowItEnded(outcome.exit_code, outcome.signal));
  return outcome;
}

AdoptedTask LocalExecutor::AdoptOneLocked(TaskStateRecord record) {
  auto task = std::make_unique<Task>();
  Task& t = *task;
  const std::string id = record.task_id;
  t.record = std::move(record);
  AdoptedTask adopted{
      .task_id = id,
      .pid = t.record.pid,
      .logs = {.stdout_path = t.record.stdout_path, .stderr_path = t.record.stderr_path}};
  tasks_[id] = std::move(task);
  if (t.record.outcome.has_value()) {
    undelivered_.push_back(*t.record.outcome);  // ended before: tell again
    return adopted;
  }
  const pid_t pid = t.record.pid;
  std::string lost;
  if (t.record.boot_id != boot_id_) {
    lost = "the machine has rebooted since the task started";
  } else if (pid <= 0) {
    lost = "no process was recorded for the task";
  } else {
    // Open the pidfd first, then compare start times: if they match, the pidfd is the task's.
    t.pidfd = PidfdOpen(pid);
    absl::StatusOr<ProcStat> stat = ReadProcStat(pid, options_.proc_root);
    if (!stat.ok()) {
      lost = fmt::format("process {} is gone", pid);
    } else if (stat->start_ticks != t.record.start_ticks) {
      lost = fmt::format("process {} is gone (the pid now belongs to another process)", pid);
    }
  }
  if (!lost.empty()) {
    const std::optional<ExitRecord> recorded = ReadExitFile(ExitFilePath(id));
    PublishLocked(t, EndedWhileUnsupervised(id, recorded, lost));
    return adopted;
  }
  siginfo_t info{};
  t.is_child = ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
  adopted.running = true;
  return adopted;
}

absl::StatusOr<AdoptReport> LocalExecutor::Adopt() {
  std::vector<std::string> files;
  {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(options_.log_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.ends_with(kStateFileSuffix)) files.push_back(entry.path().string());
    }
    if (ec) {
      return absl::UnavailableError(
          fmt::format("cannot list {}: {}", options_.log_dir, ec.message()));
    }
  }
  std::sort(files.begin(), files.end());
  AdoptReport report;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& file : files) {
    absl::StatusOr<TaskStateRecord> record = ReadTaskState(file);
    if (!record.ok()) {
      report.unreadable.push_back(record.status());
      continue;
    }
    if (tasks_.contains(record->task_id)) continue;
    if (StateFilePath(options_.log_dir, record->task_id) != file) {
      report.unreadable.push_back(absl::DataLossError(
          fmt::format("{}: records task \"{}\", not its own name", file, record->task_id)));
      continue;
    }
    report.tasks.push_back(AdoptOneLocked(*std::move(record)));
  }
  Wake();
  return report;
}

// ---------------------------------------------------------------------------------------------
// Queries

std::optional<TaskOutcome> LocalExecutor::Outcome(std::string_view task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second->record.outcome;
}

std::optional<TaskOutcome> LocalExecutor::WaitForOutcome(std::string_view task_id,
                                                         std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<TaskOutcome> outcome;
  ended_cv_.wait_for(lock, timeout, [&] {
    auto it = tasks_.find(task_id);
    if (it != tasks_.end()) outcome = it->second->record.outcome;
    return outcome.has_value();
  });
  return outcome;
}

std::vector<std::string> LocalExecutor::RunningTasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> running;
  for (const auto& [id, task] : tasks_) {
    if (!task->ended()) running.push_back(id);
  }
  return running;
}

std::optional<pid_t> LocalExecutor::Pid(std::string_view task_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second->ended()) return std::nullopt;
  return it->second->record.pid;
}

absl::Status LocalExecutor::Forget(std::string_view task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) {
    return absl::NotFoundError(fmt::format("task \"{}\" is not known", task_id));
  }
  if (!it->second->ended()) {
    return absl::FailedPreconditionError(fmt::format("task \"{}\" is running", task_id));
  }
  for (const std::string& path :
       {StateFilePath(options_.log_dir, task_id), ExitFilePath(task_id)}) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::UnavailableError(
          fmt::format("cannot delete {}: {}", path, std::strerror(errno)));
    }
  }
  tasks_.erase(it);
  return absl::OkStatus();
}

}  // namespace tessera::agent

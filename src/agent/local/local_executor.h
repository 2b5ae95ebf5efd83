// LocalExecutor: runs the tasks placed on this machine as real processes.
//
// Each task is one process group: its program is started as the leader of a new session
// (so its pid is also its process-group id) and every signal Tessera sends goes to the whole
// group, so children and grandchildren go down with it (a descendant that calls setsid() itself
// escapes; cgroups would close that gap). When the leader exits, whatever is left of its group
// gets SIGKILL: a task's processes do not outlive it.
//
// Files, in the log directory given at creation (created if missing):
//   <task_id>.stdout.log, <task_id>.stderr.log   the task's output, appended across restarts
//   <task_id>.state.json                         pid, start time, boot id, deadline, outcome
//                                                (task_state_file.h)
//   <task_id>.exit                               the program's end, from the supervisor
//                                                (exit_file.h)
// Environment and GPU visibility: task_env.h. Start-up failures: internal/spawn.h.
//
// Ending a task. Cancel(grace) sends SIGTERM to the group and SIGKILL when the grace period has
// passed (grace 0: SIGKILL at once). A task's time limit, counted from its start, does the same
// with the task's termination grace. Deadlines are read from the injected Clock; the reaper
// re-reads it at least every `max_wait`, so a ManualClock moved forward by a test takes effect
// within that bound.
//
// Outcomes (task_outcome.h) are recorded in the state file first, then published: through
// Outcome()/WaitForOutcome() and, once per task, through the `on_outcome` callback.
//
// One executor per log directory: Create takes an exclusive lock on "<log_dir>/.executor.lock"
// (released when the executor is destroyed or its process dies), so two executors never supervise
// the same tasks.
//
// Restarts. Destroying the executor leaves running tasks running. A new executor over the same
// log directory calls Adopt(): a task whose recorded process still runs (same pid, same start
// time, same boot) is supervised again, time limit included; one whose process is gone is
// reported kLost; one that had ended reports its recorded outcome again. An adopted task is
// usually no longer this process's child, so its exit status is reaped elsewhere. With a
// `supervisor` configured, tessera-task-supervisor (the group leader, the program its child)
// writes the program's end to "<task_id>.exit" and the executor reads it; without one, such a
// task is reported kLost (unless it was cancelled or timed out, which the executor saw to).
// Forget() deletes a task's state and exit files once the caller has stored its outcome.
//
// Start gate: a task runs only once its state file is written. With a `supervisor`, Start hands
// the supervisor one end of a socket pair (its fd 3, "--start-gate=3") and the supervisor waits
// for one byte on it before it starts the program. Start writes the state file (with the
// supervisor's pid) and only then sends the byte. If the control plane dies in between, the
// supervisor reads end of file, writes "not-started" to the exit file and exits without ever
// running the program; a restarted executor either finds no state file (the server then reports
// the launch lost, and nothing of it ran) or adopts a record whose outcome is kLost ("the program
// never ran"). If the state file cannot be written, Start shuts the gate instead of sending the
// byte: kStartFailed, and the program never ran. Without a supervisor (direct mode) the program
// starts at the spawn and that window stays open: a control plane killed between the spawn and
// the state-file write leaves a running orphan that no restarted executor can find, which may
// then run a second time; on a state-file failure direct mode SIGKILLs a program that may have
// begun. The server runs its tasks under the supervisor installed beside its binary.
//
// Threads. All public methods are thread-safe. One reaper thread per executor waits on pidfds
// (Linux >= 5.3; without them it polls every `max_wait`), reaps children with waitid(P_PID) —
// never waitpid(-1), so other children of the process are left alone — enforces deadlines and
// invokes `on_outcome` without holding the executor's lock: the callback may call back into the
// executor but should return quickly; it must not destroy the executor. The host process must
// not set SIGCHLD to SIG_IGN (the kernel would reap the tasks before the executor sees them).
//
// Errors. Bad requests (invalid task id, empty command, a task id already running) are
// InvalidArgument / AlreadyExists from Start; a task that cannot be started is not an error of
// Start: it gets a kStartFailed outcome with the reason.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/local/exit_file.h"
#include "agent/local/task_launch.h"
#include "agent/local/task_outcome.h"
#include "agent/local/task_state_file.h"
#include "tessera/common/clock.h"

namespace tessera::agent {

struct LocalExecutorOptions {
  std::string log_dir;
  // nullptr = SystemClock::Get().
  const Clock* clock = nullptr;
  // The environment tasks start from; nullopt = this process's environment.
  std::optional<EnvMap> base_env;
  // Called once per task when it ends, on the reaper thread.
  std::function<void(const TaskOutcome&)> on_outcome;
  // The longest the reaper sleeps before looking at the clock again.
  Duration max_wait{1000};
  // "/proc" except in tests.
  std::string proc_root = "/proc";
  // Path of tessera-task-supervisor. When set, every task runs under it, behind the start gate,
  // and the exit status of a task that ends while no executor is its parent is kept (see the
  // header comment); "" runs programs directly.
  std::string supervisor;
  // Where the executor reports what it cannot return (a state file it failed to write);
  // nullptr = one line on stderr.
  std::function<void(std::string_view)> log;
};

struct TaskLogs {
  std::string stdout_path;
  std::string stderr_path;
};

struct StartedTask {
  std::string task_id;
  pid_t pid = 0;  // 0 when the task could not be started (its outcome says why)
  TaskLogs logs;
};

// One task found by Adopt().
struct AdoptedTask {
  std::string task_id;
  pid_t pid = 0;
  TaskLogs logs;
  bool running = false;  // false: its outcome (recorded, or kLost) is being delivered
};

struct AdoptReport {
  std::vector<AdoptedTask> tasks;
  // State files that could not be read (DataLoss / I/O errors naming the file); left in place.
  std::vector<absl::Status> unreadable;
};

class LocalExecutor {
 public:
  // Creates the log directory if needed, locks it and starts the reaper thread.
  // FailedPrecondition when another executor holds the directory.
  static absl::StatusOr<std::unique_ptr<LocalExecutor>> Create(LocalExecutorOptions options);
  ~LocalExecutor();
  LocalExecutor(const LocalExecutor&) = delete;
  LocalExecutor& operator=(const LocalExecutor&) = delete;

  // Starts a task. A previous, ended task with the same id is replaced (its logs are appended
  // to). InvalidArgument for a bad TaskLaunch, AlreadyExists when the id is running.
  absl::StatusOr<StartedTask> Start(const TaskLaunch& launch);

  // SIGTERM to the task's group now, SIGKILL once `grace` has passed. Idempotent: cancelling an
  // ended task, or cancelling again, changes nothing (a shorter grace does bring SIGKILL
  // forward). NotFound for an unknown id.
  absl::Status Cancel(std::string_view task_id, Duration grace);

  // Looks for state files of tasks this executor does not know (see the header comment). Call it
  // before starting tasks: a task started under an id that a state file also names replaces
  // that record, and the process the record named is no longer supervised.
  absl::StatusOr<AdoptReport> Adopt();

  // The outcome of an ended task; nullopt while it runs or when the id is unknown.
  std::optional<TaskOutcome> Outcome(std::string_view task_id) const;
  // Waits, in real time, up to `timeout` for the task's outcome.
  std::optional<TaskOutcome> WaitForOutcome(std::string_view task_id,
                                            std::chrono::milliseconds timeout) const;
  // Ids of the tasks that have not ended, sorted.
  std::vector<std::string> RunningTasks() const;
  // The pid of a running task's process-group leader (the supervisor's, when tasks are
  // supervised); nullopt otherwise.
  std::optional<pid_t> Pid(std::string_view task_id) const;

  // Drops an ended task and deletes its state file (its logs stay). FailedPrecondition while it
  // runs, NotFound for an unknown id.
  absl::Status Forget(std::string_view task_id);

  const std::string& log_dir() const { return options_.log_dir; }
  TaskLogs LogsFor(std::string_view task_id) const;

 private:
  enum class Ending { kNone, kCancel, kTimeLimit };
  struct Task;

  LocalExecutor(LocalExecutorOptions options, std::string boot_id, int lock_fd, int wake_fd);

  void ReaperLoop();
  // One pass over the running tasks: deadlines, then exits.
  void SweepLocked(TimePoint now);
  std::optional<TaskOutcome> CheckExitLocked(Task& task, TimePoint now);
  void EnforceDeadlinesLocked(Task& task, TimePoint now);
  void SignalGroupLocked(Task& task, int signal);
  void TerminateLocked(Task& task, Duration grace, TimePoint now);
  int PollTimeoutMsLocked(TimePoint now) const;
  void PublishLocked(Task& task, TaskOutcome outcome);
  void Wake() const;
  AdoptedTask AdoptOneLocked(TaskStateRecord record);
  TaskOutcome EndedWhileUnsupervised(const std::string& id,
                                     const std::optional<ExitRecord>& recorded,
                                     const std::string& lost) const;
  void Log(std::string_view line) const;
  std::string ExitFilePath(std::string_view task_id) const;

  const LocalExecutorOptions options_;
  const Clock& clock_;
  const std::string boot_id_;
  const int lock_fd_;  // holds the log directory's flock while the executor lives
  const int wake_fd_;  // eventfd that interrupts the reaper's poll

  mutable std::mutex mu_;
  mutable std::condition_variable ended_cv_;
  std::map<std::string, std::unique_ptr<Task>, std::less<>> tasks_;
  // Outcomes recorded but not yet passed to on_outcome.
  std::vector<TaskOutcome> undelivered_;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace tessera::agent

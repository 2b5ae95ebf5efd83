#include "agent/local/local_executor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/local/proc_stat.h"
#include "agent/local/task_state_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Hang guard only: every wait below normally ends in milliseconds.
constexpr std::chrono::milliseconds kHangGuard{20'000};

std::string TempDir() {
  std::string dir =
      (std::filesystem::path(::testing::TempDir()) / "local_executor_XXXXXX").lexically_normal();
  return ::mkdtemp(dir.data());
}

// A settable clock that the reaper thread may read while the test moves it.
class TestClock final : public Clock {
 public:
  explicit TestClock(TimePoint start) : now_ms_(start.time_since_epoch().count()) {}
  TimePoint Now() const override { return TimePoint(Duration(now_ms_.load())); }
  void Advance(Duration d) { now_ms_ += d.count(); }

 private:
  std::atomic<int64_t> now_ms_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0; }

// Waits (hang guard) until `path` exists and holds a line; returns its contents.
std::string WaitForFile(const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < give_up) {
    const std::string text = ReadFile(path);
    if (text.find('\n') != std::string::npos) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return "";
}

// Waits (hang guard) until no process with `pid` is left (zombies reaped by init count as gone).
bool WaitUntilGone(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < give_up) {
    absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
    if (!stat.ok() || stat->state == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Waits (hang guard) until the process `pid` is stopped (by SIGSTOP or another stop signal).
bool WaitUntilStopped(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < give_up) {
    absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
    if (stat.ok() && stat->state == 'T') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Records every outcome the callback delivers.
class OutcomeLog {
 public:
  void Add(const TaskOutcome& outcome) {
    std::lock_guard<std::mutex> lock(mu_);
    ids_.push_back(outcome.task_id);
  }
  std::vector<std::string> ids() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ids_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> ids_;
};

// Parameter: whether tasks run under tessera-task-supervisor.
class LocalExecutorTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { executor_ = NewExecutor(); }

  void TearDown() override {
    // Leave no process behind, whatever a failed assertion skipped.
    if (executor_ == nullptr) return;
    for (const std::string& id : executor_->RunningTasks()) {
      (void)executor_->Cancel(id, Duration(0));
      executor_->WaitForOutcome(id, kHangGuard);
    }
  }

  std::unique_ptr<LocalExecutor> NewExecutor(const Clock* clock = nullptr) {
    absl::StatusOr<std::unique_ptr<LocalExecutor>> executor =
        LocalExecutor::Create({.log_dir = log_dir_,
                               .clock = clock,
                               .base_env = EnvMap{{"PATH", "/usr/bin:/bin"}},
                               .on_outcome = [this](const TaskOutcome& o) { delivered_.Add(o); },
                               .max_wait = Duration(20),
                               .supervisor = GetParam() ? TESSERA_TASK_SUPERVISOR : ""});
    EXPECT_TRUE(executor.ok()) << executor.status();
    return executor.ok() ? *std::move(executor) : nullptr;
  }

  // Runs a shell snippet as a task and waits for its outcome.
  TaskOutcome RunShell(const std::string& id, const std::string& script, TaskLaunch launch = {}) {
    launch.task_id = id;
    launch.command = {"sh", "-c", script};
    absl::StatusOr<StartedTask> started = executor_->Start(launch);
    EXPECT_TRUE(started.ok()) << started.status();
    std::optional<TaskOutcome> outcome = executor_->WaitForOutcome(id, kHangGuard);
    EXPECT_TRUE(outcome.has_value()) << "no outcome for " << id;
    return outcome.value_or(TaskOutcome{});
  }

  std::string Stdout(const std::string& id) { return ReadFile(executor_->LogsFor(id).stdout_path); }

  const std::string log_dir_ = TempDir();
  // Declared before executor_, so it outlives the reaper thread that reads it.
  TestClock clock_{TimePoint(Duration(1'000'000))};
  OutcomeLog delivered_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_P(LocalExecutorTest, SuccessWritesLogsAndState) {
  TaskOutcome outcome = RunShell("ok", "echo out; echo err >&2");
  EXPECT_EQ(outcome.end, TaskEnd::kSucceeded);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.message, "exited with status 0");
  const TaskLogs logs = executor_->LogsFor("ok");
  EXPECT_EQ(logs.stdout_path, log_dir_ + "/ok.stdout.log");
  EXPECT_EQ(ReadFile(logs.stdout_path), "out\n");
  EXPECT_EQ(ReadFile(logs.stderr_path), "err\n");
  absl::StatusOr<TaskStateRecord> state = ReadTaskState(log_dir_ + "/ok.state.json");
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_TRUE(state->outcome.has_value());
  EXPECT_EQ(state->outcome->end, TaskEnd::kSucceeded);
  EXPECT_THAT(executor_->RunningTasks(), IsEmpty());
}

TEST_P(LocalExecutorTest, ExitCodesBecomeFailures) {
  for (int code : {1, 3, 127, 255}) {
    const std::string id = "exit-" + std::to_string(code);
    TaskOutcome outcome = RunShell(id, "exit " + std::to_string(code));
    EXPECT_EQ(outcome.end, TaskEnd::kFailed) << code;
    EXPECT_EQ(outcome.exit_code, code);
    EXPECT_FALSE(outcome.signal.has_value());
    EXPECT_EQ(outcome.message, "exited with status " + std::to_string(code));
  }
}

TEST_P(LocalExecutorTest, SignalsBecomeKilled) {
  TaskOutcome outcome = RunShell("segv", "kill -SEGV $$");
  EXPECT_EQ(outcome.end, TaskEnd::kKilled);
  EXPECT_EQ(outcome.signal, SIGSEGV);
  EXPECT_FALSE(outcome.exit_code.has_value());
  EXPECT_EQ(outcome.message, "killed by signal 11 (SIGSEGV)");
}

TEST_P(LocalExecutorTest, ChildSeesItsEnvironmentAndGpus) {
  TaskLaunch launch{.env = {{"GREETING", "hello world"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}},
                    .gpus = {1, 3}};
  TaskOutcome outcome =
      RunShell("env",
               "echo \"$GREETING|$CUDA_VISIBLE_DEVICES|$NVIDIA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER|"
               "$TESSERA_TASK_ID|$PATH\"",
               launch);
  EXPECT_EQ(outcome.end, TaskEnd::kSucceeded);
  EXPECT_EQ(Stdout("env"), "hello world|1,3|1,3|PCI_BUS_ID|env|/usr/bin:/bin\n");
}

TEST_P(LocalExecutorTest, ProgramInheritsNoDescriptorBeyondStdio) {
  // Under the supervisor, the start gate (its fd 3) is closed before the program starts.
  TaskOutcome outcome = RunShell("fds", "ls /proc/$$/fd");
  EXPECT_EQ(outcome.end, TaskEnd::kSucceeded);
  EXPECT_EQ(Stdout("fds"), "0\n1\n2\n");
}

TEST_P(LocalExecutorTest, CpuOnlyTaskSeesNoGpu) {
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);  // the agent's own setting must not leak
  RunShell("cpu", "echo \"[${CUDA_VISIBLE_DEVICES-unset}][${NVIDIA_VISIBLE_DEVICES-unset}]\"");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(Stdout("cpu"), "[][void]\n");
}

TEST_P(LocalExecutorTest, DistributedEnvironmentReachesTheChild) {
  TaskLaunch launch{.distributed = DistributedTask{
                        .tasks = {{"127.0.0.1", 29500}, {"127.0.0.1", 29501}}, .index = 1}};
  RunShell("rank1",
           "echo \"$MASTER_ADDR:$MASTER_PORT $RANK/$WORLD_SIZE $LOCAL_RANK\"; "
           "echo \"$TF_CONFIG\"",
           launch);
  EXPECT_EQ(Stdout("rank1"),
            "127.0.0.1:29500 1/2 1\n"
            "{\"cluster\":{\"worker\":[\"127.0.0.1:29500\",\"127.0.0.1:29501\"]},"
            "\"task\":{\"index\":1,\"type\":\"worker\"}}\n");
}

TEST_P(LocalExecutorTest, WorkingDirectoryAndArgs) {
  const std::string dir = TempDir();
  TaskLaunch launch{.task_id = "cwd",
                    .command = {"sh", "-c"},
                    .args = {"pwd; echo \"$0 $1\"", "zero", "one"},
                    .working_dir = dir};
  ASSERT_TRUE(executor_->Start(launch).ok());
  ASSERT_TRUE(executor_->WaitForOutcome("cwd", kHangGuard).has_value());
  EXPECT_EQ(Stdout("cwd"), dir + "\nzero one\n");
}

TEST_P(LocalExecutorTest, RelativeCommandResolvesInTheWorkingDirectory) {
  const std::string dir = TempDir();
  {
    std::ofstream script(dir + "/run.sh");
    script << "#!/bin/sh\necho ran from $(pwd)\n";
  }
  ::chmod((dir + "/run.sh").c_str(), 0755);
  ASSERT_TRUE(
      executor_->Start({.task_id = "rel", .command = {"./run.sh"}, .working_dir = dir}).ok());
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("rel", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kSucceeded) << outcome->message;
  EXPECT_EQ(Stdout("rel"), "ran from " + dir + "\n");
}

TEST_P(LocalExecutorTest, LogsAppendAcrossRestartsOfTheSameTask) {
  RunShell("again", "echo first");
  RunShell("again", "echo second");
  EXPECT_EQ(Stdout("again"), "first\nsecond\n");
}

TEST_P(LocalExecutorTest, StartFailuresAreOutcomesWithTheReason) {
  const std::string dir = TempDir();
  { std::ofstream(dir + "/not-exec") << "#!/bin/sh\n"; }
  struct Case {
    std::string id;
    TaskLaunch launch;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"not-found",
       {.command = {"no-such-command-xyz"}},
       "command \"no-such-command-xyz\" not found in PATH \"/usr/bin:/bin\""},
      {"no-file", {.command = {"/no/such/file"}}, "No such file or directory"},
      {"not-exec", {.command = {dir + "/not-exec"}}, "is not executable: Permission denied"},
      {"a-dir", {.command = {dir}}, "is a directory"},
      {"bad-cwd",
       {.command = {"true"}, .working_dir = "/no/such/dir"},
       "working directory \"/no/such/dir\": No such file or directory"},
      {"file-cwd", {.command = {"true"}, .working_dir = dir + "/not-exec"}, "is not a directory"},
  };
  for (Case c : cases) {
    SCOPED_TRACE(c.id);
    c.launch.task_id = c.id;
    absl::StatusOr<StartedTask> started = executor_->Start(c.launch);
    ASSERT_TRUE(started.ok()) << started.status();
    EXPECT_EQ(started->pid, 0);
    std::optional<TaskOutcome> outcome = executor_->WaitForOutcome(c.id, kHangGuard);
    ASSERT_TRUE(outcome.has_value());
    EXPECT_EQ(outcome->end, TaskEnd::kStartFailed);
    EXPECT_THAT(outcome->message, HasSubstr(c.reason));
  }
}

TEST_P(LocalExecutorTest, ProgramThatFailsToExecuteIsAStartFailure) {
  const std::string dir = TempDir();
  { std::ofstream(dir + "/bad-interpreter") << "#!/no/such/interpreter\n"; }
  ::chmod((dir + "/bad-interpreter").c_str(), 0755);
  ASSERT_TRUE(
      executor_->Start({.task_id = "bad-interp", .command = {dir + "/bad-interpreter"}}).ok());
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("bad-interp", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kStartFailed);
  EXPECT_THAT(outcome->message, HasSubstr("No such file or directory"));
}

TEST_P(LocalExecutorTest, BadRequestsAreErrors) {
  EXPECT_EQ(executor_->Start({.task_id = "../x", .command = {"true"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(executor_->Start({.task_id = "t", .command = {}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(executor_->Start({.task_id = "busy", .command = {"sleep", "60"}}).ok());
  EXPECT_EQ(executor_->Start({.task_id = "busy", .command = {"true"}}).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(executor_->Cancel("nobody", Duration(0)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(executor_->Forget("busy").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(LocalExecutorTest, CancelTermsAChildThatExitsOnSigterm) {
  const std::string ready = log_dir_ + "/trap.ready";
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "trap",
                           .command = {"sh", "-c",
                                       "trap 'echo got TERM; exit 7' TERM; echo up > " + ready +
                                           "; while :; do sleep 0.05; done"}})
                  .ok());
  WaitForFile(ready);
  ASSERT_TRUE(executor_->Cancel("trap", std::chrono::seconds(60)).ok());
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("trap", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kCancelled);
  EXPECT_EQ(outcome->exit_code, 7);  // its own handler ran: no SIGKILL was needed
  EXPECT_EQ(outcome->message, "cancelled; exited with status 7");
  EXPECT_THAT(Stdout("trap"), HasSubstr("got TERM"));
  EXPECT_TRUE(executor_->Cancel("trap", Duration(0)).ok());  // idempotent once ended
}

TEST_P(LocalExecutorTest, CancelKillsAChildThatIgnoresSigtermAfterTheGrace) {
  const std::string ready = log_dir_ + "/stubborn.ready";
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "stubborn",
                           .command = {"sh", "-c",
                                       "trap '' TERM; echo up > " + ready +
                                           "; while :; do sleep 0.05; done"}})
                  .ok());
  WaitForFile(ready);
  ASSERT_TRUE(executor_->Cancel("stubborn", Duration(200)).ok());
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("stubborn", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kCancelled);
  EXPECT_EQ(outcome->signal, SIGKILL);
  EXPECT_EQ(outcome->message, "cancelled; killed by signal 9 (SIGKILL)");
}

TEST_P(LocalExecutorTest, CancelWakesAStoppedTaskSoItCanActOnSigterm) {
  const std::string ready = log_dir_ + "/stopped.ready";
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "stopped",
                           .command = {"sh", "-c",
                                       "trap 'exit 5' TERM; echo $$ > " + ready +
                                           "; kill -STOP $$; while :; do sleep 0.05; done"}})
                  .ok());
  // Cancel only once the shell has stopped: a SIGCONT sent before its SIGSTOP would wake nothing.
  ASSERT_TRUE(WaitUntilStopped(std::atoi(WaitForFile(ready).c_str())));
  ASSERT_TRUE(executor_->Cancel("stopped", std::chrono::seconds(60)).ok());
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("stopped", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kCancelled);
  EXPECT_EQ(outcome->exit_code, 5);
}

TEST_P(LocalExecutorTest, GrandchildrenGoDownWithTheGroup) {
  const std::string pid_file = log_dir_ + "/grandchild.pid";
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "tree",
                           .command = {"sh", "-c",
                                       "sh -c 'trap \"\" TERM; sleep 600' & echo $! > " + pid_file +
                                           "; wait"}})
                  .ok());
  const std::string text = WaitForFile(pid_file);
  const pid_t grandchild = std::atoi(text.c_str());
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(ProcessExists(grandchild));
  ASSERT_TRUE(executor_->Cancel("tree", Duration(100)).ok());
  ASSERT_TRUE(executor_->WaitForOutcome("tree", kHangGuard).has_value());
  EXPECT_TRUE(WaitUntilGone(grandchild));
}

TEST_P(LocalExecutorTest, LeftoverProcessesDieWhenTheLeaderExits) {
  const std::string pid_file = log_dir_ + "/bg.pid";
  TaskOutcome outcome =
      RunShell("bg", "sleep 600 > /dev/null 2>&1 & echo $! > " + pid_file + "; exit 0");
  EXPECT_EQ(outcome.end, TaskEnd::kSucceeded);
  const pid_t background = std::atoi(ReadFile(pid_file).c_str());
  ASSERT_GT(background, 0);
  EXPECT_TRUE(WaitUntilGone(background));
}

TEST_P(LocalExecutorTest, TimeLimitTermsThenKills) {
  // On the injected clock, so that the limit falls only once the shell ignores SIGTERM.
  executor_.reset();
  executor_ = NewExecutor(&clock_);
  const std::string ready = log_dir_ + "/slow.ready";
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "slow",
                           .command = {"sh", "-c",
                                       "trap '' TERM; echo up > " + ready +
                                           "; while :; do sleep 0.05; done"},
                           .time_limit = Duration(100),
                           .termination_grace = Duration(100)})
                  .ok());
  WaitForFile(ready);
  // Each step passes the limit, then the grace, at a later look of the reaper.
  std::optional<TaskOutcome> outcome;
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (!outcome.has_value() && std::chrono::steady_clock::now() < give_up) {
    clock_.Advance(Duration(100));
    outcome = executor_->WaitForOutcome("slow", Duration(50));
  }
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kTimeLimitExceeded);
  EXPECT_EQ(outcome->signal, SIGKILL);
  EXPECT_EQ(outcome->message, "time limit exceeded (100ms); killed by signal 9 (SIGKILL)");
}

TEST_P(LocalExecutorTest, TimeLimitFollowsTheInjectedClock) {
  executor_.reset();
  executor_ = NewExecutor(&clock_);
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "limited",
                           .command = {"sleep", "600"},
                           .time_limit = std::chrono::hours(2),
                           .termination_grace = std::chrono::seconds(30)})
                  .ok());
  // Real time passes, the clock does not: the task keeps running.
  EXPECT_FALSE(executor_->WaitForOutcome("limited", std::chrono::milliseconds(100)).has_value());
  clock_.Advance(std::chrono::hours(2));
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("limited", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kTimeLimitExceeded);
  EXPECT_EQ(outcome->signal, SIGTERM);  // sleep dies of SIGTERM within its grace
  EXPECT_EQ(outcome->message, "time limit exceeded (2h); killed by signal 15 (SIGTERM)");
  EXPECT_EQ(outcome->finished_at, clock_.Now());
}

TEST_P(LocalExecutorTest, OutcomesAreDeliveredOncePerTask) {
  RunShell("a", "true");
  RunShell("b", "false");
  executor_.reset();  // joins the reaper: every callback has run
  EXPECT_THAT(delivered_.ids(), ElementsAre("a", "b"));
}

TEST_P(LocalExecutorTest, ForgetDeletesTheStateFileButKeepsLogs) {
  RunShell("done", "echo x");
  ASSERT_TRUE(executor_->Forget("done").ok());
  EXPECT_FALSE(executor_->Outcome("done").has_value());
  EXPECT_EQ(ReadTaskState(log_dir_ + "/done.state.json").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Stdout("done"), "x\n");
  EXPECT_EQ(executor_->Forget("done").code(), absl::StatusCode::kNotFound);
}

TEST_P(LocalExecutorTest, OneExecutorPerLogDirectory) {
  absl::StatusOr<std::unique_ptr<LocalExecutor>> second =
      LocalExecutor::Create({.log_dir = log_dir_});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("in use by another executor"));
  executor_.reset();
  second = LocalExecutor::Create({.log_dir = log_dir_});
  EXPECT_TRUE(second.ok()) << second.status();
}

TEST_P(LocalExecutorTest, RestartedExecutorAdoptsARunningTask) {
  absl::StatusOr<StartedTask> started =
      executor_->Start({.task_id = "long", .command = {"sleep", "600"}});
  ASSERT_TRUE(started.ok());
  RunShell("finished", "exit 4");
  executor_.reset();  // the "control-plane restart": the task keeps running
  ASSERT_TRUE(ProcessExists(started->pid));

  executor_ = NewExecutor();
  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->unreadable, IsEmpty());
  ASSERT_EQ(report->tasks.size(), 2u);
  EXPECT_EQ(report->tasks[0].task_id, "finished");
  EXPECT_FALSE(report->tasks[0].running);
  EXPECT_EQ(report->tasks[1].task_id, "long");
  EXPECT_TRUE(report->tasks[1].running);
  EXPECT_EQ(report->tasks[1].pid, started->pid);
  EXPECT_THAT(executor_->RunningTasks(), ElementsAre("long"));
  EXPECT_EQ(executor_->Pid("long"), started->pid);
  std::optional<TaskOutcome> finished = executor_->Outcome("finished");
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->exit_code, 4);

  // A second Adopt finds nothing new.
  absl::StatusOr<AdoptReport> again = executor_->Adopt();
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(again->tasks, IsEmpty());

  ASSERT_TRUE(executor_->Cancel("long", std::chrono::seconds(30)).ok());
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("long", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kCancelled);
  EXPECT_EQ(outcome->signal, SIGTERM);
}

// Runs the program args[0] with argv = args, as a process that is not this test's child (its
// parent exits at once) and leads its own session; returns its pid. A `gate` >= 0 becomes the
// program's fd 3 (a supervisor's start gate).
pid_t StartOrphan(const std::vector<std::string>& args, int gate = -1) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t middle = ::fork();
  if (middle == 0) {
    const pid_t orphan = ::fork();
    if (orphan == 0) {
      ::setsid();
      if (gate >= 0) ::dup2(gate, 3);
      if (gate == 3) ::fcntl(3, F_SETFD, 0);  // dup2 onto itself keeps close-on-exec
      std::vector<char*> argv;
      for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    (void)!::write(pipe_fds[1], &orphan, sizeof(orphan));
    ::_exit(0);
  }
  pid_t orphan = -1;
  if (::read(pipe_fds[0], &orphan, sizeof(orphan)) != static_cast<ssize_t>(sizeof(orphan))) {
    orphan = -1;
  }
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::waitpid(middle, nullptr, 0);
  return orphan;
}

// Writes the state file an executor would have written for `pid`.
void RecordRunningTask(const std::string& log_dir, const std::string& id, pid_t pid) {
  absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
  ASSERT_TRUE(stat.ok()) << stat.status();
  absl::StatusOr<std::string> boot_id = ReadBootId();
  ASSERT_TRUE(boot_id.ok());
  ASSERT_TRUE(WriteTaskState(StateFilePath(log_dir, id), {.task_id = id,
                                                          .pid = pid,
                                                          .start_ticks = stat->start_ticks,
                                                          .boot_id = *boot_id,
                                                          .stdout_path = log_dir + "/x.log",
                                                          .stderr_path = log_dir + "/x.log"})
                  .ok());
}

TEST_P(LocalExecutorTest, AdoptedTaskThatIsNotOurChildEndsLost) {
  // Without a supervisor in between, nobody keeps the exit status of a process whose parent is
  // not the executor.
  const pid_t orphan = StartOrphan({"/bin/sleep", "600"});
  ASSERT_GT(orphan, 0);
  RecordRunningTask(log_dir_, "orphan", orphan);
  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->tasks.size(), 1u);
  EXPECT_TRUE(report->tasks[0].running);

  ::kill(orphan, SIGTERM);  // it ends on its own, out of the executor's sight
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("orphan", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kLost);
  EXPECT_THAT(outcome->message, HasSubstr("exit status unknown"));
}

// A supervised task that ended while no executor ran reports how its program ended — never
// "lost", which would make the control plane run it again.
TEST_P(LocalExecutorTest, SupervisedTaskThatEndedWhileNoExecutorRanKeepsItsExitStatus) {
  if (!GetParam()) GTEST_SKIP() << "needs the supervisor";
  const std::string go = log_dir_ + "/go";
  const pid_t task = StartOrphan({TESSERA_TASK_SUPERVISOR, log_dir_ + "/ended.exit", "/bin/sh", "sh",
                                  "-c", "while [ ! -e " + go + " ]; do sleep 0.02; done; exit 4"});
  ASSERT_GT(task, 0);
  RecordRunningTask(log_dir_, "ended", task);
  std::ofstream(go) << "now\n";
  for (int i = 0; i < 1000 && ::kill(task, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(::kill(task, 0), 0) << "the supervisor did not end";

  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->tasks.size(), 1u);
  EXPECT_FALSE(report->tasks[0].running);
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("ended", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kFailed);
  EXPECT_EQ(outcome->exit_code, 4);
  EXPECT_THAT(outcome->message, HasSubstr("while no executor was running"));
}

TEST_P(LocalExecutorTest, SupervisedTaskKeepsItsExitStatusAcrossARestart) {
  if (!GetParam()) GTEST_SKIP() << "needs the supervisor";
  // What a previous executor left behind: a supervised task no executor is the parent of.
  const std::string go = log_dir_ + "/go";
  const pid_t task = StartOrphan({TESSERA_TASK_SUPERVISOR, log_dir_ + "/kept.exit", "/bin/sh", "sh",
                                  "-c", "while [ ! -e " + go + " ]; do sleep 0.02; done; exit 3"});
  ASSERT_GT(task, 0);
  RecordRunningTask(log_dir_, "kept", task);
  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->tasks.size(), 1u);
  EXPECT_TRUE(report->tasks[0].running);

  std::ofstream(go) << "now\n";
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("kept", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kFailed);
  EXPECT_EQ(outcome->exit_code, 3);
  ASSERT_TRUE(executor_->Forget("kept").ok());
  EXPECT_FALSE(std::ifstream(log_dir_ + "/kept.exit").good());
}

TEST_P(LocalExecutorTest, AdoptReportsVanishedAndRecycledPidsAsLostWithoutSignalling) {
  absl::StatusOr<std::string> boot_id = ReadBootId();
  ASSERT_TRUE(boot_id.ok());
  // This test process is alive, but it is not the process the record names: another start time.
  absl::StatusOr<ProcStat> self = ReadProcStat(::getpid());
  ASSERT_TRUE(self.ok());
  const TaskStateRecord recycled{.task_id = "recycled",
                                 .pid = ::getpid(),
                                 .start_ticks = self->start_ticks + 1,
                                 .boot_id = *boot_id};
  // A pid that does not exist: a child we started and reaped.
  const pid_t reaped = ::fork();
  if (reaped == 0) ::_exit(0);
  ::waitpid(reaped, nullptr, 0);
  const TaskStateRecord vanished{.task_id = "vanished", .pid = reaped, .boot_id = *boot_id};
  // The right process, but a record from an earlier boot.
  const TaskStateRecord rebooted{.task_id = "rebooted",
                                 .pid = ::getpid(),
                                 .start_ticks = self->start_ticks,
                                 .boot_id = "00000000-0000-0000-0000-000000000000"};
  for (const TaskStateRecord& record : {recycled, vanished, rebooted}) {
    ASSERT_TRUE(WriteTaskState(StateFilePath(log_dir_, record.task_id), record).ok());
  }
  { std::ofstream(log_dir_ + "/garbage.state.json") << "not json"; }

  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->unreadable.size(), 1u);
  EXPECT_THAT(std::string(report->unreadable[0].message()), HasSubstr("garbage.state.json"));
  ASSERT_EQ(report->tasks.size(), 3u);
  for (const AdoptedTask& task : report->tasks) EXPECT_FALSE(task.running) << task.task_id;

  const std::pair<std::string, std::string> expected[] = {
      {"recycled", "the pid now belongs to another process"},
      {"vanished", "is gone"},
      {"rebooted", "rebooted"}};
  for (const auto& [id, reason] : expected) {
    std::optional<TaskOutcome> outcome = executor_->WaitForOutcome(id, kHangGuard);
    ASSERT_TRUE(outcome.has_value()) << id;
    EXPECT_EQ(outcome->end, TaskEnd::kLost) << id;
    EXPECT_THAT(outcome->message, HasSubstr(reason)) << id;
    // The loss is recorded, so the next restart reports the same outcome.
    absl::StatusOr<TaskStateRecord> state = ReadTaskState(StateFilePath(log_dir_, id));
    ASSERT_TRUE(state.ok());
    EXPECT_TRUE(state->outcome.has_value());
  }
  // We are still alive: nobody signalled the recycled pid.
}

TEST_P(LocalExecutorTest, AdoptedTaskKeepsItsTimeLimit) {
  executor_.reset();
  executor_ = NewExecutor(&clock_);
  ASSERT_TRUE(executor_
                  ->Start({.task_id = "bounded",
                           .command = {"sleep", "600"},
                           .time_limit = std::chrono::minutes(10),
                           .termination_grace = Duration(0)})
                  .ok());
  executor_.reset();
  executor_ = NewExecutor(&clock_);
  ASSERT_TRUE(executor_->Adopt().ok());
  ASSERT_THAT(executor_->RunningTasks(), ElementsAre("bounded"));
  clock_.Advance(std::chrono::minutes(10));
  std::optional<TaskOutcome> outcome = executor_->WaitForOutcome("bounded", kHangGuard);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->end, TaskEnd::kTimeLimitExceeded);
  EXPECT_EQ(outcome->signal, SIGKILL);  // grace 0: straight to SIGKILL
}

// ---------------------------------------------------------------------------------------------
// The start gate: a supervised program runs only once its state file is on disk.

// Waits (hang guard) for a child of `parent` that is running tessera-task-supervisor (exec'd, not
// just forked); returns its pid, or 0.
pid_t WaitForSupervisorOf(pid_t parent) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < give_up) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const pid_t pid = std::atoi(entry.path().filename().c_str());
      if (pid <= 0) continue;
      absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
      if (!stat.ok() || stat->ppid != parent) continue;
      const std::string cmdline = ReadFile(entry.path().string() + "/cmdline");
      if (cmdline.c_str() == std::string(TESSERA_TASK_SUPERVISOR)) return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

TEST_P(LocalExecutorTest, StateFileFailureRunsNothing) {
  // The state file's temporary file cannot be created: Start cannot record the task.
  ASSERT_EQ(::mkdir((log_dir_ + "/unrecorded.state.json.tmp").c_str(), 0750), 0);
  const std::string marker = log_dir_ + "/unrecorded.ran";
  TaskOutcome outcome = RunShell("unrecorded", "echo ran > " + marker);
  EXPECT_EQ(outcome.end, TaskEnd::kStartFailed);
  EXPECT_THAT(outcome.message, HasSubstr("the state file could not be written"));
  if (!GetParam()) return;  // direct mode: the program started at the spawn and was SIGKILLed
  // The supervisor has been reaped: had it started the program, the marker would be there.
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_EQ(ReadFile(log_dir_ + "/unrecorded.exit"), "not-started\n");
}

TEST_P(LocalExecutorTest, ControlPlaneKilledBeforeTheStateFileRunsNothing) {
  if (!GetParam()) GTEST_SKIP() << "direct mode leaves this window open (local_executor.h)";
  // A FIFO where the state file's temporary file goes: writing the state file blocks, so the
  // control plane is stopped right between the spawn and the state file.
  ASSERT_EQ(::mkfifo((log_dir_ + "/crash.state.json.tmp").c_str(), 0640), 0);
  const std::string marker = log_dir_ + "/crash.ran";
  executor_.reset();  // no thread of ours is running while we fork
  const pid_t control_plane = ::fork();
  ASSERT_GE(control_plane, 0);
  if (control_plane == 0) {
    absl::StatusOr<std::unique_ptr<LocalExecutor>> executor =
        LocalExecutor::Create({.log_dir = log_dir_,
                               .base_env = EnvMap{{"PATH", "/usr/bin:/bin"}},
                               .supervisor = TESSERA_TASK_SUPERVISOR});
    if (!executor.ok()) ::_exit(1);
    (void)(*executor)->Start({.task_id = "crash", .command = {"sh", "-c", "echo ran > " + marker}});
    ::_exit(2);  // not reached: Start blocks in the state-file write
  }
  const pid_t supervisor = WaitForSupervisorOf(control_plane);
  ::kill(control_plane, SIGKILL);
  int status = 0;
  ::waitpid(control_plane, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the control plane ended by itself, status " << status;
  ASSERT_GT(supervisor, 0) << "the supervisor was never spawned";

  // Its gate closed with the control plane: it exits without starting the program.
  ASSERT_TRUE(WaitUntilGone(supervisor));
  EXPECT_EQ(ReadFile(log_dir_ + "/crash.exit"), "not-started\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
  // A restarted executor finds no record: the server reports the launch lost, and it never ran.
  executor_ = NewExecutor();
  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->tasks, IsEmpty());
  EXPECT_THAT(executor_->RunningTasks(), IsEmpty());
}

TEST_P(LocalExecutorTest, AdoptedTaskWhoseGateNeverOpenedIsLostAndNeverRan) {
  if (!GetParam()) GTEST_SKIP() << "needs the supervisor";
  // What an executor leaves when it dies after writing the state file but before the go-ahead:
  // a supervisor waiting at its gate. "early": the gate closes before the restarted executor
  // adopts the task; "late": after (someone else still held the executor's end for a while).
  struct Gated {
    std::string id;
    int ours = -1;
    pid_t pid = 0;
    std::string marker;
  };
  std::vector<Gated> tasks = {{.id = "early"}, {.id = "late"}};
  for (Gated& task : tasks) {
    int gate[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate), 0);
    task.ours = gate[0];
    task.marker = log_dir_ + "/" + task.id + ".ran";
    task.pid =
        StartOrphan({TESSERA_TASK_SUPERVISOR, "--start-gate=3", log_dir_ + "/" + task.id + ".exit",
                     "/bin/sh", "sh", "-c", "echo ran > " + task.marker},
                    gate[1]);
    ::close(gate[1]);
    ASSERT_GT(task.pid, 0);
    RecordRunningTask(log_dir_, task.id, task.pid);
  }
  ::close(tasks[0].ours);
  ASSERT_TRUE(WaitUntilGone(tasks[0].pid));

  absl::StatusOr<AdoptReport> report = executor_->Adopt();
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->tasks.size(), 2u);
  EXPECT_EQ(report->tasks[0].task_id, "early");  // gone, or a zombie nobody has reaped yet
  EXPECT_EQ(report->tasks[1].task_id, "late");
  EXPECT_TRUE(report->tasks[1].running);
  ::close(tasks[1].ours);

  for (const Gated& task : tasks) {
    std::optional<TaskOutcome> outcome = executor_->WaitForOutcome(task.id, kHangGuard);
    ASSERT_TRUE(outcome.has_value()) << task.id;
    EXPECT_EQ(outcome->end, TaskEnd::kLost) << task.id;
    EXPECT_THAT(outcome->message, HasSubstr("the program never ran")) << task.id;
    EXPECT_FALSE(outcome->exit_code.has_value()) << task.id;
    EXPECT_TRUE(WaitUntilGone(task.pid)) << task.id;
    EXPECT_FALSE(std::filesystem::exists(task.marker)) << task.id;
  }
}

INSTANTIATE_TEST_SUITE_P(RunMode, LocalExecutorTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Supervised" : "Direct";
                         });

}  // namespace
}  // namespace tessera::agent

// tessera-task-supervisor run on its own: the start gate and its command line.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// How a process ended, as a word and a number, for readable expectations.
std::string Ending(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

class TaskSupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir =
        (std::filesystem::path(::testing::TempDir()) / "task_supervisor_XXXXXX").lexically_normal();
    dir_ = ::mkdtemp(dir.data());
  }

  // Starts the supervisor as this test's child with `flag` (a --start-gate=... or nothing) and a
  // program that records that it ran and then exits 3. `gate`, when >= 0, becomes its fd 3;
  // otherwise fd 3 is closed.
  pid_t StartSupervisor(const std::string& flag, int gate) {
    std::vector<std::string> args = {TESSERA_TASK_SUPERVISOR};
    if (!flag.empty()) args.push_back(flag);
    for (const std::string& arg : {exit_file(), std::string("/bin/sh"), std::string("sh"),
                                   std::string("-c"), "echo ran > " + marker() + "; exit 3"}) {
      args.push_back(arg);
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (gate < 0) ::close(3);  // whatever this test process has there
      if (gate >= 0) ::dup2(gate, 3);
      if (gate == 3) ::fcntl(3, F_SETFD, 0);  // dup2 onto itself keeps close-on-exec
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(126);
    }
    return pid;
  }

  // A connected socket pair, close-on-exec: [0] the executor's end, [1] the supervisor's.
  void MakeGate(int fds[2]) {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  }

  // Waits (hang guard) until `pid` has a handler for `signal` (the supervisor has installed its
  // handlers, which it does before it waits at the gate).
  static bool WaitUntilCatching(pid_t pid, int signal) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < give_up) {
      std::istringstream status(ReadFile("/proc/" + std::to_string(pid) + "/status"));
      std::string line;
      while (std::getline(status, line)) {
        if (!line.starts_with("SigCgt:")) continue;
        const uint64_t caught = std::strtoull(line.c_str() + 7, nullptr, 16);
        if ((caught >> (signal - 1)) & 1) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  static int Wait(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }

  std::string exit_file() const { return dir_ + "/task.exit"; }
  std::string marker() const { return dir_ + "/task.ran"; }
  bool Ran() const { return std::filesystem::exists(marker()); }

  std::string dir_;
};

TEST_F(TaskSupervisorTest, GoAheadStartsTheProgram) {
  int gate[2];
  MakeGate(gate);
  const pid_t pid = StartSupervisor("--start-gate=3", gate[1]);
  ASSERT_GT(pid, 0);
  ::close(gate[1]);
  ASSERT_EQ(::write(gate[0], "x", 1), 1);
  ::close(gate[0]);
  EXPECT_EQ(Ending(Wait(pid)), "exit 3");
  EXPECT_TRUE(Ran());
  EXPECT_EQ(ReadFile(exit_file()), "exit 3\n");
}

TEST_F(TaskSupervisorTest, GateClosedWithoutTheByteStartsNothing) {
  int gate[2];
  MakeGate(gate);
  const pid_t pid = StartSupervisor("--start-gate=3", gate[1]);
  ASSERT_GT(pid, 0);
  ::close(gate[1]);
  ::close(gate[0]);  // the executor went away
  EXPECT_EQ(Ending(Wait(pid)), "exit 125");
  EXPECT_FALSE(Ran());  // the supervisor is gone and never forked the program
  EXPECT_EQ(ReadFile(exit_file()), "not-started\n");
}

TEST_F(TaskSupervisorTest, SignalsWhileAtTheGateDoNotOpenIt) {
  int gate[2];
  MakeGate(gate);
  const pid_t pid = StartSupervisor("--start-gate=3", gate[1]);
  ASSERT_GT(pid, 0);
  ::close(gate[1]);
  ASSERT_TRUE(WaitUntilCatching(pid, SIGTERM));
  ::kill(pid, SIGTERM);  // interrupts the wait at the gate, which goes on
  ::kill(pid, SIGHUP);
  ::close(gate[0]);
  EXPECT_EQ(Ending(Wait(pid)), "exit 125");
  EXPECT_FALSE(Ran());
  EXPECT_EQ(ReadFile(exit_file()), "not-started\n");
}

TEST_F(TaskSupervisorTest, UnreadableGateStartsNothing) {
  const pid_t pid = StartSupervisor("--start-gate=3", -1);  // nothing open at fd 3
  ASSERT_GT(pid, 0);
  EXPECT_EQ(Ending(Wait(pid)), "exit 125");
  EXPECT_FALSE(Ran());
  EXPECT_EQ(ReadFile(exit_file()), "not-started\n");
}

TEST_F(TaskSupervisorTest, WithoutAGateTheProgramStartsAtOnce) {
  const pid_t pid = StartSupervisor("", -1);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(Ending(Wait(pid)), "exit 3");
  EXPECT_TRUE(Ran());
}

TEST_F(TaskSupervisorTest, BadFlagsAreUsageErrorsAndStartNothing) {
  for (const std::string flag :
       {"--start-gate=", "--start-gate=x", "--start-gate=-1", "--start-gate=3x", "--gate=3"}) {
    const pid_t pid = StartSupervisor(flag, -1);
    ASSERT_GT(pid, 0);
    EXPECT_EQ(Ending(Wait(pid)), "exit 2") << flag;
    EXPECT_FALSE(Ran()) << flag;
    EXPECT_FALSE(std::filesystem::exists(exit_file())) << flag;
  }
}

}  // namespace
}  // namespace tessera::agent

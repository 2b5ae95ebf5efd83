// This machine's processes behind a real `tessera agent --backend local` process: when the agent
// dies its task keeps running under its supervisor; the server, hearing nothing, marks the task
// lost after the grace and requeues the job; when the agent comes back, the resync kills the
// task the server no longer knows and the job's new attempt runs. Task logs are read through the
// agent (REST and `tessera logs`). A server restart while the agent stays up keeps the running
// task and runs nothing twice. Every wait is bounded and generous; nothing asserts on timing.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent_process.h"
#include "agent_server_test.h"
#include "gtest/gtest.h"
#include "process_tools.h"
#include "rest_api.h"

namespace tessera::integration {
namespace {

constexpr char kCluster[] = "box";

// The pids in `path`, one a line, in order.
std::vector<pid_t> ReadPids(const std::string& path) {
  std::ifstream in(path);
  std::vector<pid_t> pids;
  int pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// What `command` wrote to stdout, and its exit status.
std::pair<std::string, int> RunCommand(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  std::string out;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  return {out, ::pclose(pipe)};
}

class AgentLocalTest : public AgentServerTest {
 protected:
  AgentLocalTest() : AgentServerTest("tessera-agent-local") {}

  void SetUp() override {
    AgentServerTest::SetUp();
    if (HasFatalFailure()) return;
    agent_ = &AddAgent(kCluster, "local", {}, dir_.Sub("agent"));
  }

  bool HasEvent(const std::string& id, std::string_view type) const {
    for (const Json& event : Events(id)) {
      if (event.value("type", "") == type) return true;
    }
    return false;
  }

  AgentProcess* agent_ = nullptr;
};

TEST_F(AgentLocalTest, ResyncKillsTheTaskTheServerGaveUpAndTheNewAttemptRuns) {
  const RestApi api = Rest();
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 1); }))
      << ClusterItem(api, kCluster).dump();

  const std::string pids = dir_.Sub("pids");
  Json job = ShellJob("sleeper", "echo $$ >> " + pids + "; exec sleep 600");
  job["spec"]["clusterSelector"] = {{"tessera.io/cluster", kCluster}};
  const HttpAnswer submitted = api.Submit(job);
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["metadata"]["id"];
  ASSERT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");
  ASSERT_TRUE(WaitUntil([&] { return ReadPids(pids).size() == 1; }));
  const pid_t first = ReadPids(pids)[0];
  ASSERT_TRUE(ProcessAlive(first));

  // The agent dies; its task runs on, until the server gives it up and requeues the job.
  agent_->Kill();
  ASSERT_TRUE(WaitUntil([&] { return HasEvent(id, "Requeued"); }));
  const Json requeued = api.Job(id).body;
  EXPECT_EQ(requeued["status"]["phase"], "Pending") << requeued.dump();
  EXPECT_TRUE(ProcessAlive(first));

  // The agent comes back: the resync kills the old task, and the new attempt runs.
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(first); })) << first << " still runs";
  ASSERT_EQ(api.WaitForPhase(id, {"Running"})["status"]["phase"], "Running");
  ASSERT_TRUE(WaitUntil([&] { return ReadPids(pids).size() == 2; }));
  const pid_t second = ReadPids(pids)[1];
  EXPECT_NE(second, first);
  EXPECT_TRUE(ProcessAlive(second));

  ASSERT_EQ(api.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(id)["status"]["phase"], "Cancelled");
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(second); })) << second << " still runs";
}

TEST_F(AgentLocalTest, LogsAreReadThroughTheAgent) {
  const RestApi api = Rest();
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 1); }))
      << ClusterItem(api, kCluster).dump();

  Json job = ShellJob("echo", "echo hello-through-the-agent; echo err-line >&2");
  job["spec"]["clusterSelector"] = {{"tessera.io/cluster", kCluster}};
  const HttpAnswer submitted = api.Submit(job);
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["metadata"]["id"];
  ASSERT_EQ(api.WaitForEnd(id)["status"]["phase"], "Succeeded");

  const std::string logs = "/api/v1/jobs/" + id + "/logs";
  HttpAnswer out;
  // The log is complete once the agent says so.
  ASSERT_TRUE(WaitUntil([&] {
    out = api.Get(logs);
    return out.status == 200 && out.Header("X-Tessera-Log-End") == "true";
  })) << out.status << " " << out.text;
  EXPECT_EQ(out.text, "hello-through-the-agent\n");
  EXPECT_EQ(out.Header("X-Tessera-Next-Offset"), "24");

  const HttpAnswer err = api.Get(logs + "?stream=stderr");
  EXPECT_EQ(err.status, 200) << err.text;
  EXPECT_EQ(err.text, "err-line\n");
  const HttpAnswer tail = api.Get(logs + "?offset=6");
  EXPECT_EQ(tail.status, 200) << tail.text;
  EXPECT_EQ(tail.text, "through-the-agent\n");

  const auto [printed, status] = RunCommand(
      TesseraBinary() + " logs " + id + " --server http://" + server_->host() + ":" +
      std::to_string(server_->http_port()) + " --token " + server_->admin_token());
  EXPECT_EQ(status, 0) << printed;
  EXPECT_EQ(printed, "hello-through-the-agent\n");

  // With the agent gone, the server says the cluster cannot be asked.
  agent_->Kill();
  ASSERT_TRUE(WaitUntil([&] { return api.Get(logs).status == 503; })) << api.Get(logs).text;
  EXPECT_NE(api.Get(logs).text.find(kCluster), std::string::npos) << api.Get(logs).text;
}

// A server restart while the agent stays up: the task still running is kept (not launched
// again), and the task that ended while the server was down is reported with its own end (not
// run a second time). The grace is a minute so that only a failure to rejoin can lose them.
class AgentLocalRestartTest : public AgentLocalTest {
 protected:
  AgentLocalRestartTest() { lost_grace_ = "1m"; }
};

TEST_F(AgentLocalRestartTest, AServerRestartKeepsTheRunningTaskAndRunsNothingTwice) {
  ASSERT_TRUE(agent_->Start().ok()) << agent_->Log();
  const std::string sleeper_pids = dir_.Sub("sleeper-pids");
  const std::string once_pids = dir_.Sub("once-pids");
  const std::string release = dir_.Sub("release");
  std::string sleeper_id, once_id;
  {
    const RestApi api = Rest();
    ASSERT_TRUE(WaitUntil([&] { return ClusterIs(api, kCluster, true, 1); }));
    Json sleeper = ShellJob("sleeper", "echo $$ >> " + sleeper_pids + "; exec sleep 600");
    Json once = ShellJob("once", "echo $$ >> " + once_pids + "; while [ ! -e " + release +
                                     " ]; do sleep 0.05; done");
    for (Json* job : {&sleeper, &once}) {
      (*job)["spec"]["clusterSelector"] = {{"tessera.io/cluster", kCluster}};
    }
    sleeper_id = SubmitOk(sleeper);
    once_id = SubmitOk(once);
    ASSERT_EQ(api.WaitForPhase(sleeper_id, {"Running"})["status"]["phase"], "Running");
    ASSERT_EQ(api.WaitForPhase(once_id, {"Running"})["status"]["phase"], "Running");
    ASSERT_TRUE(WaitUntil([&] {
      return ReadPids(sleeper_pids).size() == 1 && ReadPids(once_pids).size() == 1;
    }));
  }

  // The server stops; meanwhile `once` finishes. Then the server starts again.
  ASSERT_EQ(server_->Stop(), 0);
  std::ofstream(release).flush();
  const pid_t once_pid = ReadPids(once_pids)[0];
  ASSERT_TRUE(WaitUntil([&] { return !ProcessAlive(once_pid); }));
  ASSERT_TRUE(server_->Start().ok());
  const RestApi api = Rest();
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(agent_->Log(), "(epoch 2)"); }))
      << agent_->Log();

  EXPECT_EQ(api.WaitForEnd(once_id)["status"]["phase"], "Succeeded");
  EXPECT_EQ(ReadPids(once_pids).size(), 1u) << "once ran a second time";
  EXPECT_EQ(api.Job(sleeper_id).body["status"]["phase"], "Running");
  ASSERT_EQ(ReadPids(sleeper_pids).size(), 1u) << "the sleeper was launched again";
  EXPECT_TRUE(ProcessAlive(ReadPids(sleeper_pids)[0]));
  EXPECT_FALSE(HasEvent(sleeper_id, "TaskEnded"));

  ASSERT_EQ(api.Post("/api/v1/jobs/" + sleeper_id + "/cancel", "").status, 200);
  EXPECT_EQ(api.WaitForEnd(sleeper_id)["status"]["phase"], "Cancelled");
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(ReadPids(sleeper_pids)[0]); }));
}

}  // namespace
}  // namespace tessera::integration

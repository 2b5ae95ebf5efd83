// The REST API end to end: a real `tessera server --dev` process with its SQLite store in a
// temporary directory, real task processes on the local cluster, driven over loopback HTTP.
// Every wait is bounded and generous; nothing asserts how fast anything is.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "process_tools.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"

namespace tessera::integration {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;

// Whether `types` holds `wanted` in this order (other types may come between).
bool InOrder(const std::vector<std::string>& types, const std::vector<std::string>& wanted) {
  size_t next = 0;
  for (const std::string& type : types) {
    if (next < wanted.size() && type == wanted[next]) ++next;
  }
  return next == wanted.size();
}

std::vector<std::string> Ids(const Json& list) {
  std::vector<std::string> ids;
  for (const Json& job : list["items"]) ids.push_back(job["metadata"].value("id", ""));
  return ids;
}

class ServerRestTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer("data", {"--rate-limit", "0"}); }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      const std::string log = server_->Log();
      std::cerr << "--- server log (tail) ---\n"
                << log.substr(log.size() > 8000 ? log.size() - 8000 : 0) << "\n";
    }
  }

  // Replaces the running server with a new one over dir_/data_name.
  void StartServer(const std::string& data_name, std::vector<std::string> args) {
    server_.reset();
    args.insert(args.end(), {"--local-gpus", "T4:2:16Gi"});
    server_ = std::make_unique<ServerProcess>(ServerOptions{
        .data_dir = dir_.Sub(data_name), .log_dir = dir_.path(), .extra_args = std::move(args)});
    const absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }

  RestApi Api(const std::string& token) const {
    return RestApi(server_->host(), server_->http_port(), token);
  }
  RestApi Admin() const { return Api(server_->admin_token()); }

  // Submits `job` as the admin (or `api`), expecting 201; returns its id ("" on failure).
  std::string Submit(const Json& job) { return Submit(Admin(), job); }
  static std::string Submit(const RestApi& api, const Json& job) {
    const HttpAnswer answer = api.Submit(job);
    EXPECT_EQ(answer.status, 201) << answer.text << answer.transport_error;
    if (answer.status != 201) return "";
    EXPECT_EQ(answer.Header("Location"), "/api/v1/jobs/" + answer.body["metadata"].value("id", ""));
    return answer.body["metadata"].value("id", "");
  }

  // The job's event types once its events end with `last` (stored events lag the job by at
  // most one write).
  std::vector<std::string> EventsEndingWith(const std::string& id, const std::string& last) {
    std::vector<std::string> types;
    WaitUntil([&] {
      const HttpAnswer answer = Admin().Get("/api/v1/jobs/" + id + "/events");
      types = EventTypes(answer.body);
      return !types.empty() && types.back() == last;
    });
    return types;
  }

  TempDir dir_{"tessera-it-rest"};
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerRestTest, CommandRunsToSucceeded) {
  const std::string id = Submit(ShellJob("hello", "echo hi; exit 0"));
  ASSERT_FALSE(id.empty());

  const Json job = Admin().WaitForEnd(id);
  ASSERT_TRUE(job.is_object());
  const Json& status = job["status"];
  EXPECT_EQ(status["phase"], "Succeeded") << job.dump();
  EXPECT_EQ(status["cluster"], "local");
  ASSERT_EQ(status["tasks"].size(), 1u);
  EXPECT_EQ(status["tasks"][0]["name"], "main-0");
  EXPECT_EQ(status["tasks"][0]["exitCode"], 0);
  EXPECT_EQ(status["tasks"][0]["phase"], "Succeeded");
  EXPECT_NE(status["tasks"][0].value("node", ""), "");
  EXPECT_TRUE(status.contains("submitTime"));
  EXPECT_TRUE(status.contains("startTime"));
  EXPECT_TRUE(status.contains("endTime"));
  EXPECT_EQ(job["metadata"]["tenant"], "admin");

  const std::vector<std::string> types = EventsEndingWith(id, "Succeeded");
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "Submitted");
  EXPECT_EQ(types.back(), "Succeeded");
  EXPECT_TRUE(InOrder(
      types, {"Submitted", "Admitted", "Placed", "Bound", "Running", "TaskEnded", "Succeeded"}))
      << ::testing::PrintToString(types);
  const Json events = Admin().Get("/api/v1/jobs/" + id + "/events").body;
  for (size_t i = 0; i < events["items"].size(); ++i) {
    EXPECT_EQ(events["items"][i]["sequence"], static_cast<int64_t>(i + 1));
    EXPECT_EQ(events["items"][i]["jobId"], id);
  }
  EXPECT_EQ(events["items"].back()["phase"], "Succeeded");
}

TEST_F(ServerRestTest, FailingCommandFailsWithItsExitCode) {
  Json job = ShellJob("fails", "exit 3");
  job["spec"]["restartPolicy"] = {{"onFailure", "fail"}};
  const std::string id = Submit(job);
  ASSERT_FALSE(id.empty());

  const Json ended = Admin().WaitForEnd(id);
  ASSERT_TRUE(ended.is_object());
  EXPECT_EQ(ended["status"]["phase"], "Failed") << ended.dump();
  EXPECT_EQ(ended["status"]["tasks"][0]["exitCode"], 3);
  EXPECT_TRUE(ended["status"].contains("endTime"));
  const std::vector<std::string> types = EventsEndingWith(id, "Failed");
  EXPECT_THAT(types, Not(Contains("Requeued")));
}

TEST_F(ServerRestTest, CancelStopsARunningTask) {
  const std::string pid_file = dir_.Sub("cancel.pid");
  const std::string id =
      Submit(ShellJob("sleeper", absl::StrCat("echo $$ > ", pid_file, "; exec sleep 60")));
  ASSERT_FALSE(id.empty());
  const Json running = Admin().WaitForPhase(id, {"Running"});
  ASSERT_EQ(running["status"]["phase"], "Running") << running.dump();
  ASSERT_TRUE(WaitUntil([&] { return ReadPidFile(pid_file) > 0; }));
  const pid_t pid = ReadPidFile(pid_file);
  EXPECT_TRUE(ProcessAlive(pid));

  const HttpAnswer cancel = Admin().Post("/api/v1/jobs/" + id + "/cancel", "");
  EXPECT_EQ(cancel.status, 200) << cancel.text;
  EXPECT_EQ(cancel.body["metadata"]["id"], id);

  const Json ended = Admin().WaitForEnd(id);
  EXPECT_EQ(ended["status"]["phase"], "Cancelled") << ended.dump();
  EXPECT_TRUE(ended["status"].contains("endTime"));
  EXPECT_TRUE(WaitUntil([&] { return !ProcessAlive(pid); }, std::chrono::seconds(60)))
      << "the task's process " << pid << " is still alive after its job was cancelled";
  const std::vector<std::string> types = EventsEndingWith(id, "Cancelled");
  EXPECT_TRUE(InOrder(types, {"Running", "CancelRequested", "Cancelled"}))
      << ::testing::PrintToString(types);

  // Cancelling a terminal job returns it unchanged.
  const HttpAnswer again = Admin().Delete("/api/v1/jobs/" + id);
  EXPECT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body["status"]["phase"], "Cancelled");
}

TEST_F(ServerRestTest, TimeLimitFailsTheJob) {
  Json job = ShellJob("limited", "exec sleep 30");
  job["spec"]["timeLimit"] = "1s";
  const std::string id = Submit(job);
  ASSERT_FALSE(id.empty());

  const Json ended = Admin().WaitForEnd(id);
  EXPECT_EQ(ended["status"]["phase"], "Failed") << ended.dump();
  EXPECT_EQ(ended["status"]["reason"], "TimeLimitExceeded") << ended.dump();
  const std::vector<std::string> types = EventsEndingWith(id, "Failed");
  EXPECT_THAT(types, Not(Contains("Requeued")));
}

TEST_F(ServerRestTest, LogsServeStdoutAndStderr) {
  const std::string id = Submit(ShellJob("logs", "echo out-line; echo err-line >&2"));
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Admin().WaitForEnd(id)["status"]["phase"], "Succeeded");

  const std::string logs = "/api/v1/jobs/" + id + "/logs";
  HttpAnswer out;
  // The log is complete once the server says so.
  ASSERT_TRUE(WaitUntil([&] {
    out = Admin().Get(logs);
    return out.status == 200 && out.Header("X-Tessera-Log-End") == "true";
  })) << out.status
      << " " << out.text;
  EXPECT_EQ(out.text, "out-line\n");
  EXPECT_EQ(out.Header("X-Tessera-Next-Offset"), "9");

  const HttpAnswer err = Admin().Get(logs + "?stream=stderr&task=main-0");
  EXPECT_EQ(err.status, 200) << err.text;
  EXPECT_EQ(err.text, "err-line\n");

  const HttpAnswer tail = Admin().Get(logs + "?offset=4");
  EXPECT_EQ(tail.status, 200) << tail.text;
  EXPECT_EQ(tail.text, "line\n");

  const HttpAnswer no_task = Admin().Get(logs + "?task=nope-0");
  EXPECT_EQ(no_task.status, 404) << no_task.text;
}

TEST_F(ServerRestTest, RetryWithTheSameRequestIdReturnsTheSameJob) {
  Json job = ShellJob("idem", "exec sleep 30");
  job["metadata"]["requestId"] = "req-0001";
  const HttpAnswer first = Admin().Submit(job);
  ASSERT_EQ(first.status, 201) << first.text;
  const std::string id = first.body["metadata"]["id"];

  const HttpAnswer retry = Admin().Submit(job);
  EXPECT_EQ(retry.status, 200) << retry.text;
  EXPECT_EQ(retry.body["metadata"]["id"], id);
  EXPECT_EQ(retry.body["metadata"]["requestId"], "req-0001");

  const HttpAnswer listed = Admin().Get("/api/v1/jobs?name=idem");
  ASSERT_EQ(listed.status, 200) << listed.text;
  EXPECT_THAT(Ids(listed.body), ElementsAre(id));

  // Another request with the name of a job that has not ended is a conflict.
  job["metadata"]["requestId"] = "req-0002";
  const HttpAnswer clash = Admin().Submit(job);
  EXPECT_EQ(clash.status, 409) << clash.text;
  EXPECT_EQ(clash.ErrorCode(), "ALREADY_EXISTS");

  EXPECT_EQ(Admin().Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(Admin().WaitForEnd(id)["status"]["phase"], "Cancelled");
}

TEST_F(ServerRestTest, BatchSubmitsEachJobDurablyAndAnswersPerItem) {
  Json first = ShellJob("batch-a", "echo a; exit 0");
  first["metadata"]["requestId"] = "batch-r1";
  Json bad_queue = ShellJob("batch-b", "exit 0");
  bad_queue["spec"]["queue"] = "no-such-queue";
  Json repeat = ShellJob("batch-c", "exit 0");
  repeat["metadata"]["requestId"] = "batch-r1";
  const Json batch = {{"items", {first, bad_queue, repeat}}};
  const HttpAnswer answer = Admin().Post("/api/v1/jobs:batch", batch.dump());
  ASSERT_EQ(answer.status, 200) << answer.text;
  const Json& items = answer.body["items"];
  ASSERT_EQ(items.size(), 3u) << answer.text;
  const std::string id = items[0]["job"]["metadata"].value("id", "");
  EXPECT_EQ(items[0]["created"], true);
  EXPECT_EQ(items[1]["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(items[1]["error"]["field"], "items[1].spec.queue");
  EXPECT_EQ(items[2]["job"]["metadata"]["id"], id);
  EXPECT_EQ(items[2]["created"], false);
  EXPECT_EQ(Admin().WaitForEnd(id)["status"]["phase"], "Succeeded");

  // Durable: a restarted server has the job, and the same batch answers it again.
  StartServer("data", {"--rate-limit", "0"});
  EXPECT_EQ(Admin().Get("/api/v1/jobs/" + id).body["status"]["phase"], "Succeeded");
  const HttpAnswer replay = Admin().Post("/api/v1/jobs:batch", batch.dump());
  ASSERT_EQ(replay.status, 200) << replay.text;
  EXPECT_EQ(replay.body["items"][0]["job"]["metadata"]["id"], id);
  EXPECT_EQ(replay.body["items"][0]["created"], false);
  EXPECT_THAT(Ids(Admin().Get("/api/v1/jobs").body), ElementsAre(id));
}

TEST_F(ServerRestTest, TenantsSeeOnlyTheirOwnJobs) {
  const std::string token_a = Admin().IssueToken("team-a");
  const std::string token_b = Admin().IssueToken("team-b");
  ASSERT_THAT(token_a, HasSubstr("tsr_"));
  ASSERT_THAT(token_b, HasSubstr("tsr_"));
  const RestApi a = Api(token_a);
  const RestApi b = Api(token_b);

  const std::string id = Submit(a, ShellJob("private", "exec sleep 30"));
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(a.Job(id).body["metadata"]["tenant"], "team-a");
  const std::string id_b = Submit(b, ShellJob("other", "exit 0"));

  const HttpAnswer get = b.Job(id);
  EXPECT_EQ(get.status, 404) << get.text;
  EXPECT_EQ(get.ErrorCode(), "NOT_FOUND");
  EXPECT_EQ(b.Post("/api/v1/jobs/" + id + "/cancel", "").status, 404);
  EXPECT_EQ(b.Delete("/api/v1/jobs/" + id).status, 404);
  EXPECT_EQ(b.Get("/api/v1/jobs/" + id + "/events").status, 404);
  EXPECT_EQ(b.Get("/api/v1/jobs/" + id + "/logs").status, 404);
  EXPECT_EQ(b.Get("/api/v1/jobs/" + id + "/explain").status, 404);
  // The same answer as for a job that does not exist.
  EXPECT_EQ(b.Job("999999").status, 404);

  const HttpAnswer b_list = b.Get("/api/v1/jobs");
  ASSERT_EQ(b_list.status, 200) << b_list.text;
  EXPECT_THAT(Ids(b_list.body), Not(Contains(id)));
  EXPECT_THAT(Ids(b_list.body), Contains(id_b));
  // Asking for another tenant's jobs is refused outright, naming the filter.
  const HttpAnswer b_asks_a = b.Get("/api/v1/jobs?tenant=team-a");
  EXPECT_EQ(b_asks_a.status, 403) << b_asks_a.text;
  EXPECT_EQ(b_asks_a.body["error"]["field"], "tenant") << b_asks_a.text;
  EXPECT_THAT(Ids(a.Get("/api/v1/jobs").body), ElementsAre(id));
  EXPECT_THAT(Ids(Admin().Get("/api/v1/jobs").body), IsSupersetOf({id, id_b}));

  // B's cancel did nothing: A's job is still alive.
  EXPECT_THAT(std::string(a.Job(id).body["status"]["phase"]),
              Not(testing::AnyOf("Cancelled", "Failed")));

  // Only an admin manages tokens; no token at all is 401.
  EXPECT_EQ(a.Post("/api/v1/tokens", R"({"tenant": "team-c"})").status, 403);
  const HttpAnswer anonymous = Api("").Get("/api/v1/jobs");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.Header("WWW-Authenticate").rfind("Bearer", 0), 0u);
  EXPECT_EQ(Api("tsr_" + std::string(64, '0')).Get("/api/v1/jobs").status, 401);

  EXPECT_EQ(a.Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  EXPECT_EQ(a.WaitForEnd(id)["status"]["phase"], "Cancelled");
}

TEST_F(ServerRestTest, RateLimitAnswers429WithRetryAfter) {
  StartServer("data-limited", {"--rate-limit", "0.5"});
  const std::string token_b = Admin().IssueToken("team-b");
  ASSERT_FALSE(token_b.empty());

  // The bucket starts full (its burst); drain it.
  HttpAnswer answer;
  for (int i = 0; i < 2000; ++i) {
    answer = Admin().Get("/api/v1/jobs");
    if (answer.status != 200) break;
  }
  ASSERT_EQ(answer.status, 429) << answer.text << answer.transport_error;
  int64_t retry_after = 0;
  EXPECT_TRUE(absl::SimpleAtoi(answer.Header("Retry-After"), &retry_after))
      << "Retry-After: \"" << answer.Header("Retry-After") << "\"";
  EXPECT_GE(retry_after, 1);
  EXPECT_EQ(answer.ErrorCode(), "RESOURCE_EXHAUSTED");

  // Health, readiness and metrics are not limited; other tenants have their own bucket.
  EXPECT_EQ(Api("").Get("/healthz").status, 200);
  EXPECT_EQ(Api("").Get("/readyz").status, 200);
  EXPECT_EQ(Api("").Get("/metrics").status, 200);
  EXPECT_EQ(Api(token_b).Get("/api/v1/jobs").status, 200);
}

struct BadSpecCase {
  std::string name;
  std::string body;   // a JSON document
  std::string field;  // the field the 400 names
};

class ServerRestBadSpecTest : public ServerRestTest,
                              public ::testing::WithParamInterface<BadSpecCase> {};

TEST_P(ServerRestBadSpecTest, AnswersBadRequestNamingTheField) {
  const HttpAnswer answer = Admin().Post("/api/v1/jobs", GetParam().body);
  EXPECT_EQ(answer.status, 400) << answer.text;
  EXPECT_EQ(answer.ErrorCode(), "INVALID_ARGUMENT") << answer.text;
  EXPECT_EQ(answer.ErrorField(), GetParam().field) << answer.text;
  EXPECT_THAT(answer.body["error"].value("message", ""), HasSubstr(GetParam().field));
  // Nothing was stored.
  EXPECT_THAT(Admin().Get("/api/v1/jobs").body["items"], IsEmpty());
}

std::string Doc(const std::string& metadata, const std::string& spec,
                const std::string& extra = "") {
  return absl::StrCat(R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": )", metadata,
                      R"(, "spec": )", spec, extra, "}");
}
constexpr char kTask[] = R"({"tasks": [{"name": "main", "command": ["true"]}]})";

INSTANTIATE_TEST_SUITE_P(
    Cases, ServerRestBadSpecTest,
    ::testing::Values(BadSpecCase{"NegativeGpu", Doc("{}", R"({"tasks": [{"name": "main",
            "resources": {"gpu": -1}, "command": ["true"]}]})"),
                                  "spec.tasks[0].resources.gpu"},
                      BadSpecCase{"UnknownKey", Doc("{}", R"({"tasks": [{"name": "main",
            "resources": {"gpuu": 1}, "command": ["true"]}]})"),
                                  "spec.tasks[0].resources.gpuu"},
                      BadSpecCase{"BadRestartPolicy",
                                  Doc("{}", R"({"restartPolicy": {"onFailure": "maybe"},
            "tasks": [{"name": "main", "command": ["true"]}]})"),
                                  "spec.restartPolicy.onFailure"},
                      BadSpecCase{"IdFromTheClient", Doc(R"({"id": "7"})", kTask), "metadata.id"},
                      BadSpecCase{"StatusFromTheClient",
                                  Doc("{}", kTask, R"(, "status": {"phase": "Running"})"),
                                  "status"}),
    [](const ::testing::TestParamInfo<BadSpecCase>& info) { return info.param.name; });

TEST_F(ServerRestTest, YamlBadSpecNamesTheField) {
  const HttpAnswer answer = Admin().Post("/api/v1/jobs",
                                         "apiVersion: tessera/v1\nkind: Job\nspec:\n  tasks:\n"
                                         "  - name: main\n    resources: {gpu: -1}\n",
                                         "application/yaml");
  EXPECT_EQ(answer.status, 400) << answer.text;
  EXPECT_EQ(answer.ErrorField(), "spec.tasks[0].resources.gpu") << answer.text;
}

TEST_F(ServerRestTest, MetricsExposeTheSchedulerAndTheJobs) {
  const std::string id = Submit(ShellJob("metered", "exit 0"));
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Admin().WaitForEnd(id)["status"]["phase"], "Succeeded");

  const HttpAnswer metrics = Api("").Get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.text, HasSubstr("tessera_scheduling_cycle_seconds"));
  EXPECT_THAT(metrics.text, HasSubstr("# TYPE tessera_job_placement_latency_seconds histogram"));
  EXPECT_THAT(metrics.text, HasSubstr("tessera_job_placement_latency_seconds_bucket{le=\"0.05\"}"));
  EXPECT_THAT(metrics.text, HasSubstr("# TYPE tessera_jobs gauge"));
  EXPECT_THAT(metrics.text, HasSubstr("tessera_jobs{"));
  EXPECT_THAT(metrics.text, HasSubstr("tessera_http_requests_total{"));
}

TEST_F(ServerRestTest, WatchStreamsAJobsEventsToSucceeded) {
  const std::string id = Submit(ShellJob("watched", "echo hi"));
  ASSERT_FALSE(id.empty());
  std::vector<std::string> types;
  std::vector<int64_t> sequences;
  Admin().StreamLines("/api/v1/watch?job=" + id + "&afterSequence=0", [&](const std::string& line) {
    const Json event = Json::parse(line, nullptr, false);
    if (!event.is_object() || !event.contains("type")) return true;  // a keep-alive "{}"
    EXPECT_EQ(event["jobId"], id);
    types.push_back(event["type"]);
    sequences.push_back(event["sequence"]);
    return types.back() != "Succeeded" && types.back() != "Failed";
  });
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "Submitted");
  EXPECT_EQ(types.back(), "Succeeded") << ::testing::PrintToString(types);
  for (size_t i = 0; i < sequences.size(); ++i)
    EXPECT_EQ(sequences[i], static_cast<int64_t>(i + 1));
}

TEST_F(ServerRestTest, StopEndsOpenWatchStreamsAndExitsCleanly) {
  std::atomic<int> events{0};
  std::atomic<bool> ended{false};
  std::thread watcher([&, api = Admin()] {
    api.StreamLines("/api/v1/watch", [&](const std::string& line) {
      if (line.find("\"type\"") != std::string::npos) ++events;
      return true;
    });
    ended = true;
  });
  // Submit jobs until the watcher sees an event: its stream is open.
  const bool open = WaitUntil([&] {
    Submit(ShellJob("", "exit 0"));
    return WaitUntil([&] { return events.load() > 0; }, std::chrono::seconds(2));
  });
  EXPECT_TRUE(open) << "the watch stream delivered nothing";

  const int status = server_->Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "wait status " << status << " (the server did not stop by itself on SIGTERM)";
  EXPECT_TRUE(WaitUntil([&] { return ended.load(); }, std::chrono::seconds(60)));
  watcher.join();
}

TEST_F(ServerRestTest, ListPagesThroughJobs) {
  std::vector<std::string> ids;
  for (const char* name : {"page-a", "page-b", "page-c"})
    ids.push_back(Submit(ShellJob(name, "exit 0")));
  const HttpAnswer first = Admin().Get("/api/v1/jobs?limit=2");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_THAT(Ids(first.body), ElementsAre(ids[0], ids[1]));
  const std::string token = first.body.value("nextPageToken", "");
  ASSERT_NE(token, "");
  const HttpAnswer second = Admin().Get("/api/v1/jobs?limit=2&pageToken=" + token);
  ASSERT_EQ(second.status, 200) << second.text;
  EXPECT_THAT(Ids(second.body), ElementsAre(ids[2]));
  EXPECT_EQ(second.body.value("nextPageToken", "?"), "");

  const HttpAnswer bad = Admin().Get("/api/v1/jobs?limit=abc");
  EXPECT_EQ(bad.status, 400) << bad.text;
  EXPECT_EQ(bad.ErrorField(), "limit");
}

TEST_F(ServerRestTest, OversizedBodyIs413) {
  Json job = ShellJob("big", "exit 0");
  job["metadata"]["labels"] = {{"padding", std::string(2 << 20, 'x')}};
  const HttpAnswer answer = Admin().Submit(job);
  EXPECT_EQ(answer.status, 413) << answer.text.substr(0, 200);
  EXPECT_EQ(answer.ErrorCode(), "RESOURCE_EXHAUSTED");
}

// Reading the nodes while tasks end: both must go on (the node view and the task ends share
// the manager's locks).
TEST_F(ServerRestTest, NodesAnswerWhileTasksEnd) {
  constexpr int kJobs = 40;
  std::vector<std::string> ids;
  for (int i = 0; i < kJobs; ++i) {
    ids.push_back(Submit(ShellJob("", "exit 0")));
    ASSERT_FALSE(ids.back().empty());
  }
  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  std::mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> readers(2);
  for (std::thread& reader : readers) {
    reader = std::thread([&] {
      while (!done) {
        const HttpAnswer nodes = Admin().Get("/api/v1/nodes");
        if (nodes.status == 200) {
          ++answered;
          continue;
        }
        std::lock_guard lock(mu);
        failures.push_back(absl::StrCat(nodes.status, " ", nodes.text, nodes.transport_error));
        return;
      }
    });
  }
  // One read per poll, so that a server that stopped answering ends the wait in time.
  size_t next = 0;
  const bool ended = WaitUntil([&] {
    while (next < ids.size()) {
      const HttpAnswer job = Admin().Job(ids[next]);
      if (job.status != 200 || !IsTerminalPhase(job.body["status"].value("phase", ""))) {
        return false;
      }
      ++next;
    }
    return true;
  });
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_TRUE(ended) << "job " << (next < ids.size() ? ids[next] : "") << " and "
                     << ids.size() - next - 1 << " after it never ended (or no answer)";
  EXPECT_THAT(failures, IsEmpty()) << "GET /api/v1/nodes failed";
  EXPECT_GT(answered.load(), 0);
}

TEST_F(ServerRestTest, RestartKeepsJobsAndRunningTasks) {
  const std::string done_id = Submit(ShellJob("before", "echo first"));
  ASSERT_FALSE(done_id.empty());
  const Json done = Admin().WaitForEnd(done_id);
  ASSERT_EQ(done["status"]["phase"], "Succeeded");

  // A task that runs until the test lets it finish (at most two minutes).
  const std::string pid_file = dir_.Sub("restart.pid");
  const std::string go_file = dir_.Sub("restart.go");
  const std::string id = Submit(
      ShellJob("survivor", absl::StrCat("echo $$ > ", pid_file, "; i=0; while [ ! -f ", go_file,
                                        " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; "
                                        "[ -f ",
                                        go_file, " ] && echo finished")));
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Admin().WaitForPhase(id, {"Running"})["status"]["phase"], "Running");
  ASSERT_TRUE(WaitUntil([&] { return ReadPidFile(pid_file) > 0; }));
  const pid_t pid = ReadPidFile(pid_file);

  const int status = server_->Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  EXPECT_TRUE(ProcessAlive(pid)) << "the task died with the server";

  const absl::Status restarted = server_->Start();
  ASSERT_TRUE(restarted.ok()) << restarted;

  const HttpAnswer kept = Admin().Job(done_id);
  ASSERT_EQ(kept.status, 200) << kept.text;
  EXPECT_EQ(kept.body["status"]["phase"], "Succeeded");
  EXPECT_EQ(kept.body["status"]["endTime"], done["status"]["endTime"]);
  const HttpAnswer survivor = Admin().Job(id);
  ASSERT_EQ(survivor.status, 200) << survivor.text;
  EXPECT_EQ(survivor.body["status"]["phase"], "Running") << survivor.text;
  EXPECT_TRUE(ProcessAlive(pid));

  std::ofstream(go_file) << "go\n";
  const Json ended = Admin().WaitForEnd(id);
  EXPECT_EQ(ended["status"]["phase"], "Succeeded") << ended.dump();
  EXPECT_EQ(ended["status"]["tasks"][0]["exitCode"], 0);
  const std::vector<std::string> types = EventsEndingWith(id, "Succeeded");
  EXPECT_THAT(types, Not(Contains("Lost")));
  EXPECT_THAT(types, Not(Contains("Requeued")));
  EXPECT_EQ(Admin().Get("/api/v1/jobs/" + id + "/logs").text, "finished\n");

  // New jobs get new ids after the restart.
  const std::string after = Submit(ShellJob("after", "exit 0"));
  EXPECT_NE(after, id);
  EXPECT_NE(after, done_id);
  EXPECT_EQ(Admin().WaitForEnd(after)["status"]["phase"], "Succeeded");
  EXPECT_THAT(Ids(Admin().Get("/api/v1/jobs").body), ElementsAre(done_id, id, after));
}

// Runs the real `tessera` client verb `args` against the server; its exit status and output.
std::pair<int, std::string> RunCli(const ServerProcess& server, const TempDir& dir,
                                   std::vector<std::string> args) {
  static int runs = 0;
  const std::string log = dir.Sub(absl::StrCat("cli-", ++runs, ".log"));
  std::ofstream(log).flush();
  args.insert(args.begin(), TesseraBinary());
  args.insert(args.end(),
              {"--server", absl::StrCat("http://", server.host(), ":", server.http_port()),
               "--token", server.admin_token()});
  absl::StatusOr<pid_t> pid = SpawnLogged(args, log);
  if (!pid.ok()) return {-1, std::string(pid.status().message())};
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0) {
    if (errno != EINTR) return {-1, absl::StrCat("waitpid: ", std::strerror(errno))};
  }
  std::ifstream in(log);
  std::stringstream output;
  output << in.rdbuf();  // a read error leaves the output short (and the test's checks fail)
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output.str()};
}

TEST_F(ServerRestTest, ADrainThroughTheCliRequeuesTheRunningJobAndSurvivesARestart) {
  const HttpAnswer nodes = Admin().Get("/api/v1/nodes");
  ASSERT_EQ(nodes.status, 200) << nodes.text;
  ASSERT_EQ(nodes.body["items"].size(), 1u);
  const std::string target = absl::StrCat(nodes.body["items"][0].value("cluster", ""), "/",
                                          nodes.body["items"][0].value("name", ""));
  // A task that ignores SIGTERM, so that it is still there when the drain answers (it is
  // killed when the drain's grace ends).
  const std::string id =
      Submit(ShellJob("long", "trap '' TERM; while true; do sleep 0.1; done"));
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(Admin().WaitForPhase(id, {"Running"})["status"]["phase"], "Running");

  auto [rc, out] =
      RunCli(*server_, dir_, {"node", "drain", target, "--grace", "2s", "--reason", "integration"});
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("node " + target + " draining: 1 task(s) being evicted"));
  // Evicted whole and requeued; with its only node drained it waits.
  const std::vector<std::string> types = EventsEndingWith(id, "Requeued");
  EXPECT_TRUE(InOrder(types, {"Running", "Evicted", "Requeued"}));
  // The node's state, or "" while the server lists no node (as just after a start).
  const auto node_state = [&] {
    const HttpAnswer answer = Admin().Get("/api/v1/nodes");
    if (!answer.body.is_object()) return std::string();
    const Json items = answer.body.value("items", Json::array());
    if (!items.is_array() || items.empty() || !items[0].is_object()) return std::string();
    return items[0].value("state", "");
  };
  ASSERT_TRUE(WaitUntil([&] { return node_state() == "Drained"; }));
  EXPECT_EQ(Admin().Job(id).body["status"]["phase"], "Pending");
  std::tie(rc, out) = RunCli(*server_, dir_, {"nodes", "-o", "wide"});
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("Drained"));
  EXPECT_THAT(out, HasSubstr("integration [admin "));

  // The state is stored: a restarted server keeps the node drained and the job waiting.
  ASSERT_EQ(server_->Stop(), 0);
  ASSERT_TRUE(server_->Start().ok());
  ASSERT_TRUE(WaitUntil([&] { return !node_state().empty(); }));
  EXPECT_EQ(node_state(), "Drained");
  EXPECT_EQ(Admin().Job(id).body["status"]["phase"], "Pending");

  std::tie(rc, out) = RunCli(*server_, dir_, {"node", "drain", "nowhere/x"});
  EXPECT_EQ(rc, 1) << out;
  EXPECT_THAT(out, HasSubstr("nowhere"));
  std::tie(rc, out) = RunCli(*server_, dir_, {"node", "uncordon", target});
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("uncordoned"));
  EXPECT_EQ(Admin().WaitForPhase(id, {"Running"})["status"]["phase"], "Running");
}

}  // namespace
}  // namespace tessera::integration

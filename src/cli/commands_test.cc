// The client verbs against a loopback HTTP server answering in docs/api.md's shapes.
#include <filesystem>
#include <fstream>

#include "cli/exit_status.h"
#include "cli/inventory_commands.h"
#include "cli/job_commands.h"
#include "cli/queue_commands.h"
#include "cli/submit_command.h"
#include "cli/testing/fake_api_server.h"
#include "cli/testing/verb_harness.h"
#include "cli/token_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::cli {
namespace {

using ::tessera::cli::testing::ErrorBody;
using ::tessera::cli::testing::FakeApiServer;
using ::tessera::cli::testing::VerbHarness;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPendingJob[] = R"({"apiVersion": "tessera/v1", "kind": "Job",
  "metadata": {"name": "train", "id": "42", "tenant": "team-a", "labels": {"team": "vision"}},
  "spec": {"queue": "default", "priority": 0, "preemptible": true, "timeLimit": "2h",
           "tolerations": [{"key": "tessera.io/simulated", "operator": "Exists"}],
           "tasks": [{"name": "worker", "replicas": 2,
                      "resources": {"cpu": "8", "memory": "64Gi", "gpu": 4, "gpuModel": ["H100-80GB"]},
                      "command": ["python", "train.py"], "args": ["--epochs", "10"]}]},
  "status": {"phase": "Pending", "reason": "InsufficientResources",
             "message": "task worker-0: 0/4 nodes: 3 insufficient gpu, 1 node(s) had untolerated taint",
             "tasks": [{"name": "worker-0", "phase": "Pending", "exitCode": null},
                       {"name": "worker-1", "phase": "Pending", "exitCode": null}],
             "submitTime": "2026-11-29T10:00:00Z"}})";

std::string Job(const std::string& id, const std::string& phase, const std::string& node = "") {
  nlohmann::json job = nlohmann::json::parse(kPendingJob);
  job["metadata"]["id"] = id;
  job["status"]["phase"] = phase;
  job["status"]["reason"] = "";
  if (!node.empty()) {
    for (auto& t : job["status"]["tasks"]) {
      t["node"] = node;
      t["phase"] = phase;
    }
  }
  return job.dump();
}

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() { harness_.SetEnv("TESSERA_SERVER", server_.Url()); }

  int Run(VerbHarness::Verb verb, std::vector<std::string> args) {
    return harness_.Run(verb, std::move(args));
  }

  FakeApiServer server_;
  VerbHarness harness_;
};

TEST_F(CommandsTest, SubmitSendsTheDocumentAndPrintsTheId) {
  server_.On("POST", "/api/v1/jobs", 201, Job("42", "Pending"));
  harness_.SetEnv("TESSERA_TOKEN", "tsr_env");
  ASSERT_EQ(Run(&RunSubmitCommand, {"submit", "--gpus", "0.5", "--mem", "1Gi", "-J", "train",
                                    "--time", "90", "--", "python", "train.py", "--lr", "3"}),
            kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(), "submitted job 42\n");
  const std::vector<testing::RecordedRequest> posts = server_.Requests("POST", "/api/v1/jobs");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].authorization, "Bearer tsr_env");
  EXPECT_EQ(posts[0].content_type, "application/json");
  const nlohmann::json sent = nlohmann::json::parse(posts[0].body);
  EXPECT_EQ(sent["metadata"]["name"], "train");
  EXPECT_EQ(sent["spec"]["timeLimit"], "1h30m");
  EXPECT_EQ(sent["spec"]["tasks"][0]["resources"]["gpu"], 0.5);
  EXPECT_EQ(sent["spec"]["tasks"][0]["resources"]["memory"], "1Gi");
  EXPECT_EQ(sent["spec"]["tasks"][0]["command"],
            nlohmann::json::array({"python", "train.py", "--lr", "3"}));
}

TEST_F(CommandsTest, SubmitQuietPrintsOnlyTheIdAndFlagsBeatTheEnvironment) {
  FakeApiServer other;
  other.On("POST", "/api/v1/jobs", 201, Job("7", "Pending"));
  ASSERT_EQ(Run(&RunSubmitCommand,
                {"submit", "-q", "--server", other.Url(), "--token", "tsr_flag", "--", "true"}),
            kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(), "7\n");
  EXPECT_EQ(other.Requests()[0].authorization, "Bearer tsr_flag");
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(CommandsTest, SubmitRepeatedRequestIdSaysSo) {
  server_.On("POST", "/api/v1/jobs", 200, Job("42", "Running"));
  ASSERT_EQ(Run(&RunSubmitCommand, {"submit", "--request-id", "r1", "--", "true"}), kExitOk);
  EXPECT_EQ(harness_.out(), "job 42 was already submitted with this request id\n");
}

TEST_F(CommandsTest, SubmitFromAFile) {
  const std::string path = ::testing::TempDir() + "/cli_job.yaml";
  std::ofstream(path) << "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: from-file}\n"
                         "spec:\n  tasks:\n    - name: main\n      command: [sleep, '5']\n";
  server_.On("POST", "/api/v1/jobs", 201, Job("43", "Pending"));
  ASSERT_EQ(Run(&RunSubmitCommand, {"submit", "-f", path, "-q"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "43\n");
  const nlohmann::json sent = nlohmann::json::parse(server_.Requests()[0].body);
  EXPECT_EQ(sent["metadata"]["name"], "from-file");

  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "-f", path, "--gpus", "1"}), kExitUsage);
  EXPECT_EQ(harness_.err(),
            "error: --gpus cannot be combined with -f: the document describes the whole job\n");
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "-f", path, "--", "true"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("a command cannot be combined with -f"));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "-f", path, "--env", "A=1", "--", "-N", "4"}),
            kExitUsage);
  EXPECT_EQ(harness_.err(),
            "error: --env cannot be combined with -f: the document describes the whole job\n");

  std::ofstream(path) << "apiVersion: tessera/v1\nkind: Job\nspec:\n  tasks:\n"
                         "    - name: main\n      resources: {gpuu: 1}\n";
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "-f", path}), kExitUsage);
  EXPECT_EQ(harness_.err(), "error: " + path +
                                ":6:19: spec.tasks[0].resources.gpuu: unknown key (did you mean "
                                "\"gpu\"?)\n");
  EXPECT_EQ(server_.Requests().size(), 1u);
}

// Everything after the first "--" is the command, verbatim, whatever option comes before it:
// CLI11 alone ends a repeatable option's values at "--" and reads on as submit's flags.
struct DashesCase {
  std::string name;
  std::vector<std::string> flags;  // before "--"
  std::string field;               // JSON pointer into the submitted document
  nlohmann::json value;            // what the flags set there
};

void PrintTo(const DashesCase& c, std::ostream* os) { *os << c.name; }

class SubmitCommandAfterDashesTest : public CommandsTest,
                                     public ::testing::WithParamInterface<DashesCase> {};

TEST_P(SubmitCommandAfterDashesTest, IsTheCommandVerbatim) {
  const std::vector<std::string> command = {
      "./train.sh", "-N",    "4",       "-J",     "evil", "-t", "5",
      "--dry-run",  "-c",    "echo $A", "--env",  "B=2",  "-f", "job.yaml",
      "--cluster",  "other", "--",      "--help", "-q"};
  server_.On("POST", "/api/v1/jobs", 201, Job("42", "Pending"));
  std::vector<std::string> args = {"submit"};
  args.insert(args.end(), GetParam().flags.begin(), GetParam().flags.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  ASSERT_EQ(Run(&RunSubmitCommand, args), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "submitted job 42\n");
  const std::vector<testing::RecordedRequest> posts = server_.Requests("POST", "/api/v1/jobs");
  ASSERT_EQ(posts.size(), 1u);
  const nlohmann::json sent = nlohmann::json::parse(posts[0].body);
  const nlohmann::json& task = sent["spec"]["tasks"][0];
  EXPECT_EQ(task["command"], nlohmann::json(command));
  EXPECT_EQ(sent.at(nlohmann::json::json_pointer(GetParam().field)), GetParam().value);
  EXPECT_EQ(task.value("replicas", 1), 1);
  EXPECT_FALSE(sent["metadata"].contains("name"));
  EXPECT_FALSE(sent["spec"].contains("timeLimit"));
  EXPECT_FALSE(task.contains("env") && task["env"].contains("B"));
}

INSTANTIATE_TEST_SUITE_P(
    EveryKindOfOption, SubmitCommandAfterDashesTest,
    ::testing::Values(
        DashesCase{"Env", {"--env", "A=1"}, "/spec/tasks/0/env/A", "1"},
        DashesCase{"EnvRepeated", {"--env", "A=1", "--env", "C=3"}, "/spec/tasks/0/env/C", "3"},
        DashesCase{"EnvWithEquals", {"--env=A=1"}, "/spec/tasks/0/env/A", "1"},
        DashesCase{"Label", {"--label", "k=v"}, "/metadata/labels/k", "v"},
        DashesCase{"LabelRepeated",
                   {"--label", "k=v", "--label", "team=vision"},
                   "/metadata/labels/team",
                   "vision"},
        DashesCase{"GpuModel",
                   {"--gpus", "1", "--gpu-model", "H100-80GB"},
                   "/spec/tasks/0/resources/gpuModel",
                   nlohmann::json::array({"H100-80GB"})},
        DashesCase{"GpuModelRepeated",
                   {"--gpus", "1", "--gpu-model", "H100-80GB", "--gpu-model", "A100-80GB,L4"},
                   "/spec/tasks/0/resources/gpuModel",
                   nlohmann::json::array({"H100-80GB", "A100-80GB", "L4"})},
        DashesCase{"Queue", {"--queue", "team-a"}, "/spec/queue", "team-a"},
        DashesCase{"Cluster",
                   {"--cluster", "slurm-a"},
                   "/spec/clusterSelector/tessera.io~1cluster",
                   "slurm-a"}),
    [](const ::testing::TestParamInfo<DashesCase>& info) { return info.param.name; });

TEST_F(CommandsTest, SubmitClusterPinsTheJob) {
  ASSERT_EQ(Run(&RunSubmitCommand, {"submit", "--dry-run", "--cluster", "k8s-eu", "--", "x"}),
            kExitOk)
      << harness_.err();
  EXPECT_THAT(harness_.out(), HasSubstr("clusterSelector:\n    tessera.io/cluster: k8s-eu\n"));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--cluster", "Slurm_A", "--", "x"}), kExitUsage);
  EXPECT_EQ(harness_.err(),
            "error: --cluster: 'Slurm_A' is not a cluster name (lowercase letters, digits, '.', "
            "'_' and '-', starting with a letter or digit, at most 63 characters)\n");
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--cluster", "", "--", "x"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("error: --cluster: '' is not a cluster name"));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--cluster", "--", "x"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--cluster"));
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(CommandsTest, SubmitDryRunPrintsTheDocument) {
  ASSERT_EQ(Run(&RunSubmitCommand, {"submit", "--dry-run", "--gpus", "2", "--", "nvidia-smi"}),
            kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("apiVersion: tessera/v1\nkind: Job\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("gpu: 2"));
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(CommandsTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--gpus", "1.5", "--", "x"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("error: --gpus: must be a whole number of GPUs"));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--nodes", "many", "--", "x"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--nodes"));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--server", "https://h:1", "--", "x"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("error: --server: 'https://h:1': https is not supported"));
  harness_.SetEnv("TESSERA_SERVER", "ftp://h");
  EXPECT_EQ(Run(&RunListCommand, {"list"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("error: TESSERA_SERVER: 'ftp://h': unsupported scheme"));
  EXPECT_EQ(Run(&RunListCommand, {"list", "--phase", "sleeping"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--phase: unknown phase 'sleeping'"));
  EXPECT_EQ(Run(&RunListCommand, {"list", "--state", "finished"}), kExitUsage);
  EXPECT_THAT(harness_.err(),
              HasSubstr("--state: unknown state 'finished' (use one of active, terminal, all)"));
  EXPECT_EQ(Run(&RunListCommand, {"list", "--order", "sideways"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--order: unknown order 'sideways'"));
  EXPECT_EQ(Run(&RunListCommand, {"list", "--state", "active", "--phase", "failed"}), kExitUsage);
  EXPECT_EQ(Run(&RunListCommand, {"list", "--all", "--state", "terminal"}), kExitUsage);
  EXPECT_EQ(Run(&RunListCommand, {"list", "--limit", "-1"}), kExitUsage);
  EXPECT_EQ(Run(&RunGetCommand, {"get"}), kExitUsage);
  EXPECT_EQ(Run(&RunGetCommand, {"get", "1", "-o", "xml"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("-o: unknown output format 'xml'"));
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(CommandsTest, HelpGoesToTheOutputAndSucceeds) {
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--help"}), kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("--gpus"));
  EXPECT_EQ(Run(&RunTokenCommand, {"token", "create", "--help"}), kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("--tenant"));
}

TEST_F(CommandsTest, ServerErrorsExitOneWithTheMessageAndField) {
  server_.On("POST", "/api/v1/jobs", 400,
             ErrorBody("INVALID_ARGUMENT", "must be >= 1", "spec.tasks[0].replicas"));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--", "true"}), kExitServerError);
  EXPECT_EQ(harness_.err(), "error: spec.tasks[0].replicas: must be >= 1\n");

  EXPECT_EQ(Run(&RunGetCommand, {"get", "99"}), kExitServerError);
  EXPECT_EQ(harness_.err(), "error: no route for /api/v1/jobs/99\n");

  server_.On("GET", "/api/v1/jobs", 401, ErrorBody("UNAUTHENTICATED", "missing bearer token"));
  EXPECT_EQ(Run(&RunListCommand, {"list"}), kExitServerError);
  EXPECT_EQ(harness_.err(),
            "error: missing bearer token (give a token with --token or TESSERA_TOKEN)\n");
}

TEST_F(CommandsTest, NoServerExitsThreeNamingTheAddress) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  EXPECT_EQ(Run(&RunListCommand, {"list", "--server", url}), kExitUnreachable);
  EXPECT_THAT(harness_.err(), HasSubstr("error: cannot connect to " + url));
  EXPECT_EQ(Run(&RunSubmitCommand, {"submit", "--server", url, "--", "x"}), kExitUnreachable);
}

TEST_F(CommandsTest, GetPrintsARowOrTheDocument) {
  server_.On("GET", "/api/v1/jobs/42", 200, kPendingJob);
  ASSERT_EQ(Run(&RunGetCommand, {"get", "42"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(),
            "ID   NAME    TENANT   QUEUE     PHASE     REASON                  AGE\n"
            "42   train   team-a   default   Pending   InsufficientResources   5m\n");
  ASSERT_EQ(Run(&RunGetCommand, {"get", "42", "-o", "wide"}), kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("NODES   GPUS\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("5m    -       8\n"));
  ASSERT_EQ(Run(&RunGetCommand, {"get", "42", "-o", "json"}), kExitOk);
  EXPECT_EQ(nlohmann::json::parse(harness_.out()), nlohmann::json::parse(kPendingJob));
  EXPECT_THAT(harness_.out(), HasSubstr("{\n  \"apiVersion\": \"tessera/v1\",\n  \"kind\""));
  ASSERT_EQ(Run(&RunGetCommand, {"get", "42", "-o", "yaml"}), kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("apiVersion: tessera/v1\nkind: Job\nmetadata:\n"
                                        "  name: train\n  id: \"42\"\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("submitTime: \"2026-11-29T10:00:00Z\""));
}

TEST_F(CommandsTest, GetWatchFollowsTheJobUntilItEnds) {
  server_.On("GET", "/api/v1/jobs/42/events", 200,
             R"({"items": [{"jobId": "42", "sequence": 1, "type": "Submitted"},
                           {"jobId": "42", "sequence": 2, "type": "Queued"}]})");
  std::atomic<int> gets{0};
  server_.OnHandler("GET", "/api/v1/jobs/42", [&](const httplib::Request&, httplib::Response& res) {
    const int n = gets++;
    res.set_content(n == 0   ? Job("42", "Pending")
                    : n == 1 ? Job("42", "Running", "gpu-1")
                             : Job("42", "Succeeded", "gpu-1"),
                    "application/json");
  });
  server_.OnHandler("GET", "/api/v1/watch", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/x-ndjson", [](size_t, httplib::DataSink& sink) {
      const std::string lines =
          "{\"jobId\": \"42\", \"sequence\": 3, \"type\": \"Bound\"}\n{}\n"
          "{\"jobId\": \"42\", \"sequence\": 4, \"type\": \"Succeeded\"}\n";
      sink.write(lines.data(), lines.size());
      sink.done();
      return true;
    });
  });
  ASSERT_EQ(Run(&RunGetCommand, {"get", "42", "--watch"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(),
            "ID   NAME    TENANT   QUEUE     PHASE       REASON   AGE\n"
            "42   train   team-a   default   Pending              5m\n"
            "42   train   team-a   default   Running              5m\n"
            "42   train   team-a   default   Succeeded            5m\n");
  const std::vector<testing::RecordedRequest> watches = server_.Requests("GET", "/api/v1/watch");
  ASSERT_EQ(watches.size(), 1u);
  EXPECT_EQ(watches[0].Param("job"), "42");
  EXPECT_EQ(watches[0].Param("afterSequence"), "2");
}

TEST_F(CommandsTest, GetWatchOfAnEndedJobPrintsOnce) {
  server_.On("GET", "/api/v1/jobs/42/events", 200, R"({"items": []})");
  server_.On("GET", "/api/v1/jobs/42", 200, Job("42", "Failed"));
  ASSERT_EQ(Run(&RunGetCommand, {"get", "42", "-w"}), kExitOk) << harness_.err();
  EXPECT_THAT(harness_.out(), HasSubstr("Failed"));
  EXPECT_TRUE(server_.Requests("GET", "/api/v1/watch").empty());
}

TEST_F(CommandsTest, ListFollowsPagesUpToTheLimit) {
  server_.OnHandler("GET", "/api/v1/jobs", [](const httplib::Request& req, httplib::Response& res) {
    const std::string token = req.get_param_value("pageToken");
    nlohmann::json page;
    if (token.empty()) {
      page = {{"items",
               {nlohmann::json::parse(Job("1", "Running", "n1")),
                nlohmann::json::parse(Job("2", "Pending"))}},
              {"nextPageToken", "p2"}};
    } else {
      page = {{"items", {nlohmann::json::parse(Job("3", "Succeeded", "n2"))}},
              {"nextPageToken", ""}};
    }
    res.set_content(page.dump(), "application/json");
  });
  ASSERT_EQ(Run(&RunListCommand, {"list", "--phase", "running", "--queue", "q1", "--limit", "0"}),
            kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(),
            "ID   NAME    TENANT   QUEUE     PHASE       REASON   AGE\n"
            "1    train   team-a   default   Running              5m\n"
            "2    train   team-a   default   Pending              5m\n"
            "3    train   team-a   default   Succeeded            5m\n");
  EXPECT_EQ(harness_.err(), "");  // every page was listed
  std::vector<testing::RecordedRequest> lists = server_.Requests("GET", "/api/v1/jobs");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].Param("phase"), "Running");
  EXPECT_EQ(lists[0].Param("state"), "");  // --phase alone: that phase, active or not
  EXPECT_EQ(lists[0].Param("queue"), "q1");
  EXPECT_EQ(lists[0].Param("limit"), "1000");
  EXPECT_EQ(lists[1].Param("pageToken"), "p2");

  ASSERT_EQ(Run(&RunListCommand, {"list", "--limit", "2", "-o", "json"}), kExitOk);
  const nlohmann::json listed = nlohmann::json::parse(harness_.out());
  EXPECT_EQ(listed["items"].size(), 2u);
  EXPECT_EQ(listed["nextPageToken"], "p2");
  EXPECT_EQ(harness_.err(), "");  // hints are for tables
  lists = server_.Requests("GET", "/api/v1/jobs");
  ASSERT_EQ(lists.size(), 3u);  // the first page was enough
  EXPECT_EQ(lists[2].Param("limit"), "2");

  ASSERT_EQ(Run(&RunListCommand, {"list", "--all", "--order", "Oldest", "--limit", "3"}), kExitOk)
      << harness_.err();
  lists = server_.Requests("GET", "/api/v1/jobs");
  ASSERT_EQ(lists.size(), 5u);
  EXPECT_EQ(lists[3].Param("state"), "");
  EXPECT_EQ(lists[3].Param("order"), "oldest");
  EXPECT_EQ(lists[4].Param("limit"), "1");
}

TEST_F(CommandsTest, ListShowsActiveJobsNewestFirstAndSaysHowManyMore) {
  server_.OnHandler("GET", "/api/v1/jobs", [](const httplib::Request& req, httplib::Response& res) {
    nlohmann::json page = {{"items",
                            {nlohmann::json::parse(Job("9", "Pending")),
                             nlohmann::json::parse(Job("8", "Running", "n1"))}},
                           {"nextPageToken", "8"},
                           {"remainingItemCount", 5}};
    if (req.get_param_value("pageToken") == "8") {
      page = {{"items", {nlohmann::json::parse(Job("3", "Running", "n1"))}},
              {"nextPageToken", ""},
              {"remainingItemCount", 0}};
    }
    res.set_content(page.dump(), "application/json");
  });
  ASSERT_EQ(Run(&RunListCommand, {"list", "--limit", "2"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(),
            "ID   NAME    TENANT   QUEUE     PHASE     REASON   AGE\n"
            "9    train   team-a   default   Pending            5m\n"
            "8    train   team-a   default   Running            5m\n");
  EXPECT_EQ(harness_.err(),
            "5 more active jobs not shown; add --page-token 8 for the next 2, or --limit 0 for "
            "all\n");
  std::vector<testing::RecordedRequest> lists = server_.Requests("GET", "/api/v1/jobs");
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(lists[0].Param("state"), "active");
  EXPECT_EQ(lists[0].Param("order"), "newest");
  EXPECT_EQ(lists[0].Param("limit"), "2");
  EXPECT_EQ(lists[0].Param("pageToken"), "");

  ASSERT_EQ(Run(&RunListCommand, {"list", "--limit", "2", "--page-token", "8"}), kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("\n3    train"));
  EXPECT_EQ(harness_.err(), "");
  EXPECT_EQ(server_.Requests("GET", "/api/v1/jobs")[1].Param("pageToken"), "8");

  ASSERT_EQ(Run(&RunListCommand, {"list", "--state", "Terminal", "--limit", "2"}), kExitOk);
  EXPECT_EQ(server_.Requests("GET", "/api/v1/jobs")[2].Param("state"), "terminal");
  EXPECT_THAT(harness_.err(), HasSubstr("5 more ended jobs not shown"));
}

TEST_F(CommandsTest, ListWithoutActiveJobsPointsAtAll) {
  server_.On("GET", "/api/v1/jobs", 200,
             R"({"items": [], "nextPageToken": "", "remainingItemCount": 0})");
  ASSERT_EQ(Run(&RunListCommand, {"list"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "ID   NAME   TENANT   QUEUE   PHASE   REASON   AGE\n");
  EXPECT_EQ(harness_.err(), "no active jobs; --all lists ended ones too\n");
  ASSERT_EQ(Run(&RunListCommand, {"list", "--all"}), kExitOk);
  EXPECT_EQ(harness_.err(), "");
}

TEST_F(CommandsTest, ListWatchPrintsChangedRowsMatchingTheFilters) {
  server_.On(
      "GET", "/api/v1/jobs", 200,
      nlohmann::json{{"items", {nlohmann::json::parse(Job("1", "Pending"))}}, {"nextPageToken", ""}}
          .dump());
  // Job 1 runs, then ends: a listed job is followed though it is no longer active.
  int reads_of_1 = 0;
  server_.OnHandler(
      "GET", "/api/v1/jobs/1", [&reads_of_1](const httplib::Request&, httplib::Response& res) {
        const bool ended = ++reads_of_1 > 1;
        res.set_content(Job("1", ended ? "Succeeded" : "Running", "n1"), "application/json");
      });
  nlohmann::json other = nlohmann::json::parse(Job("2", "Pending"));
  other["spec"]["queue"] = "elsewhere";
  server_.On("GET", "/api/v1/jobs/2", 200, other.dump());
  server_.On("GET", "/api/v1/jobs/3", 200, Job("3", "Failed"));  // new, but not active
  server_.OnHandler("GET", "/api/v1/watch", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "{\"jobId\": \"1\", \"sequence\": 5}\n{\"jobId\": \"2\", \"sequence\": 1}\n"
        "{\"jobId\": \"3\", \"sequence\": 2}\n{\"jobId\": \"1\", \"sequence\": 6}\n",
        "application/x-ndjson");
  });
  ASSERT_EQ(Run(&RunListCommand, {"list", "--queue", "default", "--watch"}), kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(),
            "ID   NAME    TENANT   QUEUE     PHASE       REASON   AGE\n"
            "1    train   team-a   default   Pending              5m\n"
            "1    train   team-a   default   Running              5m\n"
            "1    train   team-a   default   Succeeded            5m\n");
}

TEST_F(CommandsTest, DescribeExplainsAPendingJob) {
  server_.On("GET", "/api/v1/jobs/42", 200, kPendingJob);
  server_.On("GET", "/api/v1/jobs/42/events", 200,
             R"({"items": [{"jobId": "42", "sequence": 1, "time": "2026-11-29T10:00:00Z",
                            "type": "Submitted", "phase": "Pending", "reason": "", "message": ""}]})");
  server_.On("GET", "/api/v1/jobs/42/explain", 200,
             R"({"phase": "Pending", "reason": "InsufficientResources",
                 "message": "task worker-0: 0/4 nodes: 3 insufficient gpu, 1 node(s) had untolerated taint",
                 "totalNodes": 4, "rejections": [{"reason": "insufficient gpu", "nodes": 3},
                 {"reason": "node(s) had untolerated taint", "nodes": 1}],
                 "estimatedStartTime": "2026-11-29T10:20:00Z",
                 "estimate": {"startTime": "2026-11-29T10:20:00Z", "blocker": "Capacity",
                              "message": "job 7 ends at its time limit",
                              "position": 2}})");
  ASSERT_EQ(Run(&RunDescribeCommand, {"describe", "42"}), kExitOk) << harness_.err();
  const std::string out = harness_.out();
  EXPECT_THAT(out, HasSubstr("Name:             train\n"));
  EXPECT_THAT(out, HasSubstr("Labels:           team=vision\n"));
  EXPECT_THAT(out, HasSubstr("Submitted:        2026-11-29T10:00:00Z (5m ago)\n"));
  EXPECT_THAT(out, HasSubstr("Time limit:       2h\n"));
  EXPECT_THAT(out, HasSubstr("Gang:             2 of 2 task(s) start together\n"));
  EXPECT_THAT(out, HasSubstr("Tolerations:      tessera.io/simulated (Exists)\n"));
  EXPECT_THAT(out, HasSubstr("  GROUP    REPLICAS   CPU   MEMORY   GPU   GPU MODEL   COMMAND\n"
                             "  worker   2          8     64Gi     4     H100-80GB   python "
                             "train.py --epochs 10\n"));
  EXPECT_THAT(out, HasSubstr("  worker-0   Pending   -      -         -\n"));
  EXPECT_THAT(out, HasSubstr("  Nodes:              0/4 nodes: 3 insufficient gpu, 1 node(s) had "
                             "untolerated taint\n"));
  EXPECT_THAT(out, HasSubstr("  Estimated start:    2026-11-29T10:20:00Z (in 15m)\n"));
  EXPECT_THAT(out, HasSubstr("  Blocked by:         Capacity: job 7 ends at its time "
                             "limit\n"));
  EXPECT_THAT(out, HasSubstr("  Position in queue:  2\n"));
  EXPECT_THAT(out, HasSubstr("Events:\n  TIME                   TYPE        PHASE     REASON   "
                             "MESSAGE\n  2026-11-29T10:00:00Z   Submitted   Pending\n"));
}

TEST_F(CommandsTest, DescribeSaysWhenTheStartCannotBePredicted) {
  server_.On("GET", "/api/v1/jobs/42", 200, kPendingJob);
  server_.On("GET", "/api/v1/jobs/42/events", 200, R"({"items": []})");
  server_.On("GET", "/api/v1/jobs/42/explain", 200,
             R"({"phase": "Pending", "reason": "QuotaExceeded", "message": "queue team-a",
                 "totalNodes": 0, "rejections": [], "estimatedStartTime": null,
                 "estimate": {"startTime": null, "blocker": "Quota", "message": "queue team-a",
                              "position": 0}})");
  ASSERT_EQ(Run(&RunDescribeCommand, {"describe", "42"}), kExitOk) << harness_.err();
  EXPECT_THAT(harness_.out(),
              HasSubstr("  Estimated start:    unknown (waits on jobs without a time limit)\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("  Blocked by:         Quota\n"));
  EXPECT_THAT(harness_.out(), Not(HasSubstr("Nodes:")));
}

TEST_F(CommandsTest, DescribeSaysWhenNoNodeCanHoldTheJob) {
  server_.On("GET", "/api/v1/jobs/42", 200, kPendingJob);
  server_.On("GET", "/api/v1/jobs/42/events", 200, R"({"items": []})");
  server_.On("GET", "/api/v1/jobs/42/explain", 200,
             R"({"phase": "Pending", "reason": "InsufficientResources",
                 "message": "task main-0: 0/2 nodes: 2 insufficient gpu",
                 "totalNodes": 2, "rejections": [], "estimatedStartTime": null,
                 "estimate": {"startTime": null, "blocker": "NoFit",
                              "message": "task main-0 fits no node even on an empty cluster",
                              "position": 0}})");
  ASSERT_EQ(Run(&RunDescribeCommand, {"describe", "42"}), kExitOk) << harness_.err();
  EXPECT_THAT(harness_.out(), HasSubstr("  Estimated start:    never on the clusters there are "
                                        "now (even with every node empty)\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("  Blocked by:         NoFit: task main-0 fits no node"));
}

TEST_F(CommandsTest, DescribeSaysWhenNoClusterCanHoldTheGang) {
  server_.On("GET", "/api/v1/jobs/42", 200, kPendingJob);
  server_.On("GET", "/api/v1/jobs/42/events", 200, R"({"items": []})");
  server_.On("GET", "/api/v1/jobs/42/explain", 200,
             R"({"phase": "Pending", "reason": "InsufficientResources",
                 "message": "task main-2: 0/2 nodes: 2 insufficient gpu",
                 "totalNodes": 2, "rejections": [], "estimatedStartTime": null,
                 "estimate": {"startTime": null, "blocker": "NoFit",
                              "message": "its gang of 3 tasks fits no cluster even when empty",
                              "position": 0}})");
  ASSERT_EQ(Run(&RunDescribeCommand, {"describe", "42"}), kExitOk) << harness_.err();
  EXPECT_THAT(harness_.out(), HasSubstr("  Estimated start:    never on the clusters there are "
                                        "now (even with every node empty)\n"));
  EXPECT_THAT(harness_.out(),
              HasSubstr("  Blocked by:         NoFit: its gang of 3 tasks fits no cluster"));
  EXPECT_THAT(harness_.out(), Not(HasSubstr("waits on jobs without a time limit")));
}

TEST_F(CommandsTest, QueuesTableAndQueueChanges) {
  server_.On("GET", "/api/v1/queues", 200,
             R"({"items": [{"name": "org", "parent": "", "guaranteed": {"gpu": 4},
                 "weight": 1, "priority": 0, "ordering": "bestEffortFifo",
                 "usage": {"gpu": 1.5}, "borrowing": false, "share": 0.375,
                 "pendingJobs": 1, "admittedJobs": 0, "runningJobs": 2},
                {"name": "team-a", "parent": "org", "guaranteed": {"gpu": 1, "cpu": "8"},
                 "borrowingLimit": {"gpu": 0}, "weight": 2, "priority": 0,
                 "ordering": "strictFifo", "usage": {"gpu": 1.5}, "borrowing": true,
                 "share": 0.1875, "pendingJobs": 1, "admittedJobs": 0, "runningJobs": 2}]})");
  ASSERT_EQ(Run(&RunQueuesCommand, {"queues"}), kExitOk) << harness_.err();
  EXPECT_EQ(
      harness_.out(),
      "NAME     PARENT   GUARANTEED    USAGE     BORROWING   SHARE   PENDING   ADMITTED   "
      "RUNNING\n"
      "org      -        gpu=4         gpu=1.5   no          0.375   1         0          2\n"
      "team-a   org      gpu=1,cpu=8   gpu=1.5   yes         0.188   1         0          2\n");

  const std::string file = ::testing::TempDir() + "/queues.yaml";
  {
    std::ofstream out(file);
    out << "queues: [{name: a}]\n";
  }
  server_.On("PUT", "/api/v1/queues", 200, R"({"items": [{"name": "a"}]})");
  ASSERT_EQ(Run(&RunQueueCommand, {"queue", "apply", "-f", file}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "queue tree applied: 1 queue(s)\n");
  ASSERT_EQ(server_.Requests("PUT", "/api/v1/queues").size(), 1u);
  EXPECT_EQ(server_.Requests("PUT", "/api/v1/queues")[0].body, "queues: [{name: a}]\n");

  server_.On(
      "DELETE", "/api/v1/queues/a", 409,
      R"({"error": {"code": "FAILED_PRECONDITION", "message": "queue \"a\" is the last queue: jobs need one"}})");
  EXPECT_EQ(Run(&RunQueueCommand, {"queue", "delete", "a"}), kExitServerError);
  EXPECT_THAT(harness_.err(), HasSubstr("is the last queue"));
}

TEST_F(CommandsTest, DescribeOfARunningJobSkipsTheExplanation) {
  server_.On("GET", "/api/v1/jobs/42", 200, Job("42", "Running", "gpu-3"));
  server_.On("GET", "/api/v1/jobs/42/events", 200, R"({"items": []})");
  ASSERT_EQ(Run(&RunDescribeCommand, {"describe", "42"}), kExitOk) << harness_.err();
  EXPECT_THAT(harness_.out(), Not(HasSubstr("Why pending")));
  EXPECT_THAT(harness_.out(), HasSubstr("  worker-0   Running   gpu-3"));
  EXPECT_THAT(harness_.out(), HasSubstr("Events: none\n"));
  EXPECT_TRUE(server_.Requests("GET", "/api/v1/jobs/42/explain").empty());
}

TEST_F(CommandsTest, CancelReportsEachJob) {
  server_.On("POST", "/api/v1/jobs/1/cancel", 200, Job("1", "Cancelled"));
  server_.On("POST", "/api/v1/jobs/2/cancel", 200, Job("2", "Running", "n"));
  server_.On("POST", "/api/v1/jobs/3/cancel", 200, Job("3", "Succeeded", "n"));
  EXPECT_EQ(Run(&RunCancelCommand, {"cancel", "1", "2", "3", "4"}), kExitServerError);
  EXPECT_EQ(harness_.out(),
            "job 1 cancelled\njob 2 is stopping (Running)\njob 3 had already ended (Succeeded)\n");
  EXPECT_EQ(harness_.err(), "error: job 4: no route for /api/v1/jobs/4/cancel\n");
}

TEST_F(CommandsTest, LogsReadsEveryChunk) {
  server_.OnHandler("GET", "/api/v1/jobs/42/logs",
                    [](const httplib::Request& req, httplib::Response& res) {
                      const std::string offset = req.get_param_value("offset");
                      if (offset == "0") {
                        res.set_header("X-Tessera-Next-Offset", "6");
                        res.set_header("X-Tessera-Log-End", "false");
                        res.set_content("hello\n", "text/plain");
                      } else {
                        res.set_header("X-Tessera-Next-Offset", "6");
                        res.set_header("X-Tessera-Log-End", "false");
                        res.set_content("", "text/plain");
                      }
                    });
  ASSERT_EQ(Run(&RunLogsCommand, {"logs", "42", "--task", "worker-1", "--stderr"}), kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(), "hello\n");
  const std::vector<testing::RecordedRequest> reads =
      server_.Requests("GET", "/api/v1/jobs/42/logs");
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].Param("task"), "worker-1");
  EXPECT_EQ(reads[0].Param("stream"), "stderr");
  EXPECT_EQ(reads[1].Param("offset"), "6");
  EXPECT_TRUE(harness_.sleeps().empty());
}

TEST_F(CommandsTest, LogsFollowPollsUntilTheEnd) {
  std::atomic<int> calls{0};
  server_.OnHandler("GET", "/api/v1/jobs/42/logs",
                    [&](const httplib::Request& req, httplib::Response& res) {
                      const int n = calls++;
                      const std::string offset = req.get_param_value("offset");
                      if (n == 0) {
                        res.set_header("X-Tessera-Next-Offset", "4");
                        res.set_content("one\n", "text/plain");
                      } else if (n == 1) {
                        res.set_header("X-Tessera-Next-Offset", "4");  // nothing new yet
                        res.set_content("", "text/plain");
                      } else {
                        res.set_header("X-Tessera-Next-Offset", "8");
                        res.set_header("X-Tessera-Log-End", "true");
                        res.set_content(offset == "4" ? "two\n" : "?", "text/plain");
                      }
                    });
  ASSERT_EQ(Run(&RunLogsCommand, {"logs", "42", "-f"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "one\ntwo\n");
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(harness_.sleeps().size(), 1u);
  EXPECT_EQ(server_.Requests()[0].Param("task"), "");
  EXPECT_EQ(server_.Requests()[0].Param("stream"), "stdout");
}

TEST_F(CommandsTest, NodesAndClusters) {
  server_.On("GET", "/api/v1/nodes", 200, R"({"items": [
    {"name": "gpu-1", "cluster": "east", "labels": {"rack": "r1"},
     "taints": [{"key": "tessera.io/simulated", "value": "", "effect": "NoSchedule"}],
     "ready": true, "unschedulable": true, "state": "Cordoned", "stateReason": "bad DIMM",
     "stateBy": "ops", "stateSince": "2026-11-29T09:00:00Z",
     "capacity": {"cpu": "64", "memory": "512Gi", "gpu": 8},
     "allocated": {"cpu": "12", "memory": "64Gi", "gpu": 2.5},
     "gpus": [{"index": 0, "model": "H100-80GB", "memory": "80Gi", "milliUsed": 1000, "healthy": true}],
     "tasks": 3},
    {"name": "cpu-1", "cluster": "east", "labels": {}, "taints": [], "ready": false,
     "unschedulable": false, "capacity": {"cpu": "32", "memory": "64Gi", "gpu": 0},
     "allocated": {"cpu": "0", "memory": "0", "gpu": 0}, "gpus": [], "tasks": 0}]})");
  ASSERT_EQ(Run(&RunNodesCommand, {"nodes"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(),
            "NAME    CLUSTER   STATUS                     STATE      CPU     MEMORY       GPU     "
            "GPU MODEL   TASKS\n"
            "gpu-1   east      Ready,SchedulingDisabled   Cordoned   12/64   64Gi/512Gi   2.5/8   "
            "H100-80GB   3\n"
            "cpu-1   east      NotReady                   Ready      0/32    0/64Gi       0/0     "
            "-           0\n");
  ASSERT_EQ(Run(&RunNodesCommand, {"nodes", "-o", "wide"}), kExitOk);
  EXPECT_THAT(harness_.out(),
              HasSubstr("bad DIMM [ops 2026-11-29T09:00:00Z]   tessera.io/simulated:NoSchedule   "
                        "rack=r1\n"));

  server_.On("GET", "/api/v1/clusters", 200, R"({"items": [{"name": "east", "backend": "sim",
    "reachable": true, "labels": {"tessera.io/cluster": "east"}, "nodes": 2, "readyNodes": 1,
    "capacity": {"cpu": "96", "memory": "576Gi", "gpu": 8},
    "allocated": {"cpu": "12", "memory": "64Gi", "gpu": 2.5}},
    {"name": "west", "backend": "slurm", "reachable": false, "nodes": 1, "readyNodes": 0,
    "capacity": {"cpu": "8", "memory": "64Gi", "gpu": 8},
    "allocated": {"cpu": "0", "memory": "0", "gpu": 0}}]})");
  ASSERT_EQ(Run(&RunClustersCommand, {"clusters"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(),
            "NAME   BACKEND   STATUS        NODES   READY   CPU     MEMORY       GPU\n"
            "east   sim       Ready         2       1       12/96   64Gi/576Gi   2.5/8\n"
            "west   slurm     Unreachable   1       0       0/8     0/64Gi       0/8\n");
  ASSERT_EQ(Run(&RunClustersCommand, {"clusters", "-o", "yaml"}), kExitOk);
  EXPECT_THAT(harness_.out(), HasSubstr("items:\n  - name: east\n    backend: sim\n"));
}

TEST_F(CommandsTest, ClusterDelete) {
  server_.On("DELETE", "/api/v1/clusters/west", 200, R"({"items": []})");
  ASSERT_EQ(Run(&RunClusterCommand, {"cluster", "delete", "west"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "cluster west deleted\n");
  ASSERT_EQ(server_.Requests("DELETE", "/api/v1/clusters/west").size(), 1u);

  server_.On(
      "DELETE", "/api/v1/clusters/east", 409,
      R"({"error": {"code": "FAILED_PRECONDITION", "message": "cluster east: its agent is connected (session epoch 3): stop the agent first"}})");
  EXPECT_EQ(Run(&RunClusterCommand, {"cluster", "delete", "east"}), kExitServerError);
  EXPECT_THAT(harness_.err(), HasSubstr("stop the agent first"));
  EXPECT_EQ(Run(&RunClusterCommand, {"cluster", "delete"}), kExitUsage);
}

TEST_F(CommandsTest, NodeCordonDrainUncordon) {
  const auto node = [](const std::string& state, int tasks) {
    return nlohmann::json({{"name", "gpu-1"},
                           {"cluster", "east"},
                           {"state", state},
                           {"unschedulable", state != "Ready"},
                           {"tasks", tasks}})
        .dump();
  };
  server_.On("POST", "/api/v1/clusters/east/nodes/gpu-1:drain", 200, node("Draining", 3));
  ASSERT_EQ(Run(&RunNodeCommand, {"node", "drain", "east/gpu-1", "--grace", "5m", "--reason",
                                  "replace GPU 3", "--token", "admin"}),
            kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(), "node east/gpu-1 draining: 3 task(s) being evicted\n");
  const std::vector<testing::RecordedRequest> drains =
      server_.Requests("POST", "/api/v1/clusters/east/nodes/gpu-1:drain");
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(drains[0].body),
            nlohmann::json({{"reason", "replace GPU 3"}, {"gracePeriod", "5m"}}));
  EXPECT_EQ(drains[0].authorization, "Bearer admin");

  server_.On("POST", "/api/v1/clusters/east/nodes/gpu-1:cordon", 200, node("Cordoned", 3));
  ASSERT_EQ(Run(&RunNodeCommand, {"node", "cordon", "east/gpu-1"}), kExitOk) << harness_.err();
  EXPECT_EQ(harness_.out(), "node east/gpu-1 cordoned\n");
  EXPECT_EQ(server_.Requests("POST", "/api/v1/clusters/east/nodes/gpu-1:cordon")[0].body, "{}");
  server_.On("POST", "/api/v1/clusters/east/nodes/gpu-1:uncordon", 200, node("Ready", 0));
  ASSERT_EQ(Run(&RunNodeCommand, {"node", "uncordon", "east/gpu-1"}), kExitOk);
  EXPECT_EQ(harness_.out(), "node east/gpu-1 uncordoned\n");

  // The server's refusals name the field; a target that is not CLUSTER/NODE never leaves.
  server_.On(
      "POST", "/api/v1/clusters/east/nodes/gpu-2:drain", 400,
      ErrorBody("INVALID_ARGUMENT", "gracePeriod: \"soon\" is not a duration", "gracePeriod"));
  EXPECT_EQ(Run(&RunNodeCommand, {"node", "drain", "east/gpu-2", "--grace", "soon"}),
            kExitServerError);
  EXPECT_THAT(harness_.err(), HasSubstr("gracePeriod"));
  EXPECT_EQ(Run(&RunNodeCommand, {"node", "drain", "gpu-1"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("is not CLUSTER/NODE"));
  EXPECT_EQ(Run(&RunNodeCommand, {"node", "cordon", "east/gpu-1", "--grace", "5m"}), kExitUsage);
  EXPECT_EQ(Run(&RunNodeCommand, {"node", "reboot", "east/gpu-1"}), kExitUsage);
  EXPECT_EQ(Run(&RunNodeCommand, {"node", "drain", "east/gpu-1", "--grace", ""}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--grace: must be a duration"));
  EXPECT_EQ(Run(&RunNodeCommand, {"node", "cordon", "east/gpu-1", "--reason", "\xff\xfe bad"}),
            kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--reason: is not valid UTF-8"));
}

TEST_F(CommandsTest, TokenCreate) {
  server_.On("POST", "/api/v1/tokens", 201,
             R"({"token": "tsr_abc", "tenant": "team-a", "role": "tenant"})");
  ASSERT_EQ(Run(&RunTokenCommand, {"token", "create", "--tenant", "team-a", "--token", "admin"}),
            kExitOk)
      << harness_.err();
  EXPECT_EQ(harness_.out(), "tsr_abc\n");
  const std::vector<testing::RecordedRequest> posts = server_.Requests();
  EXPECT_EQ(nlohmann::json::parse(posts[0].body),
            nlohmann::json({{"tenant", "team-a"}, {"role", "tenant"}}));
  EXPECT_EQ(posts[0].authorization, "Bearer admin");

  EXPECT_EQ(Run(&RunTokenCommand, {"token", "create", "--tenant", "x", "--role", "root"}),
            kExitUsage);
  EXPECT_EQ(Run(&RunTokenCommand, {"token"}), kExitUsage);
  server_.On("POST", "/api/v1/tokens", 403, ErrorBody("PERMISSION_DENIED", "admin only"));
  EXPECT_EQ(Run(&RunTokenCommand, {"token", "create", "--tenant", "x"}), kExitServerError);
  EXPECT_EQ(harness_.err(), "error: admin only\n");
}

}  // namespace
}  // namespace tessera::cli

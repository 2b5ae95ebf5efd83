#include "cli/replay_command.h"

#include <atomic>
#include <fstream>

#include "cli/exit_status.h"
#include "cli/testing/fake_api_server.h"
#include "cli/testing/verb_harness.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::cli {
namespace {

using ::tessera::cli::testing::ErrorBody;
using ::tessera::cli::testing::FakeApiServer;
using ::tessera::cli::testing::VerbHarness;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kSwf =
    "; UnixStartTime: 749458803\n"
    "1   0 -1  100  4 -1 -1  4  3600 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2  10 -1   -1  8 -1 -1  8   600 -1 5 1 1 -1 -1 -1 -1 -1\n"
    "3  20 -1   50  2 -1 -1  2    -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "4  60 -1   30  1 -1 -1  1    -1 -1 1 1 1 -1 -1 -1 -1 -1\n";

class ReplayCommandTest : public ::testing::Test {
 protected:
  ReplayCommandTest() {
    harness_.SetEnv("TESSERA_SERVER", server_.Url());
    path_ = ::testing::TempDir() + "/tiny-log.swf";
    std::ofstream(path_) << kSwf;
  }

  // Accepts every job, answering with an id counted from 1.
  void AcceptAll() {
    server_.OnHandler(
        "POST", "/api/v1/jobs", [this](const httplib::Request&, httplib::Response& res) {
          res.status = 201;
          res.set_content(nlohmann::json{{"metadata", {{"id", std::to_string(++ids_)}}}}.dump(),
                          "application/json");
        });
  }

  std::vector<nlohmann::json> Submitted() const {
    std::vector<nlohmann::json> out;
    for (const auto& r : server_.Requests("POST", "/api/v1/jobs")) {
      out.push_back(nlohmann::json::parse(r.body));
    }
    return out;
  }

  FakeApiServer server_;
  VerbHarness harness_;
  std::string path_;
  std::atomic<int> ids_{0};
};

TEST_F(ReplayCommandTest, SubmitsAtTheScaledArrivalTimes) {
  AcceptAll();
  ASSERT_EQ(harness_.Run(&RunReplayCommand,
                         {"replay", "--swf", path_, "--speedup", "10", "--queue", "batch"}),
            kExitOk)
      << harness_.err();
  // Arrivals 0, 20, 60 s at 10x: waits of 2 s and 4 s.
  EXPECT_THAT(harness_.sleeps(), ElementsAre(std::chrono::seconds(2), std::chrono::seconds(4)));
  const std::vector<nlohmann::json> jobs = Submitted();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0]["metadata"]["requestId"], "replay-tiny-log-1");
  EXPECT_EQ(jobs[0]["metadata"]["labels"]["tessera.io/replay"], "tiny-log");
  EXPECT_EQ(jobs[0]["spec"]["queue"], "batch");
  EXPECT_EQ(jobs[0]["spec"]["minAvailable"], 4);
  EXPECT_EQ(jobs[0]["spec"]["timeLimit"], "6m");
  EXPECT_EQ(jobs[0]["spec"]["duration"], "10s");
  EXPECT_EQ(jobs[0]["spec"]["tolerations"][0],
            nlohmann::json({{"key", "tessera.io/simulated"}, {"operator", "Exists"}}));
  EXPECT_EQ(jobs[0]["spec"]["tasks"][0]["replicas"], 4);
  EXPECT_EQ(jobs[1]["metadata"]["requestId"], "replay-tiny-log-3");
  EXPECT_EQ(jobs[2]["metadata"]["requestId"], "replay-tiny-log-4");
  EXPECT_THAT(harness_.out(),
              HasSubstr("replayed 4 row(s) of " + path_ +
                        ": 3 submitted (0 already there), 0 refused, 1 skipped, 0 not sent; "
                        "6.0s wall, 0.50 jobs/s\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("skipped:\n         1  run time <= 0 or unknown\n"));
}

TEST_F(ReplayCommandTest, RateSubmitsAtSteadyIntervalsWhateverTheTraceTimes) {
  AcceptAll();
  ASSERT_EQ(
      harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--rate", "4", "--speedup", "10"}),
      kExitOk)
      << harness_.err();
  // Three jobs (arrivals 0, 20 and 60 s in the trace) at 4 per second: sent at 0, 250, 500 ms.
  EXPECT_THAT(harness_.sleeps(),
              ElementsAre(std::chrono::milliseconds(250), std::chrono::milliseconds(250)));
  const std::vector<nlohmann::json> jobs = Submitted();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0]["spec"]["duration"], "10s");  // --speedup still scales the run times
  EXPECT_THAT(harness_.out(), HasSubstr("3 submitted (0 already there), 0 refused, 1 skipped, "
                                        "0 not sent; 0.5s wall, 6.00 jobs/s\n"));

  for (const char* bad : {"0", "-1", "inf"}) {
    EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--rate", bad}),
              kExitUsage)
        << bad;
    EXPECT_THAT(harness_.err(),
                HasSubstr("error: --rate: must be a positive number of jobs per second, got "))
        << bad;
  }
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--rate", "fast"}),
            kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--rate"));
  EXPECT_EQ(server_.Requests("POST", "/api/v1/jobs").size(), 3u);
}

TEST_F(ReplayCommandTest, CountsRefusalsByReasonAndRetriesRateLimits) {
  std::atomic<int> calls{0};
  server_.OnHandler(
      "POST", "/api/v1/jobs", [&](const httplib::Request& req, httplib::Response& res) {
        const int n = calls++;
        const nlohmann::json job = nlohmann::json::parse(req.body);
        if (n == 0) {
          res.status = 429;
          res.set_header("Retry-After", "2");
          res.set_content(ErrorBody("RESOURCE_EXHAUSTED", "rate limit"), "application/json");
        } else if (job["spec"]["tasks"][0]["replicas"] != 1) {
          res.status = 400;
          res.set_content(ErrorBody("INVALID_ARGUMENT",
                                    "gang of " + job["spec"]["tasks"][0]["replicas"].dump() +
                                        " tasks exceeds the queue's limit of 1"),
                          "application/json");
        } else {
          res.status = 200;  // an earlier run submitted it
          res.set_content(R"({"metadata": {"id": "9"}})", "application/json");
        }
      });
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--speedup", "1000"}),
            kExitServerError);
  EXPECT_EQ(calls.load(), 4);  // one retry after 429
  EXPECT_THAT(harness_.sleeps(), ::testing::Contains(std::chrono::seconds(2)));
  EXPECT_THAT(harness_.out(), HasSubstr("1 submitted (1 already there), 2 refused, 1 skipped"));
  EXPECT_THAT(harness_.out(), HasSubstr("(1 rate-limited retries)"));
  EXPECT_THAT(harness_.out(),
              HasSubstr("refused:\n         2  INVALID_ARGUMENT: gang of N tasks exceeds the "
                        "queue's limit of N\n"));
}

TEST_F(ReplayCommandTest, SkipAndLimit) {
  AcceptAll();
  ASSERT_EQ(
      harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--skip", "2", "--limit", "1"}),
      kExitOk)
      << harness_.err();
  const std::vector<nlohmann::json> jobs = Submitted();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["metadata"]["requestId"], "replay-tiny-log-3");
  EXPECT_TRUE(harness_.sleeps().empty());
}

TEST_F(ReplayCommandTest, DryRunPrintsDocumentsWithoutAServer) {
  harness_.SetEnv("TESSERA_SERVER", "http://127.0.0.1:" + std::to_string(testing::UnusedPort()));
  ASSERT_EQ(harness_.Run(&RunReplayCommand,
                         {"replay", "--swf", path_, "--dry-run", "--nodes-cluster", "hpc"}),
            kExitOk)
      << harness_.err();
  EXPECT_THAT(harness_.out(), HasSubstr("---\n# 1 at +0s\napiVersion: tessera/v1\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("---\n# 4 at +1m\n"));
  EXPECT_THAT(harness_.out(), HasSubstr("clusterSelector:\n    tessera.io/cluster: hpc\n"));
  EXPECT_THAT(harness_.err(), HasSubstr("3 job(s) of 4 row(s); 1 skipped"));
  EXPECT_TRUE(harness_.sleeps().empty());
}

TEST_F(ReplayCommandTest, StopsWhenTheServerIsGone) {
  harness_.SetEnv("TESSERA_SERVER", "http://127.0.0.1:" + std::to_string(testing::UnusedPort()));
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_}), kExitUnreachable);
  EXPECT_THAT(harness_.err(), HasSubstr("error: cannot connect to http://127.0.0.1:"));
  EXPECT_THAT(harness_.out(), HasSubstr("0 submitted"));
  EXPECT_THAT(harness_.out(), HasSubstr("3 not sent"));
}

TEST_F(ReplayCommandTest, UsageErrors) {
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay"}), kExitUsage);
  EXPECT_EQ(harness_.err(), "error: give a trace: --pods FILE or --swf FILE\n");
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--pods", "p.csv"}),
            kExitUsage);
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--speedup", "-1"}),
            kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("--speedup: must be a positive number"));
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--cluster", "HPC"}),
            kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("error: --cluster: 'HPC' is not a cluster name"));
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", "/no/such.swf"}), kExitUsage);
  EXPECT_THAT(harness_.err(), HasSubstr("/no/such.swf"));
  const std::string bad = ::testing::TempDir() + "/bad.swf";
  std::ofstream(bad) << "1 2 3\n";
  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", bad}), kExitUsage);
  EXPECT_EQ(harness_.err(), "error: " + bad + ":1: expected 18 fields, got 3\n");
  EXPECT_TRUE(server_.Requests().empty());
}

TEST_F(ReplayCommandTest, AlibabaPods) {
  AcceptAll();
  const std::string pods = ::testing::TempDir() + "/openb_pod_list_tiny.csv";
  std::ofstream(pods) << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                         "creation_time,deletion_time,scheduled_time\n"
                         "p0,1000,1024,1,500,T4,LS,Running,0,100,0\n"
                         "p1,2000,2048,0,0,,BE,Running,50,,60\n";
  ASSERT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--pods", pods, "--cluster", "openb"}),
            kExitOk)
      << harness_.err();
  const std::vector<nlohmann::json> jobs = Submitted();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["metadata"]["requestId"], "replay-openb_pod_list_tiny-p0");
  EXPECT_EQ(jobs[0]["spec"]["clusterSelector"]["tessera.io/cluster"], "openb");
  EXPECT_EQ(jobs[0]["spec"]["duration"], "1m40s");
  EXPECT_EQ(jobs[0]["spec"]["tasks"][0]["resources"]["gpu"], 0.5);
  EXPECT_EQ(jobs[0]["spec"]["tasks"][0]["resources"]["gpuModel"], nlohmann::json::array({"T4"}));
  EXPECT_FALSE(jobs[0]["spec"].contains("timeLimit"));
}

TEST_F(ReplayCommandTest, BatchSendsSeveralJobsPerRequestWhenTheLastIsDue) {
  // Each batch answer: the first job of the batch created, the others an earlier run's, and
  // a job of request id "replay-tiny-log-4" refused.
  server_.OnHandler("POST", "/api/v1/jobs:batch",
                    [this](const httplib::Request& req, httplib::Response& res) {
                      nlohmann::json items = nlohmann::json::array();
                      const nlohmann::json sent = nlohmann::json::parse(req.body);
                      for (const auto& job : sent["items"]) {
                        if (job["metadata"]["requestId"] == "replay-tiny-log-4") {
                          items.push_back(nlohmann::json::parse(
                              ErrorBody("INVALID_ARGUMENT", "items[1].spec.queue: unknown")));
                          continue;
                        }
                        items.push_back({{"job", {{"metadata", {{"id", std::to_string(++ids_)}}}}},
                                         {"created", items.empty()}});
                      }
                      res.set_content(nlohmann::json{{"items", items}}.dump(), "application/json");
                    });
  EXPECT_EQ(harness_.Run(&RunReplayCommand,
                         {"replay", "--swf", path_, "--speedup", "10", "--batch", "2"}),
            kExitServerError);
  // Jobs at 0, 20 and 60 s: the first batch (0, 20 s) goes at 2 s, the second (60 s) at 6 s.
  EXPECT_THAT(harness_.sleeps(), ElementsAre(std::chrono::seconds(2), std::chrono::seconds(4)));
  const auto posts = server_.Requests("POST", "/api/v1/jobs:batch");
  ASSERT_EQ(posts.size(), 2u);
  const nlohmann::json first = nlohmann::json::parse(posts[0].body);
  ASSERT_EQ(first["items"].size(), 2u);
  EXPECT_EQ(first["items"][0]["metadata"]["requestId"], "replay-tiny-log-1");
  EXPECT_EQ(first["items"][1]["metadata"]["requestId"], "replay-tiny-log-3");
  EXPECT_EQ(nlohmann::json::parse(posts[1].body)["items"].size(), 1u);
  EXPECT_TRUE(server_.Requests("POST", "/api/v1/jobs").empty());
  EXPECT_THAT(harness_.out(), HasSubstr("2 submitted (1 already there), 1 refused"));
  EXPECT_THAT(harness_.out(), HasSubstr("INVALID_ARGUMENT: items[N].spec.queue: unknown"));

  EXPECT_EQ(harness_.Run(&RunReplayCommand, {"replay", "--swf", path_, "--batch", "1001"}),
            kExitUsage);
}

}  // namespace
}  // namespace tessera::cli

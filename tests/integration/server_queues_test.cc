// Queues end to end: a real `tessera server --config FILE` with a queue tree, over loopback
// HTTP, running real task processes on a local cluster with two declared GPUs.
//
// The tree: org { team-a (1 GPU guaranteed, no borrowing), team-b (1 GPU guaranteed, may
// borrow) }. Jobs ask for whole GPUs, so quota and capacity are exact and the scheduler's
// answers deterministic. Every wait is bounded and generous; nothing asserts how fast anything is.
#include <stdio.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rest_api.h"
#include "server_process.h"
#include "temp_dir.h"

namespace tessera::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kConfig = R"(
clusters:
  - {name: local, backend: local}
scheduling:
  backfill: easy
queues:
  - name: org
    children:
      - {name: team-a, guaranteed: {gpu: 1}, borrowingLimit: {gpu: 0}}
      - {name: team-b, guaranteed: {gpu: 1}}
)";

std::vector<std::string> QueueNames(const Json& list) {
  std::vector<std::string> names;
  for (const Json& queue : list["items"]) {
    names.push_back(queue.value("parent", "") + "/" + queue.value("name", ""));
  }
  return names;
}

// A job of `queue` holding `gpus` whole GPUs while it sleeps.
Json GpuJob(std::string_view name, std::string_view queue, int gpus) {
  Json job = ShellJob(name, "exec sleep 600");
  job["spec"]["queue"] = queue;
  job["spec"]["tasks"][0]["resources"] = {{"cpu", "100m"}, {"gpu", gpus}};
  return job;
}

// What the command prints on stdout.
std::string RunCommand(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

class ServerQueuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.Sub("tessera.yaml");
    std::ofstream(config_) << kConfig;
    StartServer();
  }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      const std::string log = server_->Log();
      std::cerr << "--- server log (tail) ---\n"
                << log.substr(log.size() > 8000 ? log.size() - 8000 : 0) << "\n";
    }
  }

  void StartServer() {
    server_.reset();
    server_ = std::make_unique<ServerProcess>(
        ServerOptions{.data_dir = dir_.Sub("data"),
                      .log_dir = dir_.path(),
                      .config_path = config_,
                      .extra_args = {"--rate-limit", "0", "--local-gpus", "T4:2:16Gi"}});
    const absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }

  RestApi Admin() const {
    return RestApi(server_->host(), server_->http_port(), server_->admin_token());
  }
  RestApi Tenant() const { return Admin().WithToken(Admin().IssueToken("team-a")); }

  std::string Submit(const Json& job) {
    const HttpAnswer answer = Admin().Submit(job);
    EXPECT_EQ(answer.status, 201) << answer.text;
    return answer.status == 201 ? answer.body["metadata"].value("id", "") : "";
  }

  TempDir dir_{"tessera-it-queues"};
  std::string config_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerQueuesTest, TheConfiguredTreeIsServed) {
  const HttpAnswer queues = Tenant().Get("/api/v1/queues");
  ASSERT_EQ(queues.status, 200) << queues.text;
  EXPECT_THAT(QueueNames(queues.body), ElementsAre("/org", "org/team-a", "org/team-b"));
  const Json& team_a = queues.body["items"][1];
  EXPECT_EQ(team_a["guaranteed"]["gpu"], 1) << team_a.dump();
  EXPECT_EQ(team_a["borrowingLimit"]["gpu"], 0) << team_a.dump();
  EXPECT_EQ(team_a["pendingJobs"], 0);
}

TEST_F(ServerQueuesTest, AdminsReplaceTheTreeAndItSurvivesARestart) {
  const std::string tree = R"({"queues": [{"name": "org", "children": [
      {"name": "team-a", "guaranteed": {"gpu": 2}, "weight": 2},
      {"name": "team-c", "guaranteed": {"cpu": "1"}}]}]})";

  const HttpAnswer tenant = Tenant().Put("/api/v1/queues", tree);
  EXPECT_EQ(tenant.status, 403) << tenant.text;

  const HttpAnswer bad =
      Admin().Put("/api/v1/queues", R"({"queues": [{"name": "org", "weight": 0}]})");
  EXPECT_EQ(bad.status, 400) << bad.text;
  EXPECT_EQ(bad.ErrorField(), "queues[0].weight");

  const HttpAnswer applied = Admin().Put("/api/v1/queues", tree);
  ASSERT_EQ(applied.status, 200) << applied.text;
  EXPECT_THAT(QueueNames(applied.body), ElementsAre("/org", "org/team-a", "org/team-c"));

  const HttpAnswer added = Admin().Put("/api/v1/queues/team-d", R"({"parent": "org"})");
  ASSERT_EQ(added.status, 200) << added.text;
  EXPECT_EQ(Admin().Delete("/api/v1/queues/team-c").status, 200);

  server_->Stop();
  StartServer();
  const HttpAnswer after = Admin().Get("/api/v1/queues");
  ASSERT_EQ(after.status, 200) << after.text;
  EXPECT_THAT(QueueNames(after.body), ElementsAre("/org", "org/team-a", "org/team-d"));
  EXPECT_EQ(after.body["items"][1]["weight"], 2);
  EXPECT_THAT(server_->Log(), HasSubstr("queue tree from the store"));
}

TEST_F(ServerQueuesTest, JobsMustNameALeafQueue) {
  Json job = ShellJob("lost", "true");
  job["spec"]["queue"] = "nope";
  HttpAnswer answer = Admin().Submit(job);
  EXPECT_EQ(answer.status, 400) << answer.text;
  EXPECT_EQ(answer.ErrorField(), "spec.queue");
  EXPECT_THAT(answer.text, HasSubstr(R"(unknown queue \"nope\")"));

  job["spec"]["queue"] = "org";
  answer = Admin().Submit(job);
  EXPECT_EQ(answer.status, 400) << answer.text;
  EXPECT_THAT(answer.text, HasSubstr(R"(\"org\" is not a leaf queue)"));
}

TEST_F(ServerQueuesTest, QuotaHoldsTheSecondJobAndTheFirstRuns) {
  const std::string first = Submit(GpuJob("first", "team-a", 1));
  ASSERT_EQ(Admin().WaitForPhase(first, {"Running"})["status"]["phase"], "Running");
  // A GPU is still free, but team-a may not borrow it.
  const std::string second = Submit(GpuJob("second", "team-a", 1));
  const Json waiting = Admin().WaitForJob(
      second, [](const Json& job) { return job["status"].value("reason", "") == "QuotaExceeded"; });
  EXPECT_EQ(waiting["status"]["phase"], "Pending") << waiting.dump();
  EXPECT_EQ(waiting["status"]["reason"], "QuotaExceeded") << waiting.dump();

  const HttpAnswer queues = Admin().Get("/api/v1/queues");
  const Json& team_a = queues.body["items"][1];
  EXPECT_EQ(team_a["usage"]["gpu"], 1) << team_a.dump();
  EXPECT_EQ(team_a["pendingJobs"], 1) << team_a.dump();
  EXPECT_EQ(team_a["runningJobs"], 1) << team_a.dump();

  for (const std::string& id : {first, second}) {
    EXPECT_EQ(Admin().Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  }
  EXPECT_EQ(Admin().WaitForEnd(first)["status"]["phase"], "Cancelled");
}

TEST_F(ServerQueuesTest, ABlockedJobHasAnEstimatedStart) {
  // team-b borrows team-a's unused GPU: the whole node for at most ten minutes.
  Json holder = GpuJob("holder", "team-b", 2);
  holder["spec"]["timeLimit"] = "10m";
  const std::string first = Submit(holder);
  const Json running = Admin().WaitForPhase(first, {"Running"});
  ASSERT_EQ(running["status"]["phase"], "Running") << running.dump();
  const std::string blocked = Submit(GpuJob("blocked", "team-b", 2));
  ASSERT_EQ(Admin().WaitForJob(blocked,
                               [](const Json& job) {
                                 return !job["status"].value("reason", "").empty();
                               })["status"]["phase"],
            "Pending");

  const HttpAnswer explain = Admin().Get("/api/v1/jobs/" + blocked + "/explain");
  ASSERT_EQ(explain.status, 200) << explain.text;
  const Json& estimate = explain.body["estimate"];
  ASSERT_TRUE(estimate.is_object()) << explain.text;
  ASSERT_TRUE(estimate["startTime"].is_string()) << explain.text;
  EXPECT_EQ(estimate["startTime"], explain.body["estimatedStartTime"]);
  EXPECT_FALSE(estimate.value("blocker", "").empty()) << explain.text;
  // The holder ends at the latest at its start plus its time limit.
  absl::Time started;
  absl::Time predicted;
  std::string error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, running["status"].value("startTime", ""),
                              &started, &error))
      << error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, estimate["startTime"].get<std::string>(),
                              &predicted, &error))
      << error;
  EXPECT_GE(predicted - started, absl::Minutes(9)) << explain.text;
  EXPECT_LE(predicted - started, absl::Minutes(11)) << explain.text;

  const std::string describe = RunCommand(
      absl::StrCat("TESSERA_TOKEN=", server_->admin_token(), " ", TesseraBinary(), " describe ",
                   blocked, " --server http://127.0.0.1:", server_->http_port()));
  EXPECT_THAT(describe, HasSubstr("Estimated start:")) << describe;
  EXPECT_THAT(describe, HasSubstr("(in ")) << describe;
  EXPECT_THAT(describe, HasSubstr("Blocked by:")) << describe;
  EXPECT_THAT(describe, HasSubstr("Position in queue:")) << describe;

  for (const std::string& id : {first, blocked}) {
    EXPECT_EQ(Admin().Post("/api/v1/jobs/" + id + "/cancel", "").status, 200);
  }
}

}  // namespace
}  // namespace tessera::integration

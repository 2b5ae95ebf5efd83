// SlurmCluster against slurmrestd of each REST API version (the in-memory one of
// testing/fake_slurmrestd.h): the version chosen by probing or as set, and a task's whole life
// (submission in that version's body, start and end read from that version's job list).
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/slurm/slurm_api_probe.h"
#include "agent/slurm/slurm_cluster.h"
#include "agent/slurm/testing/fake_slurmrestd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tessera/common/simulated_clock.h"

namespace tessera::agent {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr auto kDeadline = std::chrono::seconds(30);

json Node(std::string name, json flags = json::array()) {
  return {
      {"name", name},          {"cpus", 8},       {"real_memory", 65536}, {"gres", "gpu:h100:4"},
      {"partitions", {"gpu"}}, {"state", "idle"}, {"state_flags", flags}, {"cpu_load", 150}};
}

// The ends the observer hears of, for the test to wait on.
class Ends final : public TaskObserver {
 public:
  void OnTaskStarted(std::string_view launch_id, TimePoint time) override {}
  void OnTaskEnded(const TaskEnd& end) override {
    std::lock_guard<std::mutex> lock(mu_);
    ends_[end.launch_id] = end;
    changed_.notify_all();
  }
  std::optional<TaskEnd> Wait(const std::string& id) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, kDeadline, [&] { return ends_.contains(id); });
    if (!ends_.contains(id)) return std::nullopt;
    return ends_[id];
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, TaskEnd> ends_;
};

// The cluster's log lines (written from its poll thread too).
class Lines {
 public:
  void Add(std::string_view line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.emplace_back(line);
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

SlurmClusterOptions Options(std::shared_ptr<testing::FakeSlurm> slurm, Lines* log) {
  SlurmClusterOptions options;
  options.name = "hpc";
  options.poll_interval = Duration(10);
  options.active_poll_interval = Duration(10);
  options.transport = std::move(slurm);
  options.log = [log](std::string_view line) { log->Add(line); };
  return options;
}

TaskLaunchSpec Spec(std::string id) {
  TaskLaunchSpec spec;
  spec.launch_id = std::move(id);
  spec.job_id = "j1";
  spec.placement.node = "node2";
  spec.placement.gpus = {0, 1};
  spec.command = {"/bin/sh", "-c", "exit 3"};
  spec.cpu = 2000;
  spec.memory = int64_t{1} << 30;
  spec.time_limit = Duration(60'000);
  return spec;
}

class SlurmClusterVersionsTest : public ::testing::TestWithParam<SlurmApiVersion> {};

// With "auto", each version is found by the probe and a task runs its whole course through it:
// the submission in that version's shape (the fake refuses any other), the inventory, a failed
// exit read from that version's job list.
TEST_P(SlurmClusterVersionsTest, ProbedVersionRunsATask) {
  const SlurmApiVersion version = GetParam();
  auto slurm = std::make_shared<testing::FakeSlurm>(version);
  slurm->SetNodes(json::array({Node("node1"), Node("node2", {"DRAIN"})}));
  Lines log;
  Ends ends;
  SlurmClusterOptions options = Options(slurm, &log);
  options.api_version = "auto";
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Create(options, &ends);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_THAT(log.Get(), Contains(HasSubstr("slurmrestd REST API " + SlurmApiVersionName(version) +
                                            " (the newest of v0.0.38 to v0.0.43")));
  std::vector<tessera::Node> nodes = (*cluster)->Inventory();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].gpus.size(), 4u);
  EXPECT_FALSE(nodes[0].unschedulable);
  EXPECT_TRUE(nodes[1].unschedulable);
  EXPECT_EQ((*cluster)->Usage()[0].cpu, 1500);

  (*cluster)->Launch(Spec("t1"));
  std::optional<int64_t> id;
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!(id = (*cluster)->JobIdOf("t1")).has_value() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(id.has_value()) << ::testing::PrintToString(log.Get());
  slurm->SetJob(*id, "FAILED", 3 << 8);
  std::optional<TaskEnd> end = ends.Wait("t1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kFailed);
  EXPECT_EQ(end->reason, "Error");
  EXPECT_EQ(end->exit_code, 3);
  EXPECT_EQ(end->time, TimePoint(Duration(1'010'000)));
  ASSERT_EQ(slurm->Submissions().size(), 1u);
}

// An incremental read with nothing new (HTTP 304 in v0.0.38; from v0.0.39 HTTP 200 with no jobs
// and the warning "No job changes since update_time=T") is read as no news: the followed
// job is not taken for missing (which would cost a GET /job/{id} at every poll). On the injected
// clock, so the polls cross slurmctld's seconds.
TEST_P(SlurmClusterVersionsTest, UnchangedJobListsKeepTheJob) {
  auto slurm = std::make_shared<testing::FakeSlurm>(GetParam());
  SimulatedClock clock(TimePoint(std::chrono::seconds(1'000'000)));
  slurm->SetClock(&clock);
  slurm->SetNodes(json::array({Node("node1"), Node("node2")}));
  Lines log;
  Ends ends;
  SlurmClusterOptions options = Options(slurm, &log);
  options.clock = &clock;
  options.timers = &clock;
  options.poll_interval = Duration(1000);
  options.active_poll_interval = Duration(200);
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Create(options, &ends);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // The poll thread has re-armed its poll `wait` from now.
  auto polled = [&](Duration wait) {
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (clock.NextDue() != clock.Now() + wait) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  };
  ASSERT_TRUE(polled(Duration(1000)));
  (*cluster)->Launch(Spec("u1"));
  ASSERT_TRUE(polled(Duration(200)));
  const std::optional<int64_t> id = (*cluster)->JobIdOf("u1");
  ASSERT_TRUE(id.has_value());
  slurm->SetJob(*id, "RUNNING");
  for (int i = 0; i < 15 && slurm->UnchangedReplies() < 3; ++i) {
    clock.Advance(Duration(200));
    ASSERT_TRUE(polled(Duration(200)));
  }
  EXPECT_GE(slurm->UnchangedReplies(), 3);
  EXPECT_EQ((*cluster)->JobIdOf("u1"), id);  // still followed
  // Not taken for a list without the job either: that would ask for it (GET /job/{id}).
  EXPECT_EQ(slurm->JobReads(), 0);

  slurm->SetJob(*id, "COMPLETED");
  clock.Advance(Duration(200));
  std::optional<TaskEnd> end = ends.Wait("u1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->phase, TaskPhase::kSucceeded);
  cluster->reset();
}

INSTANTIATE_TEST_SUITE_P(AllVersions, SlurmClusterVersionsTest,
                         ::testing::ValuesIn(SupportedSlurmApiVersions()),
                         [](const ::testing::TestParamInfo<SlurmApiVersion>& info) {
                           return "v" + std::to_string(static_cast<int>(info.param));
                         });

TEST(SlurmApiProbeTest, TheNewestServedVersionIsChosen) {
  testing::FakeSlurm v40(SlurmApiVersion::kV40);
  absl::StatusOr<SlurmApiVersion> version = ProbeSlurmApiVersion(v40);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, SlurmApiVersion::kV40);
  EXPECT_EQ(v40.Pings(), 1);  // v0.0.43 to v0.0.41 were answered 404 before their handler

  testing::FakeSlurm v38;
  version = ProbeSlurmApiVersion(v38);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, SlurmApiVersion::kV38);
}

TEST(SlurmApiProbeTest, ErrorsStopTheProbe) {
  testing::FakeSlurm down;
  down.SetDown(true);
  absl::Status status = ProbeSlurmApiVersion(down).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("probing slurmrestd's REST API versions"));

  // A slurmrestd of a version this agent does not know yet.
  class Unknown final : public SlurmTransport {
   public:
    absl::StatusOr<SlurmHttpReply> Send(std::string_view, const std::string& path,
                                        const std::string&) override {
      tried.push_back(path);
      return SlurmHttpReply{404, "{}"};
    }
    std::vector<std::string> tried;
  } unknown;
  status = ProbeSlurmApiVersion(unknown).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("--slurm-api-version"));
  EXPECT_EQ(unknown.tried.size(), 6u);
  EXPECT_EQ(unknown.tried.front(), "/slurm/v0.0.43/ping");
  EXPECT_EQ(unknown.tried.back(), "/slurm/v0.0.38/ping");
}

TEST(SlurmApiProbeTest, ASetVersionWinsAndIsNotProbed) {
  auto slurm = std::make_shared<testing::FakeSlurm>(SlurmApiVersion::kV41);
  slurm->SetNodes(json::array({Node("node1")}));
  Lines log;
  SlurmClusterOptions options = Options(slurm, &log);
  options.api_version = "v0.0.41";
  absl::StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Create(options, nullptr);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(slurm->Pings(), 0);
  EXPECT_THAT(log.Get(), Contains("slurmrestd REST API v0.0.41 (as set)"));
  cluster->reset();

  // A version the slurmrestd does not serve fails at the first read, naming the path.
  options.api_version = "v0.0.40";
  EXPECT_THAT(SlurmCluster::Create(options, nullptr).status().message(),
              HasSubstr("/slurm/v0.0.40/nodes"));

  options.api_version = "v0.0.37";
  absl::Status status = SlurmCluster::Create(options, nullptr).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("--slurm-api-version"));
  EXPECT_THAT(status.message(), HasSubstr("\"v0.0.37\""));
}

}  // namespace
}  // namespace tessera::agent

// Every supported REST API version's replies (testdata/, see its README.md) parse into what the
// v0.0.38 replies of a real Slurm 22.05 parse into: the same jobs and outcomes, nodes and usage,
// submitted job id, refusal and slurmctld clock.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/slurm/slurm_api_version.h"
#include "agent/slurm/slurm_diag.h"
#include "agent/slurm/slurm_inventory.h"
#include "agent/slurm/slurm_jobs.h"
#include "agent/slurm/slurm_submit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr TimePoint kNow = TimePoint(Duration(5'000'000));

std::string Read(const std::string& kind, SlurmApiVersion version) {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  const std::string path = std::string(root != nullptr ? root : ".") +
                           "/src/agent/slurm/testdata/" + kind + "-" +
                           SlurmApiVersionName(version) + ".json";
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << path;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

SlurmInventoryOptions Options() {
  return {.cluster = "hpc", .labels = {{"tessera.io/cluster", "hpc"}}};
}

class SlurmApiFixturesTest : public ::testing::TestWithParam<SlurmApiVersion> {
 protected:
  std::string Read(const std::string& kind) { return agent::Read(kind, GetParam()); }
};

TEST_P(SlurmApiFixturesTest, JobsParseAsV38s) {
  absl::StatusOr<SlurmJobList> v38 = ParseSlurmJobs(agent::Read("jobs", SlurmApiVersion::kV38));
  absl::StatusOr<SlurmJobList> list = ParseSlurmJobs(Read("jobs"));
  ASSERT_TRUE(v38.ok()) << v38.status();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->jobs.size(), v38->jobs.size());
  for (size_t i = 0; i < list->jobs.size(); ++i) {
    const SlurmJob& job = list->jobs[i];
    const SlurmJob& want = v38->jobs[i];
    SCOPED_TRACE(want.name);
    EXPECT_EQ(job.id, want.id);
    EXPECT_EQ(job.name, want.name);
    EXPECT_EQ(job.comment, want.comment);
    EXPECT_EQ(job.state, want.state);
    EXPECT_EQ(job.state_reason, want.state_reason);
    EXPECT_EQ(job.nodes, want.nodes);
    EXPECT_EQ(job.partition, want.partition);
    EXPECT_EQ(job.exit_code, want.exit_code);
    EXPECT_EQ(job.start_time, want.start_time);
    EXPECT_EQ(job.end_time, want.end_time);
    const std::optional<TaskEnd> end = TaskEndOf(job, "l", false, kNow);
    const std::optional<TaskEnd> want_end = TaskEndOf(want, "l", false, kNow);
    ASSERT_EQ(end.has_value(), want_end.has_value());
    if (!end.has_value()) continue;
    EXPECT_EQ(end->phase, want_end->phase);
    EXPECT_EQ(end->reason, want_end->reason);
    EXPECT_EQ(end->exit_code, want_end->exit_code);
    EXPECT_EQ(end->time, want_end->time);
  }
  // What the v0.0.38 test of the same reply checks.
  EXPECT_EQ(LaunchIdOf(list->jobs[1]), "t4");
  EXPECT_EQ(TaskEndOf(list->jobs[1], "t4", false, kNow)->exit_code, 7);
}

TEST_P(SlurmApiFixturesTest, NodesParseAsV38s) {
  absl::StatusOr<SlurmNodeList> v38 =
      ParseSlurmNodes(agent::Read("nodes", SlurmApiVersion::kV38), Options());
  absl::StatusOr<SlurmNodeList> list = ParseSlurmNodes(Read("nodes"), Options());
  ASSERT_TRUE(v38.ok()) << v38.status();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(list->errors, IsEmpty());
  ASSERT_EQ(list->nodes.size(), v38->nodes.size());
  for (size_t i = 0; i < list->nodes.size(); ++i) {
    const SlurmNode& parsed = list->nodes[i];
    const SlurmNode& want = v38->nodes[i];
    SCOPED_TRACE(want.node.name);
    EXPECT_EQ(parsed.node.name, want.node.name);
    EXPECT_EQ(parsed.node.pool, want.node.pool);
    EXPECT_EQ(parsed.node.labels, want.node.labels);
    EXPECT_EQ(parsed.node.capacity, want.node.capacity);
    EXPECT_EQ(parsed.node.allocatable, want.node.allocatable);
    EXPECT_EQ(parsed.node.condition, want.node.condition);
    EXPECT_EQ(parsed.node.unschedulable, want.node.unschedulable);
    ASSERT_EQ(parsed.node.gpus.size(), want.node.gpus.size());
    for (size_t g = 0; g < parsed.node.gpus.size(); ++g) {
      EXPECT_EQ(parsed.node.gpus[g].index, want.node.gpus[g].index);
      EXPECT_EQ(parsed.node.gpus[g].model, want.node.gpus[g].model);
    }
    EXPECT_EQ(parsed.usage.cpu, want.usage.cpu);
    EXPECT_EQ(parsed.usage.memory, want.usage.memory);
    EXPECT_EQ(parsed.address, want.address);
    EXPECT_EQ(parsed.allocated, want.allocated);
  }
  EXPECT_EQ(list->nodes[1].allocated,
            (SlurmHeld{.cpu = 6000, .memory = int64_t{6144} << 20, .gpus = 2}));
  EXPECT_EQ(list->nodes[2].node.condition, NodeCondition::kDown);
  EXPECT_TRUE(list->nodes[3].node.unschedulable);
}

TEST_P(SlurmApiFixturesTest, SubmitReplyParsesAsV38s) {
  absl::StatusOr<int64_t> v38 = ParseSubmitReply(200, agent::Read("submit", SlurmApiVersion::kV38));
  absl::StatusOr<int64_t> id = ParseSubmitReply(200, Read("submit"));
  ASSERT_TRUE(v38.ok()) << v38.status();
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, *v38);
}

TEST_P(SlurmApiFixturesTest, ErrorsParseAsV38s) {
  const std::string text = "Requested node configuration is not available";
  for (const std::string& errors : {agent::Read("errors", SlurmApiVersion::kV38), Read("errors")}) {
    absl::Status refused = ParseSubmitReply(500, errors).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(refused.message(), HasSubstr("Slurm refused the job: " + text));
    absl::Status nodes = ParseSlurmNodes(errors, Options()).status();
    EXPECT_EQ(nodes.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(nodes.message(), HasSubstr(text));
    EXPECT_THAT(ParseSlurmJobs(errors).status().message(), HasSubstr(text));
  }
}

TEST_P(SlurmApiFixturesTest, DiagClockParsesAsV38s) {
  absl::StatusOr<int64_t> v38 = ParseSlurmClock(agent::Read("diag", SlurmApiVersion::kV38));
  absl::StatusOr<int64_t> now = ParseSlurmClock(Read("diag"));
  ASSERT_TRUE(v38.ok()) << v38.status();
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ(*now, *v38);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, SlurmApiFixturesTest,
                         ::testing::ValuesIn(SupportedSlurmApiVersions()),
                         [](const ::testing::TestParamInfo<SlurmApiVersion>& info) {
                           return "v" + std::to_string(static_cast<int>(info.param));
                         });

TEST(SlurmDiagTest, MalformedClocksAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "slurm diag: the reply is not a JSON object"},
      {R"({"errors": [{"error": "down"}]})", "slurm diag: the reply has no \"statistics\": down"},
      {R"({"statistics": {}})", "slurm diag: statistics.req_time: missing"},
      {R"({"statistics": {"req_time": {"set": false, "number": 0}}})",
       "slurm diag: statistics.req_time: missing"},
      {R"({"statistics": {"req_time": {"set": true, "number": "now"}}})",
       "slurm diag: statistics.req_time.number: must be an integer, got \"now\""},
      {R"({"statistics": {"req_time": -5}})",
       "slurm diag: statistics.req_time: must be a non-negative integer, got -5"},
      {R"({"statistics": {"req_time": 99999999999}})",
       "slurm diag: statistics.req_time: 99999999999 is out of range"},
  };
  for (const auto& [reply, error] : cases) {
    absl::Status status = ParseSlurmClock(reply).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << reply;
    EXPECT_EQ(status.message(), error) << reply;
  }
}

}  // namespace
}  // namespace tessera::agent

#include "cli/job_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::cli {
namespace {

using ::testing::ElementsAre;

const Json kJob = Json::parse(R"({
  "apiVersion": "tessera/v1", "kind": "Job",
  "metadata": {"name": "train", "id": "42", "tenant": "team-a"},
  "spec": {"queue": "default", "priority": 0,
           "tasks": [{"name": "worker", "replicas": 2, "resources": {"cpu": "1", "gpu": 4}},
                     {"name": "ps", "replicas": 1, "resources": {"cpu": "1", "gpu": 0.5}}]},
  "status": {"phase": "Running", "reason": "", "cluster": "local",
             "tasks": [{"name": "worker-0", "node": "gpu-1", "phase": "Running", "exitCode": null},
                       {"name": "worker-1", "node": "gpu-2", "phase": "Running", "exitCode": null},
                       {"name": "ps-0", "node": "gpu-1", "phase": "Running", "exitCode": null}],
             "submitTime": "2026-11-29T10:00:00Z", "startTime": "2026-11-29T10:00:01Z"}})");

const TimePoint kNow = *ParseRfc3339("2026-11-29T10:05:00Z");

TEST(JobViewTest, TableRow) {
  EXPECT_THAT(JobTableRow(kJob, kNow, false),
              ElementsAre("42", "train", "team-a", "default", "Running", "", "5m"));
  EXPECT_THAT(
      JobTableRow(kJob, kNow, true),
      ElementsAre("42", "train", "team-a", "default", "Running", "", "5m", "gpu-1,gpu-2", "8.5"));
  EXPECT_THAT(JobTableHeaders(true), ElementsAre("ID", "NAME", "TENANT", "QUEUE", "PHASE", "REASON",
                                                 "AGE", "NODES", "GPUS"));
}

TEST(JobViewTest, MissingOrMistypedValuesNeverThrow) {
  const Json odd = Json::parse(R"({"metadata": "not an object", "spec": {"tasks": {}},
                                   "status": {"submitTime": 12, "tasks": [{"node": 3}]}})");
  EXPECT_THAT(JobTableRow(odd, kNow, true),
              ElementsAre("-", "-", "-", "-", "-", "", "-", "3", "0"));
  EXPECT_EQ(JsonText(Json::array(), {"a", "b"}), "");
  EXPECT_EQ(JsonText(kJob, {"spec", "priority"}), "0");
  EXPECT_EQ(JsonNumber(Json::parse(R"({"gpu": "0.25"})"), {"gpu"}), 0.25);
  EXPECT_EQ(JsonNumber(Json::parse(R"({"gpu": "x"})"), {"gpu"}), std::nullopt);
  EXPECT_TRUE(JsonArray(kJob, {"spec", "queue"}).empty());
}

TEST(JobViewTest, Rfc3339) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:01.25Z"), TimePoint(Duration(1250)));
  EXPECT_EQ(ParseRfc3339("1970-01-01T01:00:00+01:00"), TimePoint(Duration(0)));
  EXPECT_EQ(ParseRfc3339(""), std::nullopt);
  EXPECT_EQ(ParseRfc3339("yesterday"), std::nullopt);
}

TEST(JobViewTest, Ages) {
  EXPECT_EQ(FormatAge(std::chrono::seconds(-3)), "0s");
  EXPECT_EQ(FormatAge(std::chrono::seconds(45)), "45s");
  EXPECT_EQ(FormatAge(std::chrono::seconds(119)), "119s");
  EXPECT_EQ(FormatAge(std::chrono::minutes(12)), "12m");
  EXPECT_EQ(FormatAge(std::chrono::hours(5)), "5h");
  EXPECT_EQ(FormatAge(std::chrono::hours(72)), "3d");
}

TEST(JobViewTest, Numbers) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
  EXPECT_EQ(FormatNumber(8), "8");
  EXPECT_EQ(FormatNumber(1.125), "1.125");
}

}  // namespace
}  // namespace tessera::cli

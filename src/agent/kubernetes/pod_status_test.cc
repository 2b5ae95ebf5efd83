#include "agent/kubernetes/pod_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::agent::k8s {
namespace {

using ::testing::HasSubstr;

const TimePoint kNow = TimePoint(std::chrono::seconds(1'000'000));

Json Pod(const std::string& phase, Json container_state = nullptr) {
  Json pod = {{"metadata",
               {{"name", "j-t-a1"},
                {"resourceVersion", "5"},
                {"annotations", {{"tessera.io/launch-id", "J.t-a1"}}},
                {"labels", {{"tessera.io/launch-id", "J.t-a1-label"}}}}},
              {"status", {{"phase", phase}, {"startTime", "2024-05-01T12:00:00Z"}}}};
  if (!container_state.is_null()) {
    pod["status"]["containerStatuses"] =
        Json::array({{{"name", "sidecar"}, {"state", {{"running", Json::object()}}}},
                     {{"name", "task"}, {"state", container_state}}});
  }
  return pod;
}

Json Terminated(int code, const std::string& reason) {
  return {{"terminated",
           {{"exitCode", code},
            {"reason", reason},
            {"message", "detail"},
            {"startedAt", "2024-05-01T12:00:01Z"},
            {"finishedAt", "2024-05-01T12:10:00.5Z"}}}};
}

TEST(ObservePodTest, ReadsTheTaskContainer) {
  absl::StatusOr<PodObservation> pod = ObservePod(Pod("Failed", Terminated(3, "Error")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->name, "j-t-a1");
  EXPECT_EQ(pod->launch_id, "J.t-a1");  // the annotation, exact
  EXPECT_EQ(pod->resource_version, "5");
  EXPECT_EQ(pod->phase, PodPhase::kFailed);
  EXPECT_TRUE(pod->ran);
  EXPECT_EQ(pod->exit_code, 3);
  EXPECT_EQ(pod->started_at, ParseRfc3339("2024-05-01T12:00:01Z"));
  EXPECT_EQ(pod->finished_at->time_since_epoch().count() % 1000, 500);
  EXPECT_FALSE(pod->deleting);
}

TEST(ObservePodTest, FallsBackToTheLabelAndStartTime) {
  Json object = Pod("Running");
  object["metadata"].erase("annotations");
  object["metadata"]["deletionTimestamp"] = "2024-05-01T12:00:00Z";
  absl::StatusOr<PodObservation> pod = ObservePod(object);
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->launch_id, "J.t-a1-label");
  EXPECT_TRUE(pod->ran);
  EXPECT_TRUE(pod->deleting);
  EXPECT_EQ(pod->started_at, ParseRfc3339("2024-05-01T12:00:00Z"));
}

TEST(ObservePodTest, MalformedPodsAreRefusedNamingTheField) {
  struct Case {
    std::function<void(Json&)> change;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](Json& p) { p = 1; }, "pod: not a JSON object"},
      {[](Json& p) { p["metadata"]["name"] = ""; }, "pod: metadata.name: missing"},
      {[](Json& p) { p["status"]["phase"] = "Dancing"; }, "unknown phase 'Dancing'"},
      {[](Json& p) { p["status"]["phase"] = 1; }, "pod \"j-t-a1\".status.phase: must be a string"},
      {[](Json& p) { p["status"] = "x"; }, "pod \"j-t-a1\".status: must be a map"},
      {[](Json& p) { p["status"]["startTime"] = "yesterday"; }, "startTime: not an RFC 3339"},
      {[](Json& p) { p["status"]["containerStatuses"] = 1; }, "containerStatuses: must be a list"},
      {[](Json& p) {
         p["status"]["containerStatuses"] = Json::array({{{"state", {{"terminated", 1}}}}});
       },
       "terminated: must be a map"},
      {[](Json& p) {
         p["status"]["containerStatuses"] =
             Json::array({{{"state", {{"terminated", {{"exitCode", "3"}}}}}}});
       },
       "exitCode: must be an integer"},
      {[](Json& p) { p["metadata"]["annotations"] = Json::array(); },
       "metadata.annotations: must be a map"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    Json object = Pod("Running");
    c.change(object);
    absl::StatusOr<PodObservation> pod = ObservePod(object);
    ASSERT_FALSE(pod.ok());
    EXPECT_THAT(std::string(pod.status().message()), HasSubstr(c.error));
  }
}

TEST(EndOfPodTest, MapsPodsToTaskEnds) {
  struct Case {
    std::string name;
    Json pod;
    bool cancelled;
    std::optional<TaskPhase> phase;  // nullopt: no end yet
    std::optional<int32_t> exit_code;
    std::string reason;
    std::string message;
  };
  Json deadline = Pod("Failed", Terminated(137, "Error"));
  deadline["status"]["reason"] = "DeadlineExceeded";
  deadline["status"]["message"] = "Pod was active too long";
  Json evicted = Pod("Failed");
  evicted["status"]["reason"] = "Evicted";
  Json admission = Pod("Failed");
  admission["status"]["reason"] = "OutOfnvidia.com/gpu";
  admission["status"]["message"] = "Node didn't have enough resource";
  const std::vector<Case> cases = {
      {"pending", Pod("Pending"), false, std::nullopt, std::nullopt, "", ""},
      {"running", Pod("Running", {{"running", Json::object()}}), false, std::nullopt, std::nullopt,
       "", ""},
      {"unknown", Pod("Unknown"), false, std::nullopt, std::nullopt, "", ""},
      {"running, cancelled", Pod("Running"), true, std::nullopt, std::nullopt, "", ""},
      {"succeeded", Pod("Succeeded", Terminated(0, "Completed")), false, TaskPhase::kSucceeded, 0,
       "", ""},
      {"exit 3", Pod("Failed", Terminated(3, "Error")), false, TaskPhase::kFailed, 3, "Error",
       "Error: detail"},
      {"oom", Pod("Failed", Terminated(137, "OOMKilled")), false, TaskPhase::kFailed, 137, "Killed",
       "OOMKilled: detail"},
      {"start error", Pod("Failed", Terminated(128, "StartError")), false, TaskPhase::kFailed, 128,
       "StartFailed", "StartError: detail"},
      {"deadline", deadline, false, TaskPhase::kFailed, 137, "TimeLimitExceeded",
       "DeadlineExceeded: Pod was active too long"},
      {"evicted", evicted, false, TaskPhase::kFailed, std::nullopt, "Killed", "Evicted"},
      {"admission refused", admission, false, TaskPhase::kFailed, std::nullopt, "StartFailed",
       "OutOfnvidia.com/gpu: Node didn't have enough resource"},
      {"cancelled then failed", Pod("Failed", Terminated(143, "Error")), true,
       TaskPhase::kCancelled, 143, "", "cancelled"},
      {"bad image", Pod("Pending", {{"waiting", {{"reason", "InvalidImageName"}}}}), false,
       TaskPhase::kFailed, std::nullopt, "StartFailed", "InvalidImageName"},
      {"pulling", Pod("Pending", {{"waiting", {{"reason", "ImagePullBackOff"}}}}), false,
       std::nullopt, std::nullopt, "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<PodObservation> pod = ObservePod(c.pod);
    ASSERT_TRUE(pod.ok()) << pod.status();
    std::optional<TaskEnd> end = EndOfPod(*pod, c.cancelled, kNow);
    ASSERT_EQ(end.has_value(), c.phase.has_value());
    if (!end.has_value()) continue;
    EXPECT_EQ(end->launch_id, "J.t-a1");
    EXPECT_EQ(end->phase, *c.phase);
    EXPECT_EQ(end->exit_code, c.exit_code);
    EXPECT_EQ(end->reason, c.reason);
    EXPECT_EQ(end->message, c.message);
  }
}

TEST(EndOfPodTest, VanishedPods) {
  EXPECT_EQ(EndOfVanishedPod("x", true, kNow).phase, TaskPhase::kCancelled);
  TaskEnd lost = EndOfVanishedPod("x", false, kNow);
  EXPECT_EQ(lost.phase, TaskPhase::kFailed);
  EXPECT_EQ(lost.reason, "Lost");
  EXPECT_EQ(lost.time, kNow);
}

TEST(ParseRfc3339Test, Forms) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:01Z"), TimePoint(std::chrono::seconds(1)));
  EXPECT_EQ(ParseRfc3339("1970-01-01T01:00:01+01:00"), TimePoint(std::chrono::seconds(1)));
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:01.250Z"), TimePoint(Duration(1250)));
  EXPECT_FALSE(ParseRfc3339("1970-01-01").has_value());
  EXPECT_FALSE(ParseRfc3339("").has_value());
}

}  // namespace
}  // namespace tessera::agent::k8s

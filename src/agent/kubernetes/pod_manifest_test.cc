#include "agent/kubernetes/pod_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "agent/kubernetes/pod_names.h"

namespace tessera::agent::k8s {
namespace {

using ::testing::HasSubstr;

const PodTemplate kTemplate{
    .kube_namespace = "tessera", .default_image = "busybox:1.36", .cluster = "prod"};

TaskLaunchSpec Spec() {
  TaskLaunchSpec spec;
  spec.launch_id = "J7_x-worker-1-a2";
  spec.job_id = "J7_x";
  spec.task_name = "worker-1";
  spec.placement.node = "n1";
  spec.placement.gpus = {0, 3, 5};
  spec.cpu = 2500;
  spec.memory = int64_t{8} << 30;
  spec.command = {"torchrun"};
  spec.args = {"train.py"};
  spec.env = {{"B", "2"}, {"A", "1"}, {"TESSERA_TASK_ID", "spoofed"}};
  spec.working_dir = "/w";
  spec.time_limit = std::chrono::milliseconds(1500);
  spec.termination_grace = std::chrono::milliseconds(100);
  return spec;
}

TEST(BuildPodTest, MapsTheSpec) {
  absl::StatusOr<Json> pod = BuildPod(Spec(), kTemplate, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  const Json& metadata = (*pod)["metadata"];
  EXPECT_EQ(metadata["name"], PodNameForLaunch("J7_x-worker-1-a2"));
  EXPECT_EQ(metadata["namespace"], "tessera");
  EXPECT_EQ(metadata["annotations"]["tessera.io/launch-id"], "J7_x-worker-1-a2");
  EXPECT_EQ(metadata["annotations"]["tessera.io/job"], "J7_x");
  EXPECT_EQ(metadata["labels"]["tessera.io/launch-id"], "J7_x-worker-1-a2");
  EXPECT_EQ(metadata["labels"]["tessera.io/task"], "worker-1");
  EXPECT_EQ(metadata["labels"]["tessera.io/cluster"], "prod");
  EXPECT_EQ(metadata["labels"]["app.kubernetes.io/managed-by"], "tessera");
  const Json& spec = (*pod)["spec"];
  EXPECT_EQ(spec["nodeName"], "n1");
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 2);          // rounded up
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 1);  // rounded up
  EXPECT_FALSE(spec.contains("tolerations"));
  EXPECT_FALSE(spec.contains("hostname"));  // a single task meets no peers
  EXPECT_FALSE(spec.contains("subdomain"));
  ASSERT_EQ(spec["containers"].size(), 1u);
  const Json& container = spec["containers"][0];
  EXPECT_EQ(container["name"], "task");
  EXPECT_EQ(container["image"], "busybox:1.36");
  EXPECT_EQ(container["command"], Json({"torchrun"}));
  EXPECT_EQ(container["args"], Json({"train.py"}));
  EXPECT_EQ(container["workingDir"], "/w");
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "3");
  EXPECT_EQ(container["resources"]["requests"]["cpu"], "2500m");
  EXPECT_EQ(container["resources"]["requests"]["memory"], "8589934592");
  EXPECT_EQ(container["env"], Json::parse(R"([{"name":"A","value":"1"},{"name":"B","value":"2"},
                                             {"name":"TESSERA_TASK_ID",
                                              "value":"J7_x-worker-1-a2"}])"));
}

TEST(BuildPodTest, OptionalPartsAreLeftOut) {
  TaskLaunchSpec spec = Spec();
  spec.placement.gpus.clear();
  spec.cpu = 0;
  spec.memory = 0;
  spec.command.clear();
  spec.args.clear();
  spec.working_dir.clear();
  spec.time_limit.reset();
  spec.termination_grace = Duration(-5);
  absl::StatusOr<Json> pod = BuildPod(spec, kTemplate, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  const Json& container = (*pod)["spec"]["containers"][0];
  EXPECT_FALSE(container.contains("resources"));
  EXPECT_FALSE(container.contains("command"));
  EXPECT_FALSE(container.contains("args"));
  EXPECT_FALSE(container.contains("workingDir"));
  EXPECT_FALSE((*pod)["spec"].contains("activeDeadlineSeconds"));
  EXPECT_EQ((*pod)["spec"]["terminationGracePeriodSeconds"], 0);
}

TEST(BuildPodTest, ATaskOfAMultiTaskJobIsNamedAndGetsTheRendezvousEnv) {
  TaskLaunchSpec spec = Spec();
  spec.peer_nodes = {"n0", "n1"};
  spec.rank = 1;
  spec.env = {{"MASTER_PORT", "1234"}, {"A", "1"}};
  absl::StatusOr<Json> pod = BuildPod(spec, kTemplate, {});
  ASSERT_TRUE(pod.ok()) << pod.status();
  const std::string service = ServiceNameForJob("J7_x");
  EXPECT_EQ((*pod)["spec"]["subdomain"], service);
  EXPECT_EQ((*pod)["spec"]["hostname"], HostnameForRank("J7_x", 1));
  EXPECT_THAT((*pod)["spec"]["hostname"].get<std::string>(), ::testing::EndsWith("-1"));
  std::map<std::string, std::string> env;
  for (const Json& var : (*pod)["spec"]["containers"][0]["env"]) {
    env[var["name"].get<std::string>()] = var["value"].get<std::string>();
  }
  EXPECT_EQ(env.at("MASTER_ADDR"), HostnameForRank("J7_x", 0) + "." + service);
  EXPECT_EQ(env.at("MASTER_PORT"), "29500");  // the backend's value wins over the task's
  EXPECT_EQ(env.at("WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("RANK"), "1");
  EXPECT_EQ(env.at("LOCAL_RANK"), "0");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "1");
  EXPECT_EQ(env.at("GROUP_RANK"), "1");
  EXPECT_TRUE(env.contains("TF_CONFIG"));
  EXPECT_EQ(env.at("A"), "1");
  EXPECT_EQ(env.at("TESSERA_TASK_ID"), "J7_x-worker-1-a2");

  spec.rank = 2;
  absl::StatusOr<Json> refused = BuildPod(spec, kTemplate, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("rank: 2 is outside 0..1"));
}

TEST(BuildPodTest, ToleratesTheNodesTaints) {
  absl::StatusOr<Json> pod =
      BuildPod(Spec(), kTemplate,
               {{"gpu", "true", TaintEffect::kNoSchedule}, {"maint", "", TaintEffect::kNoExecute}});
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["spec"]["tolerations"], Json::parse(R"([
      {"key":"gpu","operator":"Equal","value":"true","effect":"NoSchedule"},
      {"key":"maint","operator":"Equal","value":"","effect":"NoExecute"}])"));
}

TEST(BuildPodTest, TheImage) {
  TaskLaunchSpec spec = Spec();
  spec.env["TESSERA_IMAGE"] = "nvcr.io/nvidia/pytorch:24.05-py3";
  absl::StatusOr<Json> pod = BuildPod(spec, kTemplate, {});
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["spec"]["containers"][0]["image"], "nvcr.io/nvidia/pytorch:24.05-py3");

  PodTemplate no_default = kTemplate;
  no_default.default_image = "";
  absl::StatusOr<Json> refused = BuildPod(Spec(), no_default, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("no container image: set env TESSERA_IMAGE"));

  spec = Spec();
  spec.placement.node = "";
  EXPECT_FALSE(BuildPod(spec, kTemplate, {}).ok());
}

}  // namespace
}  // namespace tessera::agent::k8s

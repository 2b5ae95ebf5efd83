// DecodeSnakeCaseJob: the job decoder's snake_case style, as scenario files write jobs.
#include "spec/job_mapping.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/jobspec.h"
#include "yaml-cpp/yaml.h"

namespace tessera::spec {
namespace {

using ::testing::HasSubstr;

// One job with every key, in each style.
constexpr char kCamelCase[] = R"(apiVersion: tessera/v1
kind: Job
metadata:
  name: train
  labels: {team: vision}
spec:
  queue: team-a
  priorityClass: high
  minAvailable: 2
  timeLimit: 2h
  duration: 10m
  preemptible: false
  minRuntime: 10m
  terminationGracePeriod: 30s
  restartPolicy: {onFailure: fail, maxRestarts: 1}
  nodeSelector: {rack: r1}
  tolerations: [{key: dedicated, value: infer, effect: NoSchedule}]
  clusterSelector: {region: east}
  clusterAffinity: [{key: region, operator: In, values: [east, west]}]
  clusterAntiAffinity:
    preferred: [{weight: 5, match: [{key: tier, operator: Exists}]}]
  tasks:
    - name: worker
      replicas: 2
      resources: {cpu: "8", memory: 64Gi, gpu: 4, gpuMemory: 40Gi, gpuModel: [H100-80GB],
                  rdma/hca: 1}
      command: [python, train.py]
      args: ["--epochs", "10"]
      env: {NCCL_DEBUG: INFO}
      workingDir: /work
      nodeSelector: {zone: z1}
    - name: ps
      resources: {gpu: 0.5}
)";

constexpr char kSnakeCase[] = R"(name: train
labels: {team: vision}
queue: team-a
priority_class: high
min_available: 2
time_limit: 2h
duration: 10m
preemptible: false
min_runtime: 10m
termination_grace: 30s
restart_policy: {on_failure: fail, max_restarts: 1}
node_selector: {rack: r1}
tolerations: [{key: dedicated, value: infer, effect: NoSchedule}]
cluster_selector: {region: east}
cluster_affinity: [{key: region, operator: In, values: [east, west]}]
cluster_anti_affinity:
  preferred: [{weight: 5, match: [{key: tier, operator: Exists}]}]
tasks:
  - name: worker
    replicas: 2
    cpu: "8"
    memory: 64Gi
    gpu: 4
    gpu_memory: 40Gi
    gpu_model: [H100-80GB]
    rdma/hca: 1
    command: [python, train.py]
    args: ["--epochs", "10"]
    env: {NCCL_DEBUG: INFO}
    working_dir: /work
    node_selector: {zone: z1}
  - {name: ps, gpu: 0.5}
)";

absl::StatusOr<JobSpec> Decode(const std::string& text, const JobMappingOptions& options = {}) {
  return DecodeSnakeCaseJob(YAML::Load(text), options);
}

std::string Rendered(const JobSpec& spec) { return RenderJobJson(JobDocument{.spec = spec}); }

TEST(JobMappingTest, BothStylesDecodeTheSameJobToTheSameSpec) {
  absl::StatusOr<JobDocument> camel = ParseJobDocument(kCamelCase);
  ASSERT_TRUE(camel.ok()) << camel.status();
  absl::StatusOr<JobSpec> snake = Decode(kSnakeCase);
  ASSERT_TRUE(snake.ok()) << snake.status();
  EXPECT_EQ(Rendered(*snake), Rendered(camel->spec));
  EXPECT_EQ(snake->name, "train");
  EXPECT_EQ(snake->tasks[0].request.gpu_count, 4);
  EXPECT_EQ(snake->tasks[0].request.node_selector.at("zone"), "z1");
  EXPECT_EQ(snake->tasks[1].request.gpu_milli, 500);
}

TEST(JobMappingTest, CallerKeysAreLeftToTheCaller) {
  const JobMappingOptions options{.path = "jobs[0]", .caller_keys = {"name", "at", "outcome"}};
  absl::StatusOr<JobSpec> spec =
      Decode("{name: \"infer-{0..3}\", at: 5s, outcome: fail, tasks: [{name: w}]}", options);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "");  // the caller's: a brace range is no job name
  EXPECT_FALSE(Decode("{at: 5s, tasks: [{name: w}]}").ok());
}

struct ErrorCase {
  std::string text;
  std::string field;
  int line;
  std::string message;
};

TEST(JobMappingTest, ErrorsNameTheFieldAsWrittenAndItsLine) {
  const ErrorCase cases[] = {
      {"tasks:\n  - {name: w, gpu: -1}\n", "jobs[2].tasks[0].gpu", 2, "must be >= 0"},
      {"tasks:\n  - name: w\n    gpu_memory: 1Gi\n", "jobs[2].tasks[0].gpu_memory", 3,
       "needs gpu > 0"},
      {"tasks: [{name: w, resources: {gpu: 1}}]\n", "jobs[2].tasks[0].resources", 1, "unknown key"},
      {"minAvailable: 1\ntasks: [{name: w}]\n", "jobs[2].minAvailable", 1,
       "unknown key (did you mean \"min_available\"?)"},
      {"termination_grace_period: 1s\ntasks: [{name: w}]\n", "jobs[2].termination_grace_period", 1,
       "unknown key (did you mean \"termination_grace\"?)"},
      // JobSpec::Validate's errors, under the mapping's spelling.
      {"min_available: 3\ntasks:\n  - {name: w, replicas: 2}\n", "jobs[2].min_available", 1,
       "must be in 1..2 (the job's task count), got 3"},
      {"tasks:\n  - {name: w}\n  - {name: w}\n", "jobs[2].tasks[1].name", 3,
       "duplicate task group name \"w\" (also jobs[2].tasks[0])"},
      {"priority: 1\npriority_class: high\ntasks: [{name: w}]\n", "jobs[2].priority_class", 2,
       "give priority or priority_class, not both"},
      {"node_selector: {a: x}\ntasks:\n  - {name: w, node_selector: {a: y}}\n",
       "jobs[2].tasks[0].node_selector.a", 3,
       "\"y\" conflicts with jobs[2].node_selector.a (\"x\")"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<JobSpec> spec = Decode(c.text, {.path = "jobs[2]"});
    ASSERT_FALSE(spec.ok()) << c.text;
    const std::optional<JobSpecError> error = GetJobSpecError(spec.status());
    ASSERT_TRUE(error.has_value()) << spec.status();
    EXPECT_EQ(error->field, c.field) << c.text;
    EXPECT_EQ(error->line, c.line) << c.text;
    EXPECT_THAT(error->message, HasSubstr(c.message)) << c.text;
  }
}

TEST(JobMappingTest, BoundsLimitQuantitiesAndDurations) {
  const JobMappingOptions options{.path = "j",
                                  .bounds = {.max_cpu_millis = 4'000,
                                             .max_bytes = int64_t{4} << 40,
                                             .max_milli_gpu = 8'000,
                                             .max_duration = std::chrono::hours(24 * 365)}};
  const std::pair<std::string, std::string> cases[] = {
      {"tasks: [{name: w, cpu: 5}]", "j.tasks[0].cpu: must be at most 4 cores"},
      {"tasks: [{name: w, memory: 5Ti}]", "j.tasks[0].memory: must be at most 4 TiB"},
      {"tasks: [{name: w, gpu: 9}]", "j.tasks[0].gpu: must be at most 8 GPUs"},
      {"time_limit: 8761h\ntasks: [{name: w}]", "j.time_limit: must be at most 8760h (1 year)"},
  };
  for (const auto& [text, want] : cases) {
    absl::StatusOr<JobSpec> spec = Decode(text, options);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_THAT(spec.status().message(), HasSubstr(want));
  }
  EXPECT_TRUE(Decode("tasks: [{name: w, cpu: 4, gpu: 8}]", options).ok());
}

}  // namespace
}  // namespace tessera::spec

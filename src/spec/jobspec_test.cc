#include "spec/jobspec.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/job_json.h"
#include "spec/testing/contract_text.h"

namespace tessera::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

using namespace std::chrono_literals;

// shared/JOBSPEC.md's example, verbatim (comments, "…" placeholders and the status block).
std::string ReadExample() {
  const std::optional<std::string> example =
      tessera::testing::ReadSourceFile("src/spec/testdata/jobspec_example.yaml");
  EXPECT_TRUE(example.has_value()) << "cannot read the example";
  return example.value_or("");
}

// The example as a client sends it: everything before the server's `status:` block.
std::string ClientExample() {
  const std::string example = ReadExample();
  return example.substr(0, example.find("\nstatus:") + 1);
}

JobDocument ParseOk(std::string_view text, DocumentFormat format = DocumentFormat::kAuto) {
  ParseOptions options;
  options.format = format;
  absl::StatusOr<JobDocument> job = ParseJobDocument(text, options);
  EXPECT_TRUE(job.ok()) << job.status() << "\n" << text;
  return job.ok() ? *std::move(job) : JobDocument{};
}

std::string ParseError(std::string_view text, DocumentFormat format = DocumentFormat::kAuto) {
  ParseOptions options;
  options.format = format;
  absl::StatusOr<JobDocument> job = ParseJobDocument(text, options);
  EXPECT_FALSE(job.ok()) << text;
  if (job.ok()) return "";
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(job.status().message());
}

// Canonical text of a document: every field of the spec and metadata is rendered.
std::string Canonical(const JobDocument& job) { return RenderJobJson(job); }

// A minimal valid document with `spec_lines` (each indented by two spaces) appended to spec.
std::string Doc(std::string_view spec_lines) {
  return "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: j}\nspec:\n" +
         std::string(spec_lines);
}
std::string Task(std::string_view task_lines) {
  return Doc("  tasks:\n  - name: w\n" + std::string(task_lines));
}

TEST(ParseJobDocumentTest, ExampleVerbatimIsRefusedForItsStatus) {
  const std::string example = ReadExample();
  ParseOptions options;
  options.source = "job.yaml";
  absl::StatusOr<JobDocument> job = ParseJobDocument(example, options);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), "job.yaml:30:1: status: set by the server");
}

TEST(ParseJobDocumentTest, ExampleIsTheContractsVerbatim) {
  const std::optional<std::string> contract = tessera::testing::ContractExample("JOBSPEC.md");
  if (!contract) GTEST_SKIP() << "no ../shared/JOBSPEC.md beside the source tree";
  EXPECT_EQ(ReadExample(), *contract) << "src/spec/testdata/jobspec_example.yaml must be the "
                                         "fenced example of JOBSPEC.md, verbatim";
}

TEST(ParseJobDocumentTest, ExampleAcceptsEveryKey) {
  const JobDocument job = ParseOk(ClientExample());
  EXPECT_EQ(job.spec.name, "resnet-train");
  EXPECT_THAT(job.spec.labels, ElementsAre(Pair("team", "vision")));
  EXPECT_EQ(job.metadata.request_id, "7f1c…");
  EXPECT_EQ(job.metadata.id, "");
  EXPECT_FALSE(job.status.has_value());
  const JobSpec& spec = job.spec;
  EXPECT_EQ(spec.queue, "team-a");
  EXPECT_EQ(spec.priority, 100);
  EXPECT_EQ(spec.min_available, 2);
  EXPECT_EQ(spec.time_limit, Duration(2h));
  EXPECT_TRUE(spec.preemptible);
  EXPECT_EQ(spec.min_runtime, Duration(10min));
  EXPECT_EQ(spec.termination_grace, Duration(30s));
  EXPECT_EQ(spec.restart_policy.on_failure, RestartAction::kRequeue);
  EXPECT_EQ(spec.restart_policy.max_restarts, 3);
  EXPECT_THAT(spec.cluster_selector, ElementsAre(Pair("region", "east")));
  ASSERT_EQ(spec.cluster_affinity.required.size(), 1u);
  EXPECT_EQ(spec.cluster_affinity.required[0],
            (LabelRequirement{.key = "region", .op = LabelOperator::kIn, .values = {"east", "west"}}));
  EXPECT_TRUE(spec.cluster_affinity.preferred.empty());
  EXPECT_TRUE(spec.cluster_anti_affinity.empty());
  EXPECT_EQ(spec.duration, Duration(10min));
  ASSERT_EQ(spec.tasks.size(), 1u);
  const TaskGroup& worker = spec.tasks[0];
  EXPECT_EQ(worker.name, "worker");
  EXPECT_EQ(worker.replicas, 2);
  EXPECT_THAT(worker.command, ElementsAre("python", "train.py"));
  EXPECT_THAT(worker.args, ElementsAre("--epochs", "10"));
  EXPECT_THAT(worker.env, ElementsAre(Pair("NCCL_DEBUG", "INFO")));
  EXPECT_EQ(worker.working_dir, "/work");
  const TaskRequest& r = worker.request;
  EXPECT_EQ(r.cpu, 8000);
  EXPECT_EQ(r.memory, int64_t{64} << 30);
  EXPECT_EQ(r.gpu_count, 4);
  EXPECT_EQ(r.gpu_milli, 1000);
  EXPECT_EQ(r.gpu_memory, int64_t{40} << 30);
  EXPECT_THAT(r.gpu_models, ElementsAre("H100-80GB"));
  EXPECT_TRUE(r.extended.empty());
  EXPECT_THAT(r.node_selector, ElementsAre(Pair("rack", "r1")));
  ASSERT_EQ(r.tolerations.size(), 1u);
  EXPECT_EQ(r.tolerations[0].key, "dedicated");
  EXPECT_EQ(r.tolerations[0].value, "infer");
  EXPECT_FALSE(r.tolerations[0].exists);
  EXPECT_EQ(r.tolerations[0].effect, TaintEffect::kNoSchedule);
}

TEST(ParseJobDocumentTest, Defaults) {
  const JobDocument job = ParseOk(R"(apiVersion: tessera/v1
kind: Job
spec:
  tasks: [{name: main}]
)");
  const JobSpec& spec = job.spec;
  EXPECT_EQ(spec.name, "");  // generated by the server
  EXPECT_EQ(spec.queue, "default");
  EXPECT_EQ(spec.priority, 0);
  EXPECT_EQ(spec.min_available, std::nullopt);
  EXPECT_EQ(spec.GangSize(), 1);
  EXPECT_EQ(spec.time_limit, std::nullopt);
  EXPECT_TRUE(spec.preemptible);
  EXPECT_EQ(spec.min_runtime, Duration(0));
  EXPECT_EQ(spec.termination_grace, Duration(0));
  EXPECT_EQ(spec.restart_policy.on_failure, RestartAction::kRequeue);
  EXPECT_EQ(spec.restart_policy.max_restarts, 3);
  ASSERT_EQ(spec.tasks.size(), 1u);
  EXPECT_EQ(spec.tasks[0].replicas, 1);
  EXPECT_EQ(spec.tasks[0].request.cpu, 0);
  EXPECT_EQ(spec.tasks[0].request.gpu_count, 0);
}

TEST(ParseJobDocumentTest, GpuQuantities) {
  struct Case {
    std::string gpu;
    int32_t count;
    int64_t milli;
  };
  for (const Case& c :
       {Case{"0.5", 1, 500}, Case{"500m", 1, 500}, Case{"\"0.25\"", 1, 250}, Case{"1", 1, 1000},
        Case{"4", 4, 1000}, Case{"8.0", 8, 1000}, Case{"0", 0, 0}}) {
    SCOPED_TRACE(c.gpu);
    const JobDocument job = ParseOk(Task("    resources: {gpu: " + c.gpu + "}\n"));
    ASSERT_EQ(job.spec.tasks.size(), 1u);
    EXPECT_EQ(job.spec.tasks[0].request.gpu_count, c.count);
    EXPECT_EQ(job.spec.tasks[0].request.gpu_milli, c.milli);
  }
}

TEST(ParseJobDocumentTest, ExtendedResourcesAndPriorityClass) {
  const JobDocument job = ParseOk(Doc(R"(  priorityClass: high
  tasks:
  - name: w
    resources: {rdma/hca: 1, nvidia.com/mig-1g.10gb: 2, ephemeral-storage: 10Gi, hugepages-2Mi: 1Gi}
)"));
  EXPECT_EQ(job.spec.priority, 100);
  EXPECT_THAT(job.spec.tasks[0].request.extended,
              ElementsAre(Pair("ephemeral-storage", int64_t{10} << 30),
                          Pair("hugepages-2Mi", int64_t{1} << 30),
                          Pair("nvidia.com/mig-1g.10gb", 2), Pair("rdma/hca", 1)));
}

TEST(ParseJobDocumentTest, CustomPriorityClasses) {
  const PriorityClasses classes{{"batch", -5}};
  ParseOptions options;
  options.priority_classes = &classes;
  absl::StatusOr<JobDocument> job =
      ParseJobDocument(Doc("  priorityClass: batch\n  tasks: [{name: w}]\n"), options);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.priority, -5);
  EXPECT_THAT(ParseJobDocument(Doc("  priorityClass: high\n  tasks: [{name: w}]\n"), options)
                  .status()
                  .message(),
              HasSubstr("unknown priority class \"high\" (known: batch)"));
}

TEST(ParseJobDocumentTest, TaskPlacementMergesWithTheJobs) {
  const JobDocument job = ParseOk(Doc(R"(  nodeSelector: {rack: r1}
  tolerations: [{key: a, operator: Exists}]
  tasks:
  - name: w
    nodeSelector: {zone: z1, rack: r1}
    tolerations: [{operator: Exists, effect: NoExecute}]
  - name: x
)"));
  const TaskRequest& w = job.spec.tasks[0].request;
  EXPECT_THAT(w.node_selector, ElementsAre(Pair("rack", "r1"), Pair("zone", "z1")));
  ASSERT_EQ(w.tolerations.size(), 2u);
  EXPECT_TRUE(w.tolerations[0].exists);
  EXPECT_EQ(w.tolerations[0].effect, std::nullopt);
  EXPECT_EQ(w.tolerations[1].key, "");
  EXPECT_EQ(w.tolerations[1].effect, TaintEffect::kNoExecute);
  const TaskRequest& x = job.spec.tasks[1].request;
  EXPECT_THAT(x.node_selector, ElementsAre(Pair("rack", "r1")));
  EXPECT_EQ(x.tolerations.size(), 1u);
}

TEST(ParseJobDocumentTest, ScalarsOfAnyStyleReadAsText) {
  const JobDocument job = ParseOk(Doc(R"(  queue: "q1"
  priority: -3
  preemptible: False
  timeLimit: 90
  tasks:
  - name: w
    replicas: 3
    resources: {cpu: 1.5, memory: '1G'}
    env: {THREADS: 8, ON: true, EMPTY: ""}
    command: [run, 1]
)"));
  EXPECT_EQ(job.spec.queue, "q1");
  EXPECT_EQ(job.spec.priority, -3);
  EXPECT_FALSE(job.spec.preemptible);
  EXPECT_EQ(job.spec.time_limit, Duration(90s));
  EXPECT_EQ(job.spec.tasks[0].replicas, 3);
  EXPECT_EQ(job.spec.tasks[0].request.cpu, 1500);
  EXPECT_EQ(job.spec.tasks[0].request.memory, 1'000'000'000);
  EXPECT_THAT(job.spec.tasks[0].env,
              ElementsAre(Pair("EMPTY", ""), Pair("ON", "true"), Pair("THREADS", "8")));
  EXPECT_THAT(job.spec.tasks[0].command, ElementsAre("run", "1"));
}

// Each error names the field path and the position of the offending node.
TEST(ParseJobDocumentTest, Errors) {
  struct Case {
    std::string name;
    std::string text;
    std::string message;  // the full message, or a prefix of it when it ends with "…"
  };
  const Case cases[] = {
      {"unknown resource", Doc(R"(  tasks:
  - name: a
  - name: b
    resources: {gpuu: 1}
)"),
       "8:17: spec.tasks[1].resources.gpuu: unknown key (did you mean \"gpu\"?)"},
      {"negative gpu", Doc("  tasks:\n  - name: a\n  - name: b\n    resources: {gpu: -1}\n"),
       "8:22: spec.tasks[1].resources.gpu: must be >= 0"},
      {"one and a half GPUs", Task("    resources: {gpu: 1.5}\n"),
       "7:22: spec.tasks[0].resources.gpu: must be a whole number of GPUs, or a share of one GPU "
       "below 1 (0.5 = half a GPU), not 1.5"},
      {"bad cpu", Task("    resources: {cpu: lots}\n"), "7:22: spec.tasks[0].resources.cpu: …"},
      {"unknown top key", "apiVersion: tessera/v1\nkind: Job\nspce: {}\n",
       "3:1: spce: unknown key (did you mean \"spec\"?)"},
      {"snake case key", Doc("  min_available: 1\n  tasks: [{name: w}]\n"),
       "5:3: spec.min_available: unknown key (did you mean \"minAvailable\"?)"},
      {"unknown key, no suggestion", Doc("  tasks: [{name: w, image: x}]\n"),
       "5:21: spec.tasks[0].image: unknown key"},
      {"status from a client", ClientExample() + "status: {phase: Running}\n",
       "30:1: status: set by the server"},
      {"id from a client", "apiVersion: tessera/v1\nkind: Job\nmetadata: {id: j-1}\n",
       "3:12: metadata.id: set by the server"},
      {"missing apiVersion", "kind: Job\nspec: {tasks: [{name: w}]}\n",
       "1:1: apiVersion: required (tessera/v1)"},
      {"wrong apiVersion", "apiVersion: v1\nkind: Job\n",
       "1:13: apiVersion: must be tessera/v1, not \"v1\""},
      {"wrong kind", "apiVersion: tessera/v1\nkind: Pod\n", "2:7: kind: must be Job, not \"Pod\""},
      {"missing spec", "apiVersion: tessera/v1\nkind: Job\n", "1:1: spec: required"},
      {"missing tasks", Doc("  queue: q\n"), "5:3: spec.tasks: required: at least one task group"},
      {"empty tasks", Doc("  tasks: []\n"), "5:10: spec.tasks: must have at least one task group"},
      {"task without name", Doc("  tasks: [{replicas: 2}]\n"),
       "5:11: spec.tasks[0].name: required"},
      {"key given twice", Doc("  queue: a\n  queue: b\n  tasks: [{name: w}]\n"),
       "6:3: spec.queue: given twice (first at line 5)"},
      {"wrong type", Doc("  tasks: {name: w}\n"),
       "5:10: spec.tasks: must be a list of task groups, not a mapping"},
      {"list for a string", Doc("  queue: [a]\n  tasks: [{name: w}]\n"),
       "5:10: spec.queue: must be a single value, not a list"},
      {"null value", Doc("  queue:\n  tasks: [{name: w}]\n"), "5:3: spec.queue: must have a value"},
      {"replicas not an integer", Task("    replicas: 1.5\n"),
       "7:15: spec.tasks[0].replicas: must be an integer, not \"1.5\""},
      {"zero replicas", Task("    replicas: 0\n"), "7:15: spec.tasks[0].replicas: must be >= 1"},
      {"priority out of range", Doc("  priority: 3000000000\n  tasks: [{name: w}]\n"),
       "5:13: spec.priority: must be <= 2147483647"},
      {"priority and class", Doc("  priority: 1\n  priorityClass: high\n  tasks: [{name: w}]\n"),
       "6:18: spec.priorityClass: give priority or priorityClass, not both"},
      {"unknown priority class", Doc("  priorityClass: urgent\n  tasks: [{name: w}]\n"),
       "5:18: spec.priorityClass: unknown priority class \"urgent\" (known: critical, high, low, "
       "normal)"},
      {"bad bool", Doc("  preemptible: yes\n  tasks: [{name: w}]\n"),
       "5:16: spec.preemptible: must be true or false, not \"yes\""},
      {"negative duration", Doc("  minRuntime: -5s\n  tasks: [{name: w}]\n"),
       "5:15: spec.minRuntime: must be >= 0"},
      {"zero time limit", Doc("  timeLimit: 0s\n  tasks: [{name: w}]\n"),
       "5:14: spec.timeLimit: must be > 0"},
      {"zero simulated duration", Doc("  duration: 0s\n  tasks: [{name: w}]\n"),
       "5:13: spec.duration: must be > 0"},
      {"bad restart action", Doc("  restartPolicy: {onFailure: retry}\n  tasks: [{name: w}]\n"),
       "5:30: spec.restartPolicy.onFailure: must be one of requeue, fail, not \"retry\""},
      {"negative max restarts", Doc("  restartPolicy: {maxRestarts: -1}\n  tasks: [{name: w}]\n"),
       "5:32: spec.restartPolicy.maxRestarts: must be >= 0"},
      {"bad operator", Doc("  tolerations: [{key: a, operator: In}]\n  tasks: [{name: w}]\n"),
       "5:36: spec.tolerations[0].operator: must be one of Equal, Exists, not \"In\""},
      {"bad effect", Doc("  tolerations: [{key: a, effect: Never}]\n  tasks: [{name: w}]\n"),
       "5:34: spec.tolerations[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute, "
       ", not \"Never\""},
      {"toleration without key", Doc("  tolerations: [{value: a}]\n  tasks: [{name: w}]\n"),
       "5:17: spec.tolerations[0].key: required unless the operator is Exists"},
      {"Exists with a value",
       Doc("  tolerations: [{key: a, operator: Exists, value: b}]\n  tasks: [{name: w}]\n"),
       "5:51: spec.tolerations[0].value: must be empty when the operator is Exists"},
      {"empty selector key", Doc("  nodeSelector: {'': a}\n  tasks: [{name: w}]\n"),
       "5:18: spec.nodeSelector: keys must not be empty"},
      {"selector conflict", Doc(R"(  nodeSelector: {rack: r1}
  tasks:
  - name: w
    nodeSelector: {rack: r2}
)"),
       "8:19: spec.tasks[0].nodeSelector.rack: \"r2\" conflicts with spec.nodeSelector.rack "
       "(\"r1\")"},
      {"device plugin name for GPUs", Task("    resources: {nvidia.com/gpu: 1}\n"),
       "7:33: spec.tasks[0].resources.nvidia.com/gpu: GPUs are requested with gpu (4 = four whole "
       "GPUs, 0.5 = half of one)"},
      {"gpuMemory without gpu", Task("    resources: {gpuMemory: 1Gi}\n"),
       "7:28: spec.tasks[0].resources.gpuMemory: needs gpu > 0"},
      {"gpuModel without gpu", Task("    resources: {gpuModel: A100}\n"),
       "7:27: spec.tasks[0].resources.gpuModel: needs gpu > 0"},
      {"empty gpuModel", Task("    resources: {gpu: 1, gpuModel: [A100, '']}\n"),
       "7:42: spec.tasks[0].resources.gpuModel[1]: must not be empty"},
      {"env name with =", Task("    env: {A=B: c}\n"),
       "7:10: spec.tasks[0].env.A=B: names must not contain '='"},
      {"command as a string", Task("    command: python train.py\n"),
       "7:14: spec.tasks[0].command: must be a list of strings, not a single value"},
      {"empty request id", "apiVersion: tessera/v1\nkind: Job\nmetadata: {requestId: ''}\n",
       "3:23: metadata.requestId: must not be empty"},
      {"not a mapping", "- a\n- b\n",
       "1:1: the document must be a mapping (apiVersion, kind, metadata, spec), not a list"},
      {"empty document", "# nothing\n", "the document is empty"},
      {"syntax error", "apiVersion: [\n", "…invalid YAML: …"},
      {"two documents", ClientExample() + "---\nkind: Job\n",
       "30:1: only one document is allowed (found a second one)"},
      // Errors found by JobSpec::Validate, reported under the document's names and positions.
      {"invalid job name",
       "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: Big_Job}\n"
       "spec: {tasks: [{name: w}]}\n",
       "3:18: metadata.name: \"Big_Job\" is not a valid name …"},
      {"duplicate group", Doc("  tasks: [{name: w}, {name: w}]\n"),
       "5:29: spec.tasks[1].name: duplicate task group name \"w\" (also spec.tasks[0])"},
      {"gang larger than the job", Doc("  minAvailable: 3\n  tasks: [{name: w, replicas: 2}]\n"),
       "5:17: spec.minAvailable: must be in 1..2 (the job's task count), got 3"},
      {"empty queue", Doc("  queue: ''\n  tasks: [{name: w}]\n"),
       "5:10: spec.queue: must not be empty"},
      {"too much gpu memory", Task("    resources: {gpu: 8, gpuMemory: 2Ei}\n"),
       "7:36: spec.tasks[0].resources.gpuMemory: too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string message = ParseError(c.text);
    if (c.message.starts_with("…")) {
      const std::string rest = c.message.substr(std::string_view("…").size());
      EXPECT_THAT(message, HasSubstr(rest.substr(0, rest.find("…"))));
    } else if (c.message.ends_with("…")) {
      EXPECT_THAT(message, StartsWith(c.message.substr(0, c.message.size() - 3)));
    } else {
      EXPECT_EQ(message, c.message);
    }
  }
}

constexpr std::string_view kAffinitySpec = R"(  clusterAffinity:
    required: [{key: region, operator: In, values: [east, west]}]
    preferred:
    - {weight: 10, match: [{key: tier, operator: In, values: [cheap]}]}
    - {weight: 100, match: [{key: gpu, operator: Exists}, {key: spot, operator: DoesNotExist}]}
  clusterAntiAffinity:
    required: [{key: tessera.io/cluster, operator: NotIn, values: [lab]}]
    preferred: [{weight: 5, match: [{key: region, operator: In, values: [west]}]}]
  tasks: [{name: w}]
)";

TEST(ParseJobDocumentTest, ClusterAffinity) {
  const JobDocument job = ParseOk(Doc(kAffinitySpec));
  const ClusterAffinityTerms& affinity = job.spec.cluster_affinity;
  ASSERT_EQ(affinity.required.size(), 1u);
  EXPECT_EQ(affinity.required[0],
            (LabelRequirement{"region", LabelOperator::kIn, {"east", "west"}}));
  ASSERT_EQ(affinity.preferred.size(), 2u);
  EXPECT_EQ(affinity.preferred[0].weight, 10);
  EXPECT_EQ(affinity.preferred[1].weight, 100);
  EXPECT_EQ(affinity.preferred[1].match,
            (std::vector<LabelRequirement>{{"gpu", LabelOperator::kExists, {}},
                                           {"spot", LabelOperator::kDoesNotExist, {}}}));
  const ClusterAffinityTerms& anti = job.spec.cluster_anti_affinity;
  ASSERT_EQ(anti.required.size(), 1u);
  EXPECT_EQ(anti.required[0].op, LabelOperator::kNotIn);
  ASSERT_EQ(anti.preferred.size(), 1u);
  EXPECT_EQ(anti.preferred[0].weight, 5);
  // Empty mappings and lists are no constraint.
  const JobDocument empty =
      ParseOk(Doc("  clusterAffinity: {}\n  clusterAntiAffinity: {required: []}\n"
                  "  tasks: [{name: w}]\n"));
  EXPECT_TRUE(empty.spec.cluster_affinity.empty());
  EXPECT_TRUE(empty.spec.cluster_anti_affinity.empty());
}

TEST(ParseJobDocumentTest, ClusterAffinityErrors) {
  struct Case {
    std::string name;
    std::string spec;
    std::string message;
  };
  const Case cases[] = {
      {"weight above 100",
       "  clusterAffinity: {preferred: [{weight: 101, match: [{key: a, operator: Exists}]}]}\n",
       "5:42: spec.clusterAffinity.preferred[0].weight: must be 1..100"},
      {"weight zero",
       "  clusterAntiAffinity: {preferred: [{weight: 0, match: [{key: a, operator: Exists}]}]}\n",
       "5:46: spec.clusterAntiAffinity.preferred[0].weight: must be 1..100"},
      {"weight not an integer",
       "  clusterAffinity: {preferred: [{weight: x, match: [{key: a, operator: Exists}]}]}\n",
       "5:42: spec.clusterAffinity.preferred[0].weight: must be an integer 1..100"},
      {"weight missing",
       "  clusterAffinity: {preferred: [{match: [{key: a, operator: Exists}]}]}\n",
       "5:33: spec.clusterAffinity.preferred[0].weight: required (1..100)"},
      {"match missing", "  clusterAffinity: {preferred: [{weight: 1}]}\n",
       "5:33: spec.clusterAffinity.preferred[0].match: must list at least one requirement"},
      {"unknown operator",
       "  clusterAffinity: {required: [{key: a, operator: Equals, values: [x]}]}\n",
       "5:51: spec.clusterAffinity.required[0].operator: must be one of In, NotIn, Exists, "
       "DoesNotExist, not \"Equals\""},
      {"operator missing", "  clusterAffinity: {required: [{key: a, values: [x]}]}\n",
       "5:32: spec.clusterAffinity.required[0].operator: required (In, NotIn, Exists or "
       "DoesNotExist)"},
      {"key missing", "  clusterAffinity: {required: [{operator: Exists}]}\n",
       "5:32: spec.clusterAffinity.required[0].key: required"},
      {"In without values", "  clusterAffinity: {required: [{key: a, operator: In}]}\n",
       "5:32: spec.clusterAffinity.required[0].values: must list at least one value for operator "
       "In"},
      {"Exists with values",
       "  clusterAffinity: {required: [{key: a, operator: Exists, values: [x]}]}\n",
       "5:67: spec.clusterAffinity.required[0].values: must be empty for operator Exists"},
      {"unknown key", "  clusterAffinity: {require: []}\n",
       "5:21: spec.clusterAffinity.require: unknown key (did you mean \"required\"?)"},
      {"neither a list nor a mapping", "  clusterAffinity: east\n",
       "5:20: spec.clusterAffinity: must be a list of requirements or a mapping (required, "
       "preferred), not a single value"},
      {"short form: a requirement not a mapping", "  clusterAffinity: [a]\n",
       "5:21: spec.clusterAffinity[0]: must be a mapping (key, operator, values), not a single "
       "value"},
      {"required not a list", "  clusterAntiAffinity: {required: {key: a}}\n",
       "5:35: spec.clusterAntiAffinity.required: must be a list of {key, operator, values} "
       "requirements, not a mapping"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ParseError(Doc(c.spec + "  tasks: [{name: w}]\n")), c.message);
  }
}

TEST(RenderTest, ClusterAffinityRoundTrips) {
  const JobDocument job = ParseOk(Doc(kAffinitySpec));
  for (const std::string& text : {RenderJobYaml(job), RenderJobJson(job)}) {
    SCOPED_TRACE(text);
    const JobDocument back = ParseOk(text);
    EXPECT_EQ(back.spec.cluster_affinity, job.spec.cluster_affinity);
    EXPECT_EQ(back.spec.cluster_anti_affinity, job.spec.cluster_anti_affinity);
  }
}

TEST(ParseJobDocumentTest, ErrorPartsAndSource) {
  ParseOptions options;
  options.source = "job.yaml";
  absl::Status status = ParseJobDocument(Task("    resources: {gpu: -1}\n"), options).status();
  EXPECT_EQ(status.message(), "job.yaml:7:22: spec.tasks[0].resources.gpu: must be >= 0");
  std::optional<JobSpecError> error = GetJobSpecError(status);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->field, "spec.tasks[0].resources.gpu");
  EXPECT_EQ(error->line, 7);
  EXPECT_EQ(error->column, 22);
  EXPECT_EQ(error->message, "must be >= 0");

  status = ParseJobDocument("", options).status();
  EXPECT_EQ(status.message(), "job.yaml: the document is empty");
  error = GetJobSpecError(status);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->field, "");
  EXPECT_EQ(error->line, 0);

  EXPECT_EQ(GetJobSpecError(absl::InvalidArgumentError("other")), std::nullopt);
}

// JSON and YAML spellings of the same job decode to the same job, whichever parser reads them.
TEST(ParseJobDocumentTest, JsonAndYamlAreEquivalent) {
  const JobDocument from_yaml = ParseOk(ClientExample(), DocumentFormat::kYaml);
  const std::string json = R"({
  "apiVersion": "tessera/v1", "kind": "Job",
  "metadata": {"name": "resnet-train", "labels": {"team": "vision"}, "requestId": "7f1c\u2026"},
  "spec": {
    "queue": "team-a", "priority": 100, "minAvailable": 2, "timeLimit": "2h",
    "preemptible": true, "minRuntime": "10m", "terminationGracePeriod": "30s",
    "restartPolicy": {"onFailure": "requeue", "maxRestarts": 3},
    "nodeSelector": {"rack": "r1"},
    "tolerations": [{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}],
    "clusterSelector": {"region": "east"},
    "clusterAffinity": [{"key": "region", "operator": "In", "values": ["east", "west"]}],
    "duration": "10m",
    "tasks": [{"name": "worker", "replicas": 2,
               "resources": {"cpu": "8", "memory": "64Gi", "gpu": 4, "gpuMemory": "40Gi",
                             "gpuModel": ["H100-80GB"]},
               "command": ["python", "train.py"], "args": ["--epochs", "10"],
               "env": {"NCCL_DEBUG": "INFO"}, "workingDir": "/work"}]
  }
})";
  for (DocumentFormat format :
       {DocumentFormat::kAuto, DocumentFormat::kJson, DocumentFormat::kYaml}) {
    SCOPED_TRACE(static_cast<int>(format));
    EXPECT_EQ(Canonical(ParseOk(json, format)), Canonical(from_yaml));
  }
}

// The same JSON text read by both parsers: same job, or the same error at the same place.
TEST(ParseJobDocumentTest, JsonParserAndYamlParserAgree) {
  const std::string texts[] = {
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"gpu":0.5,"cpu":1.25e1,"rdma/hca":2}}],"priority":-7,"preemptible":false,"timeLimit":3600}})",
      "{\n\t\"apiVersion\": \"tessera/v1\",\n\t\"kind\": \"Job\",\n\t\"metadata\": {\"labels\": "
      "{\"v\": 1.50, \"x\": \"a\\/b\\u00e9\"}},\n\t\"spec\": {\"tasks\": [{\"name\": \"w\"}]}\n}",
      "{\"apiVersion\": \"tessera/v1\", \"kind\": \"Job\",\n \"spec\": {\"tasks\": [{\"name\": "
      "\"w\", \"resources\": {\"gpuu\": 1}}]}}",
      "{\"apiVersion\": \"tessera/v1\", \"kind\": \"Job\",\n \"spec\": {\"tasks\": [{\"name\": "
      "\"w\", \"replicas\": 1.0}]}}",
      "{\"apiVersion\": \"tessera/v1\", \"kind\": \"Job\",\n \"spec\": {\"queue\": null, "
      "\"tasks\": [{\"name\": \"w\"}]}}",
      "{\"apiVersion\": \"tessera/v1\", \"kind\": \"Job\", \"status\": {}}",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    const absl::StatusOr<JobDocument> json =
        ParseJobDocument(text, {.format = DocumentFormat::kJson});
    const absl::StatusOr<JobDocument> yaml =
        ParseJobDocument(text, {.format = DocumentFormat::kYaml});
    ASSERT_EQ(json.ok(), yaml.ok()) << json.status() << " vs " << yaml.status();
    if (json.ok()) {
      EXPECT_EQ(Canonical(*json), Canonical(*yaml));
    } else {
      EXPECT_EQ(json.status().message(), yaml.status().message());
    }
  }
}

TEST(ParseJobDocumentTest, JsonSpecifics) {
  // Surrogate pairs (what most JSON encoders write for characters beyond U+FFFF).
  const JobDocument job = ParseOk(
      R"({"apiVersion":"tessera/v1","kind":"Job","metadata":{"labels":{"e":"\ud83d\ude80"}},)"
      R"("spec":{"tasks":[{"name":"w"}]}})",
      DocumentFormat::kJson);
  EXPECT_THAT(job.spec.labels, ElementsAre(Pair("e", "\xF0\x9F\x9A\x80")));
  // Strict JSON refuses YAML; automatic detection reads a YAML flow mapping as YAML.
  const std::string flow = "{apiVersion: tessera/v1, kind: Job, spec: {tasks: [{name: w}]}}";
  EXPECT_THAT(ParseError(flow, DocumentFormat::kJson), StartsWith("1:2: invalid JSON: "));
  EXPECT_EQ(ParseOk(flow).spec.tasks.size(), 1u);
  EXPECT_THAT(ParseError("{\"apiVersion\": \"tessera/v1\",}", DocumentFormat::kJson),
              StartsWith("1:29: invalid JSON: "));
}

TEST(ParseJobDocumentTest, HostileInput) {
  struct Case {
    std::string name;
    std::string text;
    std::string message;  // a part of the message
  };
  const std::string deep_flow = std::string(100000, '[') + std::string(100000, ']');
  std::string deep_block;
  for (int i = 0; i < 200; ++i) deep_block += std::string(i, ' ') + "a:\n";
  std::string deep_json;
  for (int i = 0; i < 100000; ++i) deep_json += "{\"a\":";
  deep_json += "1" + std::string(100000, '}');
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    laughs += fmt::format("{}: &{} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n",
                          c, c, fmt::arg("p", std::string(1, c - 1)));
  }
  const std::string huge = "apiVersion: tessera/v1\n# " + std::string(2 << 20, 'x') + "\n";
  const Case cases[] = {
      {"huge", huge,
       fmt::format("the document is {} bytes, more than the limit of 1048576", huge.size())},
      {"deep flow YAML", deep_flow, "1:33: nesting is deeper than the limit of 32"},
      {"deep block YAML", deep_block, "nesting is deeper than the limit of 32"},
      {"deep JSON", deep_json, "1:161: nesting is deeper than the limit of 32"},
      {"deep JSON array", "[" + deep_flow + "]", "nesting is deeper than the limit of 32"},
      {"billion laughs", laughs, "the document has more than 100000 nodes (aliases count in full)"},
      {"recursive alias", "a: &a [*a]\n",
       "1:8: an alias must not refer to a node that contains it"},
      {"binary",
       std::string("\x7f"
                   "ELF\x02\x01\x01\0\0",
                   9),
       "1:1: the document is not UTF-8 text (byte 0x7F at offset 0)"},
      {"invalid UTF-8", "apiVersion: tessera/v1\nkind: \xC3\x28\n",
       "2:7: the document is not UTF-8 text (byte 0xC3 at offset 29)"},
      {"NUL byte", std::string("kind: Job\0", 10), "the document is not UTF-8 text (byte 0x00"},
      {"escaped NUL in YAML", "kind: \"Jo\\0b\"\n", "1:7: NUL characters are not allowed"},
      {"escaped NUL in JSON", "{\"kind\": \"Jo\\u0000b\"}", "NUL characters are not allowed"},
      {"UTF-16",
       "\xFF\xFE"
       "a\0:\0",
       "the document is not UTF-8 text (byte 0xFF at offset 0)"},
      {"unknown alias", "a: *b\n", "invalid YAML"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(ParseError(c.text), HasSubstr(c.message));
  }
}

TEST(ParseJobDocumentTest, LimitsAreOptions) {
  ParseOptions options;
  options.max_bytes = 64;
  EXPECT_THAT(ParseJobDocument(ClientExample(), options).status().message(),
              HasSubstr("more than the limit of 64"));
  options = ParseOptions{};
  options.max_depth = 2;
  EXPECT_THAT(ParseJobDocument(ClientExample(), options).status().message(),
              HasSubstr("5:11: nesting is deeper than the limit of 2"));
  options = ParseOptions{};
  options.max_nodes = 10;
  EXPECT_THAT(ParseJobDocument(ClientExample(), options).status().message(),
              HasSubstr("the document has more than 10 nodes"));
}

TEST(ParseJobDocumentTest, AliasesAreExpanded) {
  const JobDocument job = ParseOk(Doc(R"(  tasks:
  - name: a
    resources: &r {cpu: 2, memory: 1Gi}
    env: &e {A: "1"}
  - name: b
    resources: *r
    env: *e
)"));
  ASSERT_EQ(job.spec.tasks.size(), 2u);
  EXPECT_EQ(job.spec.tasks[1].request.cpu, 2000);
  EXPECT_THAT(job.spec.tasks[1].env, ElementsAre(Pair("A", "1")));
}

JobDocument RichJob() {
  JobDocument job = ParseOk(ClientExample());
  TaskGroup share;
  share.name = "infer";
  share.replicas = 3;
  share.request.cpu = 500;
  share.request.memory = 1536 << 20;
  share.request.gpu_count = 1;
  share.request.gpu_milli = 250;
  share.request.gpu_memory = 10'000'000'000;
  share.request.extended = {{"rdma/hca", 1}, {"ephemeral-storage", int64_t{20} << 30}};
  share.request.tolerations = {
      Toleration{.key = "", .exists = true},
      Toleration{
          .key = "gpu", .value = "", .exists = false, .effect = TaintEffect::kPreferNoSchedule}};
  share.env = {{"MODE", "true"}, {"N", "007"}, {"MULTI", "a\nb: c # d"}, {"EMPTY", ""}};
  share.args = {"-x", "null", "~", "1e3", "#", "- a", "'q'", "\"dq\"", "2024-01-01"};
  job.spec.tasks.push_back(share);
  job.spec.min_available = std::nullopt;
  job.spec.time_limit = Duration(5400s + 250ms);
  job.spec.duration = Duration(42s);
  job.spec.restart_policy = RestartPolicy{RestartAction::kFail, 0};
  job.spec.priority = -2147483647 - 1;
  job.spec.labels["tessera.io/team"] = "no";
  return job;
}

// parse(render(x)) == x for the spec and metadata, in both syntaxes.
TEST(RenderTest, RoundTrips) {
  JobDocument cpu_only = ParseOk(Doc("  tasks: [{name: w}]\n"));
  JobDocument two_groups = ParseOk(Doc(R"(  nodeSelector: {rack: r1}
  tasks:
  - {name: a, nodeSelector: {zone: z}}
  - {name: b, resources: {gpu: 0.001, gpuMemory: 1}}
)"));
  for (const JobDocument& job : {ParseOk(ClientExample()), RichJob(), cpu_only, two_groups}) {
    ASSERT_TRUE(job.spec.Validate("spec").ok());
    const std::string yaml = RenderJobYaml(job);
    const std::string json = RenderJobJson(job);
    SCOPED_TRACE(yaml);
    EXPECT_EQ(Canonical(ParseOk(yaml, DocumentFormat::kYaml)), Canonical(job));
    EXPECT_EQ(Canonical(ParseOk(json, DocumentFormat::kJson)), Canonical(job));
    EXPECT_EQ(Canonical(ParseOk(RenderJobJson(job, -1))), Canonical(job));
    // Requests are equal field by field, not only as rendered.
    const JobDocument back = ParseOk(yaml);
    ASSERT_EQ(back.spec.tasks.size(), job.spec.tasks.size());
    for (size_t i = 0; i < job.spec.tasks.size(); ++i) {
      EXPECT_EQ(back.spec.tasks[i].request.EquivalenceKey(),
                job.spec.tasks[i].request.EquivalenceKey());
      EXPECT_EQ(back.spec.tasks[i].env, job.spec.tasks[i].env);
      EXPECT_EQ(back.spec.tasks[i].args, job.spec.tasks[i].args);
    }
    EXPECT_EQ(back.spec.time_limit, job.spec.time_limit);
    EXPECT_EQ(back.spec.duration, job.spec.duration);
    EXPECT_EQ(back.spec.priority, job.spec.priority);
    EXPECT_EQ(back.metadata.request_id, job.metadata.request_id);
  }
}

TEST(RenderTest, ControlCharactersInStringsRoundTripThroughYaml) {
  JobDocument job =
      ParseOk(Doc("  queue: \"team-\\r\"\n  tasks: [{name: w, env: {A: \"x\\ty\"}}]\n"));
  ASSERT_EQ(job.spec.queue, "team-\r");
  const JobDocument back = ParseOk(RenderJobYaml(job), DocumentFormat::kYaml);
  EXPECT_EQ(back.spec.queue, "team-\r");
  EXPECT_EQ(back.spec.tasks[0].env, job.spec.tasks[0].env);
}

TEST(RenderTest, DelInStringsRoundTripsThroughJsonAndYaml) {
  // A raw DEL is refused in a document, but an escaped one is a character like any other.
  EXPECT_THAT(ParseError(std::string("{\"spec\": {\"queue\": \"a\x7f\"}}")),
              HasSubstr("byte 0x7F"));
  JobDocument job = ParseOk(R"({"apiVersion": "tessera/v1", "kind": "Job",
    "metadata": {"name": "j"},
    "spec": {"tasks": [{"name": "w", "args": ["\u007f"], "env": {"A": "x\u007fy"}}]}})");
  ASSERT_EQ(job.spec.tasks[0].args, std::vector<std::string>{"\x7f"});
  const std::string json = RenderJobJson(job, -1);
  EXPECT_EQ(json.find('\x7f'), std::string::npos) << json;
  for (const std::string& text : {json, RenderJobYaml(job)}) {
    const JobDocument back = ParseOk(text);
    EXPECT_EQ(back.spec.tasks[0].args, job.spec.tasks[0].args);
    EXPECT_EQ(back.spec.tasks[0].env, job.spec.tasks[0].env);
  }
}

TEST(RenderTest, YamlShapeWithStatus) {
  JobDocument job = ParseOk(Doc(R"(  queue: team-a
  tasks:
  - name: worker
    replicas: 2
    resources: {cpu: 500m, memory: 64Gi, gpu: 0.5}
)"));
  job.metadata.id = "j-42";
  JobStatus status;
  status.phase = JobPhase::kRunning;
  status.cluster = "east";
  status.tasks.push_back(TaskStatus{"worker-0", "gpu-3", {0}, TaskPhase::kRunning, std::nullopt});
  status.tasks.push_back(TaskStatus{"worker-1", "gpu-4", {2}, TaskPhase::kFailed, 137});
  status.submit_time = TimePoint(Duration(1714564800000));  // 2024-05-01T12:00:00Z
  status.start_time = TimePoint(Duration(1714564800250));
  job.status = status;
  EXPECT_EQ(RenderJobYaml(job), R"(apiVersion: tessera/v1
kind: Job
metadata:
  id: j-42
  name: j
spec:
  queue: team-a
  priority: 0
  preemptible: true
  minRuntime: 0s
  terminationGracePeriod: 0s
  restartPolicy:
    onFailure: requeue
    maxRestarts: 3
  tasks:
    - name: worker
      replicas: 2
      resources:
        cpu: 500m
        memory: 64Gi
        gpu: 0.5
status:
  phase: Running
  reason: ""
  message: ""
  cluster: east
  tasks:
    - name: worker-0
      node: gpu-3
      devices: [0]
      phase: Running
      exitCode: null
    - name: worker-1
      node: gpu-4
      devices: [2]
      phase: Failed
      exitCode: 137
  submitTime: "2024-05-01T12:00:00Z"
  startTime: "2024-05-01T12:00:00.25Z"
)");
  const nlohmann::ordered_json json = JobDocumentToJson(job);
  EXPECT_EQ(json["status"]["tasks"][0]["exitCode"], nullptr);
  EXPECT_EQ(json["spec"]["tasks"][0]["resources"]["gpu"], 0.5);
  EXPECT_EQ(json["status"]["startTime"], "2024-05-01T12:00:00.25Z");
  // A rendered job with its status is a server document: a client may not send it back as is.
  EXPECT_THAT(ParseError(RenderJobYaml(job)), HasSubstr("metadata.id: set by the server"));
}

TEST(RenderTest, PhaseNames) {
  EXPECT_EQ(JobPhaseName(JobPhase::kPending), "Pending");
  EXPECT_EQ(JobPhaseName(JobPhase::kAdmitted), "Admitted");
  EXPECT_EQ(JobPhaseName(JobPhase::kRunning), "Running");
  EXPECT_EQ(JobPhaseName(JobPhase::kSucceeded), "Succeeded");
  EXPECT_EQ(JobPhaseName(JobPhase::kFailed), "Failed");
  EXPECT_EQ(JobPhaseName(JobPhase::kCancelled), "Cancelled");
  EXPECT_EQ(TaskPhaseName(TaskPhase::kCancelled), "Cancelled");
}

}  // namespace
}  // namespace tessera::spec

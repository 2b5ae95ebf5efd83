#include "sim/scenario/scenario_parser.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/testing/contract_text.h"

namespace tessera::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kGi = int64_t{1} << 30;

absl::StatusOr<Scenario> Parse(const std::string& text) {
  ParseOptions options;
  options.allow_files = false;
  return ParseScenario(text, "t.yaml", options);
}

// SCENARIOS.md's example, verbatim (src/sim/scenario/testdata).
std::string ReadExample() {
  const std::optional<std::string> example =
      tessera::testing::ReadSourceFile("src/sim/scenario/testdata/scenarios_example.yaml");
  EXPECT_TRUE(example.has_value()) << "cannot read the example";
  return example.value_or("");
}

TEST(ScenarioParserTest, ExampleIsTheContractsVerbatim) {
  const std::optional<std::string> contract = tessera::testing::ContractExample("SCENARIOS.md");
  if (!contract) GTEST_SKIP() << "no ../shared/SCENARIOS.md beside the source tree";
  EXPECT_EQ(ReadExample(), *contract) << "testdata/scenarios_example.yaml must be the fenced "
                                         "example of SCENARIOS.md, verbatim";
}

TEST(ScenarioParserTest, AcceptsTheContractsExampleAsWritten) {
  absl::StatusOr<Scenario> s = Parse(ReadExample());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "two-large-gangs-do-not-deadlock");
  EXPECT_EQ(s->clusters.size(), 1u);
  EXPECT_EQ(s->nodes.size(), 4u);
  EXPECT_EQ(s->queues.size(), 3u);  // org, team-a, team-b
  EXPECT_EQ(s->jobs.size(), 2u);
  EXPECT_EQ(s->events.size(), 4u);
  EXPECT_EQ(s->expectations.size(), 12u);
  EXPECT_EQ(s->until, Duration(600'000));
}

TEST(ScenarioParserTest, ParsesEveryPartWithDefaults) {
  absl::StatusOr<Scenario> s = Parse(R"(name: demo
config: {seed: 9, requeue_backoff: 5s, backfill: none, preemption: false, fair_share: none}
clusters:
  - name: east
    labels: {region: east}
nodes:
  - name: gpu-{0..3}
    cluster: east
    pool: a100
    cpu: 64
    memory: 512Gi
    gpus: {model: A100-80GB, count: 8, memory: 80Gi}
    labels: {rack: r1}
    taints: [{key: dedicated, value: infer, effect: NoSchedule}]
  - {name: cpu-0, cpu: "500m", state: cordoned}
queues:
  - name: org
    children: [{name: team-a, weight: 1, priority: 0, ordering: best_effort_fifo}]
jobs:
  - name: a
    queue: team-a
    at: 90
    priority: 5
    tasks:
      - {name: worker, replicas: 2, cpu: 8, memory: 64Gi, gpu: 0.5, gpu_memory: 10Gi,
         gpu_model: A100-80GB}
    duration: 1h30m
    time_limit: 2h
    restart_policy: {on_failure: fail, max_restarts: 0}
    tolerations: [{key: dedicated, operator: Exists}]
    cluster_selector: {region: east}
events:
  - {at: 10s, node: gpu-1, action: drain}
  - {at: 11s, node: gpu-2, gpu: 7, action: gpu_unhealthy}
  - {at: 12s, job: a, action: cancel}
  - {at: 13s, node: gpu-0, action: taint, taint: {key: k, effect: NoExecute}}
expect:
  - {at: 10s, job: a, phase: Running, reason: InsufficientResources}
  - {invariant: no_overcommit}
  - {always: true, queue: org, allocated: {max: {gpu: 24}}}
  - {end: true, job: a, nodes_in: ["gpu-{0..1}"], restarts: {max: 0}, start_time: {min: 90s}}
until: 1h
)");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "demo");
  EXPECT_EQ(s->config.seed, 9u);
  EXPECT_EQ(s->config.requeue_backoff, std::chrono::seconds(5));
  ASSERT_EQ(s->nodes.size(), 5u);
  EXPECT_EQ(s->nodes[3].node.name, "gpu-3");
  EXPECT_EQ(s->nodes[0].node.capacity.cpu, 64'000);
  EXPECT_EQ(s->nodes[0].node.capacity.gpu, 8'000);
  EXPECT_EQ(s->nodes[0].node.gpus.size(), 8u);
  EXPECT_EQ(s->nodes[0].node.gpus[0].memory, 80 * kGi);
  EXPECT_EQ(s->nodes[0].node.labels.at("region"), "east");  // the cluster's labels
  EXPECT_EQ(s->nodes[0].node.labels.at("tessera.io/cluster"), "east");
  EXPECT_EQ(s->nodes[4].node.capacity.cpu, 500);
  EXPECT_EQ(s->nodes[4].node.pool, "default");
  EXPECT_EQ(s->nodes[4].state, InitialNodeState::kCordoned);
  ASSERT_EQ(s->queues.size(), 2u);
  EXPECT_FALSE(s->queues[0].leaf);
  EXPECT_TRUE(s->queues[1].leaf);
  ASSERT_EQ(s->jobs.size(), 1u);
  const ScenarioJob& job = s->jobs[0];
  EXPECT_EQ(job.at, std::chrono::seconds(90));
  EXPECT_EQ(job.duration, std::chrono::minutes(90));
  const TaskRequest& req = job.spec.tasks[0].request;
  EXPECT_EQ(req.gpu_count, 1);
  EXPECT_EQ(req.gpu_milli, 500);
  EXPECT_EQ(req.gpu_memory, 10 * kGi);
  EXPECT_EQ(req.node_selector.at("region"), "east");
  EXPECT_EQ(job.spec.restart_policy.on_failure, RestartAction::kFail);
  ASSERT_EQ(s->events.size(), 4u);
  EXPECT_EQ(s->events[1].gpu, 7);
  EXPECT_EQ(s->events[3].taint.effect, TaintEffect::kNoExecute);
  ASSERT_EQ(s->expectations.size(), 4u);
  EXPECT_EQ(s->expectations[0].checks.size(), 2u);
  EXPECT_EQ(s->expectations[3].checks[0].names.size(), 2u);
  EXPECT_EQ(*s->expectations[3].checks[2].bounds.min, 90'000);
  EXPECT_EQ(s->expectations[0].line, 38);
  EXPECT_EQ(s->until, std::chrono::hours(1));
}

TEST(ScenarioParserTest, WholeGpusAndDefaults) {
  absl::StatusOr<Scenario> s = Parse(R"(
nodes: [{name: n, cpu: 8}]
jobs: [{name: a, tasks: [{name: w, gpu: 8}], duration: 10}]
)");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "t");
  EXPECT_EQ(s->clusters.size(), 1u);
  EXPECT_EQ(s->queues.size(), 1u);
  EXPECT_EQ(s->config.profile.name, "default");
  EXPECT_EQ(s->jobs[0].spec.queue, "default");
  EXPECT_EQ(s->jobs[0].spec.tasks[0].request.gpu_count, 8);
  EXPECT_EQ(s->jobs[0].spec.tasks[0].request.gpu_milli, 1000);
  EXPECT_EQ(s->jobs[0].spec.restart_policy.on_failure, RestartAction::kRequeue);
}

// Every reason code ../shared/SCENARIOS.md lists ("Pending reasons", then the reasons a job
// ends with) is accepted by `reason`.
TEST(ScenarioParserTest, AcceptsEveryReasonCodeOfTheContract) {
  for (const char* code :
       {"InsufficientResources", "GpuModelMismatch", "NodeSelectorMismatch", "Untolerated",
        "QuotaExceeded", "GangIncomplete", "Priority", "Reservation", "Backoff", "Refused", "NoFit",
        "TimeLimitExceeded", "StartFailed", "TaskLost", "Cancelled", "Error"}) {
    absl::StatusOr<Scenario> s =
        Parse(std::string("nodes: [{name: n}]\njobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                          "expect: [{end: true, job: a, reason: ") +
              code + "}]\n");
    ASSERT_TRUE(s.ok()) << code << ": " << s.status();
    EXPECT_EQ(s->expectations[0].checks[0].text, code);
  }
}

TEST(ScenarioParserTest, PolicyDefaultsAreTheServers) {
  absl::StatusOr<Scenario> s = Parse("nodes: [{name: n}]\n");
  ASSERT_TRUE(s.ok()) << s.status();
  const SchedulingPolicy defaults;
  const SchedulingPolicy& p = s->config.policy;
  EXPECT_EQ(p.backfill, defaults.backfill);
  EXPECT_EQ(p.backfill, BackfillMode::kEasy);
  EXPECT_EQ(p.backfill_depth, defaults.backfill_depth);
  EXPECT_EQ(p.fair_share, FairShareMode::kDrf);
  EXPECT_EQ(p.fair_share_half_life, defaults.fair_share_half_life);
  EXPECT_EQ(p.priority_aging, defaults.priority_aging);
  EXPECT_EQ(p.gang_timeout, defaults.gang_timeout);
  EXPECT_FALSE(p.preemption);
  EXPECT_EQ(p.preemption_rate_max, defaults.preemption_rate_max);
  EXPECT_EQ(p.preemption_rate_period, defaults.preemption_rate_period);
  EXPECT_EQ(p.on_preemption, PreemptedAction::kRequeue);
  EXPECT_EQ(s->config.requeue_backoff, Duration{0});  // the scenario default, not the server's
  ASSERT_EQ(s->queues.size(), 1u);
  EXPECT_EQ(s->queues[0].spec.name, "default");
}

TEST(ScenarioParserTest, PolicyKeys) {
  absl::StatusOr<Scenario> s = Parse(R"(nodes: [{name: n}]
config:
  backfill: conservative
  backfill_depth: 4
  preemption: true
  preemption_rate: {max: 3, per: 5m}
  on_preemption: cancel
  fair_share: none
  fair_share_half_life: 1h
  priority_aging: 0
  gang_timeout: 90s
jobs: [{name: a, tasks: [{name: w}], duration: 1, min_runtime: 30s}]
)");
  ASSERT_TRUE(s.ok()) << s.status();
  const SchedulingPolicy& p = s->config.policy;
  EXPECT_EQ(p.backfill, BackfillMode::kConservative);
  EXPECT_EQ(p.backfill_depth, 4);
  EXPECT_TRUE(p.preemption);
  EXPECT_EQ(p.preemption_rate_max, 3);
  EXPECT_EQ(p.preemption_rate_period, std::chrono::minutes(5));
  EXPECT_EQ(p.on_preemption, PreemptedAction::kCancel);
  EXPECT_EQ(p.fair_share, FairShareMode::kNone);
  EXPECT_EQ(p.fair_share_half_life, std::chrono::hours(1));
  EXPECT_EQ(p.priority_aging, Duration{0});
  EXPECT_EQ(p.gang_timeout, std::chrono::seconds(90));
  EXPECT_EQ(s->jobs[0].spec.min_runtime, std::chrono::seconds(30));

  struct ModeCase {
    std::string text;
    BackfillMode backfill;
    FairShareMode fair_share;
  };
  for (const ModeCase& c :
       {ModeCase{"{backfill: none}", BackfillMode::kNone, FairShareMode::kDrf},
        ModeCase{"{backfill: easy, fair_share: drf}", BackfillMode::kEasy, FairShareMode::kDrf}}) {
    absl::StatusOr<Scenario> m = Parse("nodes: [{name: n}]\nconfig: " + c.text + "\n");
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->config.policy.backfill, c.backfill) << c.text;
    EXPECT_EQ(m->config.policy.fair_share, c.fair_share) << c.text;
  }
}

TEST(ScenarioParserTest, QueueKeys) {
  absl::StatusOr<Scenario> s = Parse(R"(nodes: [{name: n}]
queues:
  - name: org
    guaranteed: {gpu: 32, cpu: 500m, memory: 1Ti}
    children:
      - name: team-a
        guaranteed: {gpu: 16, "gpu:A100-80GB": 8}
        borrowing_limit: {gpu: 8}
        lending_limit: {gpu: 0.5}
        weight: 3
        priority: -2
        ordering: strict_fifo
      - name: team-b
        guaranteed:
          gpu:H100: 4
  - name: solo
)");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->queues.size(), 4u);
  const QueueSpec& org = s->queues[0].spec;
  EXPECT_EQ(org.parent, "");
  EXPECT_EQ(org.guaranteed,
            (ResourceList{{"cpu", 500}, {"gpu", 32'000}, {"memory", int64_t{1} << 40}}));
  EXPECT_FALSE(s->queues[0].leaf);
  const QueueSpec& a = s->queues[1].spec;
  EXPECT_EQ(a.name, "team-a");
  EXPECT_EQ(a.parent, "org");
  EXPECT_EQ(a.guaranteed, (ResourceList{{"gpu", 16'000}, {"gpu:A100-80GB", 8'000}}));
  EXPECT_EQ(a.borrowing_limit, (ResourceList{{"gpu", 8'000}}));
  EXPECT_EQ(a.lending_limit, (ResourceList{{"gpu", 500}}));
  EXPECT_EQ(a.weight, 3);
  EXPECT_EQ(a.priority, -2);
  EXPECT_EQ(a.ordering, QueueOrdering::kStrictFifo);
  EXPECT_EQ(s->queues[1].line, 6);
  const QueueSpec& b = s->queues[2].spec;
  EXPECT_EQ(b.guaranteed, (ResourceList{{"gpu:H100", 4'000}}));
  EXPECT_EQ(b.weight, 1);
  EXPECT_EQ(b.priority, 0);
  EXPECT_EQ(b.ordering, QueueOrdering::kBestEffortFifo);
  EXPECT_TRUE(b.borrowing_limit.empty());
  // Children inherit nothing from their parent.
  EXPECT_TRUE(s->queues[3].spec.guaranteed.empty());
  EXPECT_EQ(s->queues[3].spec.parent, "");
  EXPECT_TRUE(s->queues[3].leaf);
}

struct ErrorCase {
  std::string text;
  std::string want;  // the start of the message: "t.yaml:LINE: FIELD: ..."
};

const char kNodes[] = "nodes: [{name: n, cpu: 8}]\n";

// Jobs are decoded by the job documents' decoder (spec/job_mapping.h) in its snake_case style:
// every key of the job spec is a scenario key, and errors name the scenario's path and line.
TEST(ScenarioParserTest, JobsTakeTheJobSpecsKeysInSnakeCase) {
  absl::StatusOr<Scenario> s = Parse(R"(nodes: [{name: n, cpu: 8}]
jobs:
  - name: a
    priority_class: high
    duration: 10s
    cluster_affinity: [{key: region, operator: In, values: [east]}]
    tasks:
      - name: w
        cpu: 1
        tolerations: [{key: k, operator: Exists}]
        node_selector: {disk: ssd}
)");
  ASSERT_TRUE(s.ok()) << s.status();
  const JobSpec& spec = s->jobs[0].spec;
  EXPECT_GT(spec.priority, 0);
  ASSERT_EQ(spec.cluster_affinity.required.size(), 1u);
  EXPECT_EQ(spec.cluster_affinity.required[0].values, std::vector<std::string>{"east"});
  EXPECT_EQ(spec.tasks[0].request.tolerations.size(), 1u);
  EXPECT_EQ(spec.tasks[0].request.node_selector.at("disk"), "ssd");
  EXPECT_EQ(spec.duration, std::chrono::seconds(10));
}

TEST(ScenarioParserTest, AJobErrorNamesTheScenariosPathAndLine) {
  const std::string jobs = R"(nodes: [{name: n, cpu: 8}]
jobs:
  - {name: a, duration: 1, tasks: [{name: w}]}
  - {name: b, duration: 1, tasks: [{name: w}]}
  - name: c
    duration: 1
    tasks:
      - {name: w}
      - name: x
)";
  const ErrorCase cases[] = {
      {jobs + "        gpu: -2\n", "t.yaml:10: jobs[2].tasks[1].gpu: must be >= 0"},
      {jobs + "        gpu_model: [\"\"]\n",
       "t.yaml:10: jobs[2].tasks[1].gpu_model[0]: must not be empty"},
      {jobs + "        replicas: 5000\n",
       "t.yaml:8: jobs[2].tasks: total replicas 5001 exceed the limit of 4096 tasks per job"},
      {jobs + "        name: w\n", "t.yaml:10: jobs[2].tasks[1].name: given twice"},
      {jobs + "      - {name: W}\n", "t.yaml:10: jobs[2].tasks[2].name: \"W\" is not a valid name"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<Scenario> s = Parse(c.text);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_THAT(std::string(s.status().message()), StartsWith(c.want)) << c.text;
  }
}

TEST(ScenarioParserTest, ErrorsNameFileLineAndField) {
  const std::string job = "jobs:\n  - name: a\n    duration: 10\n    tasks:\n";
  const ErrorCase cases[] = {
      {std::string(kNodes) + job + "      - {name: w, gpu: -1}\n",
       "t.yaml:6: jobs[0].tasks[0].gpu: must be >= 0"},
      {std::string(kNodes) + job + "      - {name: w, gpu: 1.5}\n",
       "t.yaml:6: jobs[0].tasks[0].gpu: must be a whole number"},
      {std::string(kNodes) + job + "      - {name: w, gpu_memory: 1Gi}\n",
       "t.yaml:6: jobs[0].tasks[0].gpu_memory: needs gpu > 0"},
      {std::string(kNodes) + job + "      - {name: w, cpu: lots}\n",
       "t.yaml:6: jobs[0].tasks[0].cpu:"},
      {std::string(kNodes) + job + "      - {name: w, gpus: 1}\n",
       "t.yaml:6: jobs[0].tasks[0].gpus: unknown key"},
      // Times and quantities are bounded, so that no sum in a run can overflow.
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 9223372036854775}]\n",
       "t.yaml:2: jobs[0].duration: must be at most 876000h (100 years)"},
      {std::string(kNodes) + job + "      - {name: w}\n    time_limit: 1000000h\n",
       "t.yaml:7: jobs[0].time_limit: must be at most 876000h"},
      {std::string(kNodes) + "config: {requeue_backoff: 876001h}\n",
       "t.yaml:2: config.requeue_backoff: must be at most"},
      {std::string(kNodes) + "until: 9999999999999\n", "t.yaml:2: until: must be at most"},
      {std::string(kNodes) + job + "      - {name: w, cpu: 5000000000000000000m}\n",
       "t.yaml:6: jobs[0].tasks[0].cpu: must be at most 1000000 cores"},
      {std::string(kNodes) + job + "      - {name: w, memory: 5Ti}\n",
       "t.yaml:6: jobs[0].tasks[0].memory: must be at most 4 TiB"},
      {"nodes: [{name: n0, gpus: {model: A100, count: 8, memory: \"9223372036854775807\"}}]\n",
       "t.yaml:1: nodes[0].gpus.memory: must be at most 4 TiB"},
      {"nodes: [{name: n0, gpus: {model: A100, count: 1024, memory: 1Ti}}]\n",
       "t.yaml:1: nodes[0].gpus.memory: count × memory must be at most 64 TiB"},
      // Node names are DNS-1123 subdomains.
      {"nodes: [{name: Node-A}]\n", "t.yaml:1: nodes[0].name: 'Node-A' is not a valid node name"},
      {"nodes: [{name: \"a b\"}]\n", "t.yaml:1: nodes[0].name: 'a b' is not a valid"},
      {"nodes: [{name: \"a,b\"}]\n", "t.yaml:1: nodes[0].name: 'a,b' is not a valid"},
      {"nodes: [{name: \"nœud\"}]\n", "t.yaml:1: nodes[0].name: 'nœud' is not a valid"},
      {"nodes: [{name: " + std::string(64, 'a') + "}]\n", "t.yaml:1: nodes[0].name: 'aaaa"},
      // The cluster label is the runner's, on nodes and on clusters alike.
      {"nodes: [{name: n0, labels: {tessera.io/cluster: x}}]\n",
       "t.yaml:1: nodes[0].labels.tessera.io/cluster: set by the runner"},
      {"clusters: [{name: c, labels: {tessera.io/cluster: x}}]\nnodes: [{name: n0}]\n",
       "t.yaml:1: clusters[0].labels.tessera.io/cluster: set by the runner"},
      // gpu_memory requests need the GPU memory of every node with GPUs.
      {"nodes: [{name: n0, gpus: {count: 1}}]\n" + job +
           "      - {name: w, gpu: 1, gpu_memory: 1Gi}\n",
       "t.yaml:1: nodes[0].gpus.memory: required on nodes with GPUs when a task sets gpu_memory "
       "(jobs[0].tasks[0].gpu_memory at line 6)"},
      // Expected reasons are the contract's codes.
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                             "expect: [{end: true, job: a, reason: NotAReason}]\n",
       "t.yaml:3: expect[0].reason: must be one of"},
      // Deep nesting is refused before the parser walks it.
      {std::string(kNodes) + "description: " + std::string(100, '[') + std::string(100, ']') + "\n",
       "t.yaml:2: nesting too deep (at most 64 levels)"},
      {std::string(kNodes) + "description: " + std::string(5000, '[') + std::string(5000, ']') +
           "\n",
       "t.yaml:2: nesting too deep (at most 64 levels)"},
      // Aliases do not multiply the walk beyond a bound.
      {std::string(kNodes) + "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                             "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, "
                             "*b, *b, *b, *b, *b, *b, *b]\n"
                             "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, "
                             "*d, *d, *d, *d, *d, *d, *d]\n"
                             "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, "
                             "*f, *f, *f, *f, *f, *f, *f]\n",
       "t.yaml:2: more than 4000000 values (counting each alias use)"},
      {std::string(kNodes) + "jobs:\n  - name: a\n    tasks: [{name: w}]\n",
       "t.yaml:3: jobs[0].duration: required"},
      {std::string(kNodes) + "jobs:\n  - {name: a, tasks: [{name: w}], duration: 0s}\n",
       "t.yaml:3: jobs[0].duration: must be > 0"},
      {std::string(kNodes) + "jobs:\n  - {name: a, tasks: [{name: w}], duration: 5x}\n",
       "t.yaml:3: jobs[0].duration:"},
      {std::string(kNodes) + "jobs:\n  - {name: a, queue: q, tasks: [{name: w}], duration: 1}\n",
       "t.yaml:3: jobs[0].queue: queue 'q' does not exist"},
      {std::string(kNodes) +
           "jobs:\n  - {name: a, min_available: 2, tasks: [{name: w}], duration: 1}\n",
       "t.yaml:3: jobs[0].min_available: must be in 1..1 (the job's task count), got 2"},
      {std::string(kNodes) +
           "jobs:\n  - {name: a, tasks: [{name: w}], duration: 1, outcome: maybe}\n",
       "t.yaml:3: jobs[0].outcome: must be one of succeed, fail"},
      {std::string(kNodes) + "jobs:\n  - {name: a, tasks: [{name: w}], duration: 1}\n"
                             "  - {name: a, tasks: [{name: w}], duration: 1}\n",
       "t.yaml:4: jobs[1].name: job 'a' given twice"},
      {"nodes: [{name: 'n-{3..1}'}]\n", "t.yaml:1: nodes[0].name: bad range"},
      {"nodes: [{name: n}, {name: n}]\n", "t.yaml:1: nodes[1].name: node 'n' given twice"},
      {"nodes:\n  - {name: n, cluster: west}\n",
       "t.yaml:2: nodes[0].cluster: cluster 'west' does not exist"},
      {"nodes:\n  - {name: n, gpus: {model: A}}\n", "t.yaml:2: nodes[0].gpus.count: required"},
      {"nodes:\n  - {name: n, state: broken}\n",
       "t.yaml:2: nodes[0].state: must be one of up, down, cordoned"},
      {"nodes:\n  - {name: n, taints: [{key: k}]}\n",
       "t.yaml:2: nodes[0].taints[0].effect: required"},
      {"nodes:\n  - {name: n, memory: -1Gi}\n", "t.yaml:2: nodes[0].memory: must be >= 0"},
      {"bogus: 1\nnodes: [{name: n}]\n", "t.yaml:1: bogus: unknown key"},
      {"jobs: []\n", "t.yaml:1: nodes: required"},
      {"nodes: [{name: n}]\nnodes: [{name: m}]\n", "t.yaml:2: nodes: given twice"},
      {"nodes: [{name: n}]\nconfig:\n  backfill: sometimes\n",
       "t.yaml:3: config.backfill: must be one of none, easy, conservative"},
      // Policy keys.
      {"nodes: [{name: n}]\nconfig:\n  preemption: maybe\n",
       "t.yaml:3: config.preemption: must be true or false"},
      {"nodes: [{name: n}]\nconfig:\n  fair_share: fifo\n",
       "t.yaml:3: config.fair_share: must be one of none, drf"},
      {"nodes: [{name: n}]\nconfig:\n  backfill_depth: 0\n",
       "t.yaml:3: config.backfill_depth: must be >= 1"},
      {"nodes: [{name: n}]\nconfig:\n  backfill_depth: 2000000\n",
       "t.yaml:3: config.backfill_depth: must be <= 1000000"},
      {"nodes: [{name: n}]\nconfig:\n  gang_timeout: -1s\n",
       "t.yaml:3: config.gang_timeout: must be >= 0"},
      {"nodes: [{name: n}]\nconfig:\n  priority_aging: soon\n", "t.yaml:3: config.priority_aging:"},
      {"nodes: [{name: n}]\nconfig:\n  fair_share_half_life: 876001h\n",
       "t.yaml:3: config.fair_share_half_life: must be at most 876000h"},
      {"nodes: [{name: n}]\nconfig:\n  on_preemption: kill\n",
       "t.yaml:3: config.on_preemption: must be one of requeue, cancel"},
      {"nodes: [{name: n}]\nconfig:\n  preemption_rate: 5\n",
       "t.yaml:3: config.preemption_rate: must be a mapping"},
      {"nodes: [{name: n}]\nconfig:\n  preemption_rate: {max: 0, per: 1m}\n",
       "t.yaml:3: config.preemption_rate.max: must be >= 1"},
      {"nodes: [{name: n}]\nconfig:\n  preemption_rate: {max: 3, per: 0s}\n",
       "t.yaml:3: config.preemption_rate.per: must be > 0"},
      {"nodes: [{name: n}]\nconfig:\n  preemption_rate: {max: 3}\n",
       "t.yaml:3: config.preemption_rate.per: required"},
      {"nodes: [{name: n}]\nconfig:\n  preemption_rate:\n    per: 1m\n",
       "t.yaml:4: config.preemption_rate.max: required"},
      {"nodes: [{name: n}]\nconfig:\n  preemption_rate: {max: 3, per: 1m, burst: 2}\n",
       "t.yaml:3: config.preemption_rate.burst: unknown key"},
      {"nodes: [{name: n}]\nconfig:\n  backfil: easy\n", "t.yaml:3: config.backfil: unknown key"},
      // Queue keys.
      {"nodes: [{name: n}]\nqueues: []\n", "t.yaml:2: queues: at least one queue is required"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    guaranteed: {gpuu: 16}\n",
       "t.yaml:4: queues[0].guaranteed.gpuu: unknown resource (cpu, memory, gpu or gpu:<MODEL>)"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    guaranteed: {gpu_memory: 16Gi}\n",
       "t.yaml:4: queues[0].guaranteed.gpu_memory: unknown resource"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    guaranteed: {\"gpu:\": 1}\n",
       "t.yaml:4: queues[0].guaranteed.gpu:: unknown resource"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    guaranteed: 16\n",
       "t.yaml:4: queues[0].guaranteed: must be a mapping of resource to quantity"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    lending_limit: {cpu: 1, cpu: 2}\n",
       "t.yaml:4: queues[0].lending_limit.cpu: given twice"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    children:\n      - name: r\n"
       "        borrowing_limit:\n          gpu: 100001Ki\n",
       "t.yaml:7: queues[0].children[0].borrowing_limit.gpu:"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    borrowing_limit: {memory: 500000Ti}\n",
       "t.yaml:4: queues[0].borrowing_limit.memory: must be at most 400000 TiB"},
      {"nodes: [{name: n}]\nqueues:\n  - {name: q, weight: 0}\n",
       "t.yaml:3: queues[0].weight: must be an integer >= 1, not \"0\""},
      // Queue errors name the queue's path and the line of the key.
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    children:\n      - name: r\n"
       "      - name: s\n\n        weight: -3\n",
       "t.yaml:8: queues[0].children[1].weight: must be an integer >= 1, not \"-3\""},
      {"nodes: [{name: n}]\nqueues:\n  - {name: q, priority: high}\n",
       "t.yaml:3: queues[0].priority: must be an integer"},
      {"nodes: [{name: n}]\nqueues:\n  - {name: q, ordering: lifo}\n",
       "t.yaml:3: queues[0].ordering: must be strict_fifo or best_effort_fifo"},
      {"nodes: [{name: n}]\nqueues:\n  - {name: q}\n  - {name: r, children: [{name: q}]}\n",
       "t.yaml:4: queues[1].children[0].name: queue \"q\" is given twice"},
      {std::string(kNodes) +
           "jobs:\n  - {name: a, tasks: [{name: w}], duration: 1, min_runtime: -30s}\n",
       "t.yaml:3: jobs[0].min_runtime: must be >= 0"},
      {"nodes: [{name: n}]\nconfig:\n  profile: nosuch\n",
       "t.yaml:3: config.profile: unknown profile 'nosuch'"},
      {"nodes: [{name: n}]\nconfig:\n  profile: {queueSort: PrioritySort, bogus: 1}\n",
       "t.yaml:3: config.profile:"},
      {"nodes: [{name: n}]\nqueues:\n  - name: q\n    guaranteed: {gpu: -1}\n",
       "t.yaml:4: queues[0].guaranteed.gpu: must be >= 0"},
      {"nodes: [{name: n}]\nqueues:\n  - {name: q, children: [{name: r}]}\n"
       "jobs: [{name: a, queue: q, tasks: [{name: w}], duration: 1}]\n",
       "t.yaml:4: jobs[0].queue: queue 'q' has children"},
      {std::string(kNodes) + "events:\n  - {at: 1s, node: m, action: down}\n",
       "t.yaml:3: events[0].node: node 'm' does not exist"},
      {std::string(kNodes) + "events:\n  - {at: 1s, node: n, action: explode}\n",
       "t.yaml:3: events[0].action: must be one of"},
      {std::string(kNodes) + "events:\n  - {at: 1s, node: n, action: gpu_unhealthy}\n",
       "t.yaml:3: events[0].gpu: required by gpu_unhealthy"},
      {std::string(kNodes) + "events:\n  - {at: 1s, node: n, gpu: 0, action: gpu_unhealthy}\n",
       "t.yaml:3: events[0].gpu: node 'n' has 0 GPUs"},
      {std::string(kNodes) + "events:\n  - {at: 1s, job: x, action: cancel}\n",
       "t.yaml:3: events[0].job: job 'x' does not exist"},
      {std::string(kNodes) + "events:\n  - {node: n, action: down}\n",
       "t.yaml:3: events[0].at: required"},
      {std::string(kNodes) + "expect:\n  - {at: 1s, job: x, phase: Running}\n",
       "t.yaml:3: expect[0].job: job 'x' does not exist"},
      {std::string(kNodes) + "expect:\n  - {at: 1s, queue: q, allocated: {max: {gpu: 1}}}\n",
       "t.yaml:3: expect[0].queue: queue 'q' does not exist"},
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                             "expect:\n  - {at: 1s, job: a, nodes_in: [m]}\n",
       "t.yaml:4: expect[0].nodes_in: node 'm' does not exist"},
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                             "expect:\n  - {job: a, phase: Running}\n",
       "t.yaml:4: expect[0]: needs exactly one of at, by, always, end"},
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                             "expect:\n  - {at: 1s, job: a, phase: Sleeping}\n",
       "t.yaml:4: expect[0].phase: must be one of"},
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                             "expect:\n  - {at: 1s, job: a}\n",
       "t.yaml:4: expect[0]: names no check"},
      {std::string(kNodes) + "jobs: [{name: a, tasks: [{name: w}], duration: 1}]\n"
                             "expect:\n  - {at: 1s, job: a, restarts: {min: 3, max: 1}}\n",
       "t.yaml:4: expect[0].restarts: min is above max"},
      {std::string(kNodes) + "expect:\n  - {at: 1s, invariant: no_overcommit}\n",
       "t.yaml:3: expect[0]: an invariant holds always"},
      {std::string(kNodes) + "expect:\n  - {invariant: no_deadlock}\n",
       "t.yaml:3: expect[0].invariant: must be one of"},
      {std::string(kNodes) + "until: -5s\n", "t.yaml:2: until: must be >= 0"},
      {"nodes: [{name: n}\n", "t.yaml:2: "},
      {"", "t.yaml:1: scenario: the file is empty"},
      {"- a\n- b\n", "t.yaml:1: scenario: must be a mapping of sections"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<Scenario> s = Parse(c.text);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.status().message()), StartsWith(c.want)) << c.text;
  }
}

TEST(ScenarioParserTest, ProfileFilesResolveAgainstTheScenario) {
  ParseOptions options;
  options.base_dir = "/nonexistent-dir";
  absl::StatusOr<Scenario> s = ParseScenario(
      "nodes: [{name: n}]\nconfig:\n  profile: profiles/mine.yaml\n", "t.yaml", options);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              StartsWith("t.yaml:3: config.profile: /nonexistent-dir/profiles/mine.yaml"));
}

TEST(ScenarioParserTest, MissingFileIsAnError) {
  absl::StatusOr<Scenario> s = ParseScenarioFile("/nonexistent/scenario.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.status().message()),
            "/nonexistent/scenario.yaml: cannot open: No such file or directory");
}

TEST(ScenarioParserTest, DirectoriesAndSpecialFilesAreRefused) {
  absl::StatusOr<Scenario> dir = ParseScenarioFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(std::string(dir.status().message()), "/tmp: is a directory");
  absl::StatusOr<Scenario> zero = ParseScenarioFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(std::string(zero.status().message()), "/dev/zero: not a regular file");
}

TEST(ScenarioParserTest, ProfilePathsAreNormalised) {
  ParseOptions options;
  options.base_dir = ".";
  absl::StatusOr<Scenario> s =
      ParseScenario("nodes: [{name: n}]\nconfig:\n  profile: ./nothere.yaml\n", "t.yaml", options);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              StartsWith("t.yaml:3: config.profile: nothere.yaml: cannot open: No such file"));
}

}  // namespace
}  // namespace tessera::sim

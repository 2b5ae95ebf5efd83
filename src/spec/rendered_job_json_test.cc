#include "spec/rendered_job_json.h"

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/jobspec.h"

namespace tessera::spec {
namespace {

// Documents that between them set every field of the JOBSPEC shape, each optional one both ways.
constexpr std::string_view kDocuments[] = {
    R"(
apiVersion: tessera/v1
kind: Job
spec:
  tasks: [{name: w, resources: {cpu: 100m}}]
)",
    R"(
apiVersion: tessera/v1
kind: Job
metadata:
  name: resnet-train
  labels: {team: vision, "tessera.io/owner": "ana \"the\" ops\\dev"}
  requestId: 7f1c-ü-😀
spec:
  queue: team-a
  priority: -20
  minAvailable: 2
  timeLimit: 2h30m
  duration: 10m
  preemptible: false
  minRuntime: 10m
  terminationGracePeriod: 30s
  restartPolicy: {onFailure: fail, maxRestarts: 0}
  nodeSelector: {rack: r1, zone: "z\n1"}
  tolerations:
  - {key: dedicated, value: infer, effect: NoSchedule}
  - {key: spot, operator: Exists, effect: PreferNoSchedule}
  - {key: maint, operator: Equal, value: "", effect: NoExecute}
  - {operator: Exists}
  clusterSelector: {region: east}
  clusterAffinity:
    required: [{key: region, operator: In, values: [east, west]}]
    preferred:
    - {weight: 100, match: [{key: tier, operator: NotIn, values: [spot]}]}
    - {weight: 1, match: [{key: gpu, operator: Exists}, {key: old, operator: DoesNotExist}]}
  clusterAntiAffinity: [{key: "tessera.io/cluster", operator: In, values: [west-2]}]
  tasks:
  - name: worker
    replicas: 3
    resources:
      cpu: "8"
      memory: 64Gi
      gpu: 4
      gpuMemory: 40Gi
      gpuModel: [H100-80GB, A100-80GB]
      rdma/hca: 2
      ephemeral-storage: 100Gi
      hugepages-2Mi: 1Gi
    command: ["python", "train.py", "tab\there", "\u00e9\u4e2d\U0001F680", "ctl\u0001x"]
    args: ["--epochs", "10", ""]
    env: {NCCL_DEBUG: INFO, EMPTY: "", "QUOTE": "a\"b"}
    workingDir: /work
  - name: ps
    resources: {cpu: 500m, gpu: 0.25, gpuModel: L4}
)",
    R"(
apiVersion: tessera/v1
kind: Job
metadata: {name: split}
spec:
  priority: 2147483647
  restartPolicy: {onFailure: requeue, maxRestarts: 2147483647}
  clusterAntiAffinity:
    preferred: [{weight: 50, match: [{key: region, operator: In, values: [west]}]}]
  tasks:
  - name: a
    replicas: 2
    nodeSelector: {pool: a}
    tolerations: [{key: a, value: "1"}]
    resources: {memory: 1Ki, nvidia.com/mig-1g.10gb: 1}
  - name: b
    nodeSelector: {pool: b}
    resources: {gpu: 0.5, gpuMemory: 10Gi}
    command: []
)",
};

// The full decoder's reading of `text`, and the quick one's, are the same: the same spec and
// metadata (rendered: every field is), or the same error.
void ExpectSameAsFullDecoder(std::string_view text) {
  const absl::StatusOr<JobDocument> full =
      ParseJobDocument(text, {.format = DocumentFormat::kJson});
  const absl::StatusOr<JobDocument> quick = ParseRenderedJobJson(text);
  ASSERT_EQ(quick.ok(), full.ok())
      << text << "\nquick: " << quick.status() << "\nfull: " << full.status();
  if (!full.ok()) {
    EXPECT_EQ(quick.status(), full.status()) << text;
    return;
  }
  EXPECT_EQ(RenderJobJson(*quick), RenderJobJson(*full)) << text;
  EXPECT_EQ(quick->metadata.request_id, full->metadata.request_id);
  EXPECT_FALSE(quick->status.has_value());
  EXPECT_TRUE(quick->metadata.id.empty());
}

JobDocument Parse(std::string_view yaml) {
  absl::StatusOr<JobDocument> doc = ParseJobDocument(yaml);
  EXPECT_TRUE(doc.ok()) << doc.status() << "\n" << yaml;
  return doc.ok() ? *std::move(doc) : JobDocument{};
}

TEST(RenderedJobJsonTest, RenderedDocumentsReadBackAsTheFullDecoderReadsThem) {
  for (std::string_view yaml : kDocuments) {
    const JobDocument doc = Parse(yaml);
    const std::string compact = RenderJobJson(doc, -1);  // as the store keeps it
    ExpectSameAsFullDecoder(compact);
    ExpectSameAsFullDecoder(RenderJobJson(doc, 2));
    const absl::StatusOr<JobDocument> quick = ParseRenderedJobJson(compact);
    ASSERT_TRUE(quick.ok()) << quick.status();
    EXPECT_EQ(RenderJobJson(*quick), RenderJobJson(doc));  // and the round trip holds
  }
}

TEST(RenderedJobJsonTest, TheJobDecodedIsTheOneRendered) {
  const JobDocument doc = Parse(kDocuments[1]);
  const absl::StatusOr<JobDocument> quick = ParseRenderedJobJson(RenderJobJson(doc, -1));
  ASSERT_TRUE(quick.ok()) << quick.status();
  const JobSpec& spec = quick->spec;
  EXPECT_EQ(spec.name, "resnet-train");
  EXPECT_EQ(spec.labels.at("tessera.io/owner"), "ana \"the\" ops\\dev");
  EXPECT_EQ(quick->metadata.request_id, "7f1c-ü-😀");
  EXPECT_EQ(spec.priority, -20);
  EXPECT_EQ(spec.min_available, 2);
  EXPECT_EQ(spec.time_limit, Duration(9'000'000));
  EXPECT_FALSE(spec.preemptible);
  EXPECT_EQ(spec.restart_policy.on_failure, RestartAction::kFail);
  ASSERT_EQ(spec.tasks.size(), 2u);
  const TaskRequest& worker = spec.tasks[0].request;
  EXPECT_EQ(worker.gpu_count, 4);
  EXPECT_EQ(worker.gpu_milli, 1000);
  EXPECT_EQ(worker.extended.at("rdma/hca"), 2);
  EXPECT_EQ(worker.extended.at("ephemeral-storage"), int64_t{100} << 30);
  EXPECT_EQ(worker.node_selector.at("zone"), "z\n1");
  ASSERT_EQ(worker.tolerations.size(), 4u);
  EXPECT_EQ(worker.tolerations[2].effect, TaintEffect::kNoExecute);
  EXPECT_EQ(spec.tasks[0].command[3], "\u00e9\u4e2d\U0001F680");
  EXPECT_EQ(spec.tasks[0].command[4], "ctl\x01x");
  EXPECT_EQ(spec.tasks[1].request.gpu_milli, 250);
  EXPECT_EQ(spec.tasks[1].request.node_selector, worker.node_selector);  // merged into each
  ASSERT_EQ(spec.cluster_affinity.preferred.size(), 2u);
  EXPECT_EQ(spec.cluster_affinity.preferred[1].match[1].op, LabelOperator::kDoesNotExist);
}

// Texts RenderJobJson does not write, valid or not: the result is still the full decoder's.
TEST(RenderedJobJsonTest, OtherTextsGiveWhatTheFullDecoderGives) {
  constexpr std::string_view kTexts[] = {
      "",
      "null",
      "[]",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w"}]}} x)",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w",}]}})",
      R"({"apiVersion":"tessera/v2","kind":"Job","spec":{"tasks":[{"name":"w"}]}})",
      R"({"kind":"Job","spec":{"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":null}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","status":{},"spec":{"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","metadata":{"id":"1"},"spec":{"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","metadata":{"requestId":""},"spec":{"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"priorityClass":"high","tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"priority":"7","tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"priority":1.0,"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"priority":2147483648,"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"queue":7,"preemptible":"True","tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"queue":"a","queue":"b","tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"timeLimit":"0s","tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"minRuntime":"-1s","tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","replicas":0}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","replicas":5000}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"gpu":1.5}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"gpu":"2"}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"gpuMemory":"1Gi"}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"nvidia.com/gpu":1}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"gpuu":1}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"cpu":"lots"}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","resources":{"a/b":1,"a/b":2}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","env":{"A=B":"1"}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","command":"python"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w","command":null,"args":[1,true]}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w\u0000"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w\ud800"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tasks":[{"name":"w\x7f"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"nodeSelector":{"a":"1"},"tasks":[{"name":"w","nodeSelector":{"a":"2"}}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tolerations":[{"value":"x"}],"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"tolerations":[{"operator":"Exists","value":"x"}],"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"clusterAffinity":[{"key":"a","operator":"In"}],"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"clusterAffinity":{"preferred":[{"weight":101,"match":[{"key":"a","operator":"Exists"}]}]},"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"clusterAffinity":{"preferred":[{"weight":1,"match":[]}]},"tasks":[{"name":"w"}]}})",
      R"({"apiVersion":"tessera/v1","kind":"Job","spec":{"clusterAffinity":null,"restartPolicy":null,"tasks":[{"name":"w","resources":null,"tolerations":null}]}})",
      "\xEF\xBB\xBF{\"apiVersion\":\"tessera/"
      "v1\",\"kind\":\"Job\",\"spec\":{\"tasks\":[{\"name\":\"w\"}]}}",
      "{\"apiVersion\":\"tessera/v1\",\"kind\":\"Job\",\"spec\":{\"tasks\":[{\"name\":\"\xC3\"}]}}",
  };
  for (std::string_view text : kTexts) ExpectSameAsFullDecoder(text);
}

}  // namespace
}  // namespace tessera::spec

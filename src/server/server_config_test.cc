#include "server/server_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;

TEST(ServerConfigTest, ParsesEveryKey) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig(R"(
dataDir: /tmp/t
httpAddr: 0.0.0.0:8081
grpcAddr: 127.0.0.1:0
profile: fgd
seed: 7
cycleInterval: 250ms
requeueBackoff: 1m
rateLimit: {ratePerSecond: 5, burst: 10}
clusters:
  - {name: here, backend: local, gpus: {model: T4, memory: 16Gi, count: 2}}
  - {name: sim, backend: sim, nodeList: nodes.csv}
)",
                                                          "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->profile, "fgd");
  EXPECT_EQ(config->seed, 7u);
  EXPECT_EQ(config->cycle_interval, Duration(250));
  EXPECT_EQ(config->requeue_backoff, Duration(60'000));
  EXPECT_EQ(config->rate_limit.burst, 10);
  ASSERT_EQ(config->clusters.size(), 2u);
  EXPECT_EQ(config->clusters[0].gpus->count, 2);
  EXPECT_EQ(config->clusters[0].gpus->memory, int64_t{16} << 30);
  EXPECT_EQ(config->clusters[1].node_list, "nodes.csv");
  EXPECT_TRUE(ValidateServerConfig(*config).ok());
}

TEST(ServerConfigTest, BadInputNamesTheField) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"dataDirr: x", "c.yaml: dataDirr: unknown key"},
           {"clusters: {a: 1}", "clusters: must be a list"},
           {"clusters: [{name: a, backend: local, gpus: {model: T4, memory: 1Gi, count: -1}}]",
            "clusters[0].gpus.count"},
           {"clusters: [{name: a, backend: local, extra: 1}]", "clusters[0].extra: unknown key"},
           {"clusters: [{name: a, backend: slurm}]",
            "c.yaml: clusters[0].backend: must be local or sim"},
           {"clusters: [{backend: local}]", "c.yaml: clusters[0].name: required"},
           {"clusters: [{name: \"Bad Name/../x\", backend: local}]",
            "c.yaml: clusters[0].name: \"Bad Name/../x\" is not a cluster name"},
           {"clusters: [{name: s, backend: sim}]", "c.yaml: clusters[0].nodeList: required"},
           {"rateLimit: {burst: lots}", "rateLimit.burst: must be a number"},
           {"cycleInterval: soon", "c.yaml: cycleInterval"},
           {"clusters: [{name: a, backend: local, gpus: {model: T4, memory: \"\", count: 1}}]",
            "c.yaml: clusters[0].gpus.memory"},
           {"clusters: [{name: a, backend: local, gpus: {model: T4, memory: !16Gi, count: 1}}]",
            "c.yaml: clusters[0].gpus.memory: YAML tags are not allowed"},
           {"a: [", "c.yaml:1:"},
           {"a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            "nest deeper"},
           {"- 1", "config: must be a mapping"},
       }) {
    absl::StatusOr<ServerConfig> config = ParseServerConfig(c.yaml, "c.yaml");
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_THAT(config.status().message(), HasSubstr(c.error)) << c.yaml;
  }
}

TEST(ServerConfigTest, ParsesSchedulingAndQueues) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig(R"(
scheduling:
  backfill: conservative
  backfillDepth: 4
  fairShare: none
  fairShareHalfLife: 1h
  priorityAging: 30s
  gangTimeout: 5m
  preemption: true
  preemptionRate: {max: 3, per: 10m}
  onPreemption: cancel
queues:
  - name: org
    children:
      - {name: team-a, guaranteed: {gpu: 1.5}, borrowingLimit: {gpu: 0}}
      - {name: team-b, guaranteed: {gpu: 2}, ordering: strictFifo}
)",
                                                          "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  const SchedulingPolicy& policy = config->scheduling;
  EXPECT_EQ(policy.backfill, BackfillMode::kConservative);
  EXPECT_EQ(policy.backfill_depth, 4);
  EXPECT_EQ(policy.fair_share, FairShareMode::kNone);
  EXPECT_EQ(policy.fair_share_half_life, std::chrono::hours(1));
  EXPECT_EQ(policy.priority_aging, std::chrono::seconds(30));
  EXPECT_EQ(policy.gang_timeout, std::chrono::minutes(5));
  EXPECT_TRUE(policy.preemption);
  EXPECT_EQ(policy.preemption_rate_max, 3);
  EXPECT_EQ(policy.preemption_rate_period, std::chrono::minutes(10));
  EXPECT_EQ(policy.on_preemption, PreemptedAction::kCancel);
  ASSERT_TRUE(config->queues.has_value());
  ASSERT_EQ(config->queues->size(), 3u);
  EXPECT_EQ((*config->queues)[1].name, "team-a");
  EXPECT_EQ((*config->queues)[1].parent, "org");
  EXPECT_EQ((*config->queues)[1].guaranteed.at("gpu"), 1500);
  EXPECT_EQ((*config->queues)[1].borrowing_limit.at("gpu"), 0);
  EXPECT_EQ((*config->queues)[2].ordering, QueueOrdering::kStrictFifo);
}

TEST(ServerConfigTest, SchedulingDefaultsAndNoQueues) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig("scheduling: {}", "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scheduling.backfill, BackfillMode::kEasy);
  EXPECT_FALSE(config->scheduling.preemption);
  EXPECT_FALSE(config->queues.has_value());
}

TEST(ServerConfigTest, TargetWorkloadIsAWindowUnlessAPodListIsGiven) {
  absl::StatusOr<ServerConfig> defaults = ParseServerConfig("profile: fgd", "c.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->target_workload.pod_list, "");
  EXPECT_EQ(defaults->target_workload.window, 1000);
  EXPECT_EQ(defaults->target_workload.popularity_threshold_pct, 95);

  absl::StatusOr<ServerConfig> window =
      ParseServerConfig("targetWorkload: {window: 50, popularityThreshold: 100}", "c.yaml");
  ASSERT_TRUE(window.ok()) << window.status();
  EXPECT_EQ(window->target_workload.window, 50);
  EXPECT_EQ(window->target_workload.popularity_threshold_pct, 100);

  absl::StatusOr<ServerConfig> pods = ParseServerConfig(
      "targetWorkload: {podList: /data/openb_pod_list_default.csv, popularityThreshold: 90.5}",
      "c.yaml");
  ASSERT_TRUE(pods.ok()) << pods.status();
  EXPECT_EQ(pods->target_workload.pod_list, "/data/openb_pod_list_default.csv");
  EXPECT_EQ(pods->target_workload.popularity_threshold_pct, 90.5);
}

TEST(ServerConfigTest, BadTargetWorkloadNamesTheField) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"targetWorkload: pods.csv", "c.yaml: targetWorkload: must be a mapping"},
           {"targetWorkload: {pods: a.csv}", "c.yaml: targetWorkload.pods: unknown key"},
           {"targetWorkload: {podList: \"\"}", "c.yaml: targetWorkload.podList: must not be empty"},
           {"targetWorkload: {podList: [a.csv]}",
            "c.yaml: targetWorkload.podList: must be a string"},
           {"targetWorkload: {window: 10, podList: a.csv}",
            "c.yaml: targetWorkload.window: only without podList"},
           {"targetWorkload: {window: 0}", "c.yaml: targetWorkload.window: must be a whole number"},
           {"targetWorkload: {window: 2.5}",
            "c.yaml: targetWorkload.window: must be a whole number"},
           {"targetWorkload: {popularityThreshold: 0}",
            "c.yaml: targetWorkload.popularityThreshold: must be a percentage in (0, 100]"},
           {"targetWorkload: {popularityThreshold: 101}",
            "c.yaml: targetWorkload.popularityThreshold: must be a percentage in (0, 100]"},
           {"targetWorkload: {popularityThreshold: most}",
            "c.yaml: targetWorkload.popularityThreshold: must be a percentage in (0, 100]"},
       }) {
    absl::StatusOr<ServerConfig> config = ParseServerConfig(c.yaml, "c.yaml");
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_THAT(config.status().message(), HasSubstr(c.error)) << c.yaml;
  }
}

TEST(ServerConfigTest, BadSchedulingAndQueuesNameTheField) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"scheduling: {backfill: fcfs}",
            "c.yaml: scheduling.backfill: must be none or easy or conservative, not \"fcfs\""},
           {"scheduling: {backfillDepth: 0}", "c.yaml: scheduling.backfillDepth: must be a whole"},
           {"scheduling: {backfillDepth: 2.5}", "scheduling.backfillDepth: must be a whole"},
           {"scheduling: {fairShare: fifo}", "c.yaml: scheduling.fairShare: must be none or drf"},
           {"scheduling: {fairShareHalfLife: long}", "c.yaml: scheduling.fairShareHalfLife"},
           {"scheduling: {priorityAging: [1]}",
            "c.yaml: scheduling.priorityAging: must be a string"},
           {"scheduling: {gangTimeout: -1s}", "c.yaml: scheduling.gangTimeout"},
           {"scheduling: {preemption: yes}",
            "c.yaml: scheduling.preemption: must be false or true"},
           {"scheduling: {preemptionRate: {max: -1}}", "c.yaml: scheduling.preemptionRate.max"},
           {"scheduling: {preemptionRate: {per: 0s}}",
            "c.yaml: scheduling.preemptionRate.per: must be > 0"},
           {"scheduling: {preemptionRate: {every: 1m}}",
            "c.yaml: scheduling.preemptionRate.every: unknown key"},
           {"scheduling: {onPreemption: kill}",
            "c.yaml: scheduling.onPreemption: must be requeue or cancel"},
           {"scheduling: {backfil: easy}", "c.yaml: scheduling.backfil: unknown key"},
           {"scheduling: easy", "c.yaml: scheduling: must be a mapping"},
           {"queues: {a: 1}", "c.yaml: queues: must be a list of queues"},
           {"queues: [{name: a, weight: 0}]", "c.yaml: queues[0].weight: must be an integer >= 1"},
           {"queues: [{name: a, children: [{name: b, guaranteed: {gpu: lots}}]}]",
            "c.yaml: queues[0].children[0].guaranteed.gpu"},
       }) {
    absl::StatusOr<ServerConfig> config = ParseServerConfig(c.yaml, "c.yaml");
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_THAT(config.status().message(), HasSubstr(c.error)) << c.yaml;
  }
}

TEST(ServerConfigTest, ValidationChecksTheWhole) {
  ServerConfig config = DevConfig("/tmp/d", "nodes.csv");
  ASSERT_TRUE(ValidateServerConfig(config).ok());
  ASSERT_EQ(config.clusters.size(), 2u);
  ServerConfig no_dir = config;
  no_dir.data_dir.clear();
  EXPECT_THAT(ValidateServerConfig(no_dir).message(), HasSubstr("dataDir: required"));
  ServerConfig twice = config;
  twice.clusters[1].name = "local";
  EXPECT_THAT(ValidateServerConfig(twice).message(), HasSubstr("clusters[1].name"));
  ServerConfig k8s = config;
  k8s.clusters[1].backend = "k8s";
  EXPECT_THAT(ValidateServerConfig(k8s).message(), HasSubstr("must be local or sim"));
  ServerConfig bad_addr = config;
  bad_addr.http_addr = "localhost";
  EXPECT_THAT(ValidateServerConfig(bad_addr).message(), HasSubstr("httpAddr"));
}

TEST(ServerConfigTest, ParsesAgentsAndTls) {
  absl::StatusOr<ServerConfig> config = ParseServerConfig(R"(
dataDir: /d
clusters: []
agents: {heartbeatInterval: 200ms, unreachableTimeout: 1s, lostGrace: 30s, logTimeout: 2s,
         gpuModels: [H100, A100-80GB]}
grpcTls: {certFile: s.crt, keyFile: s.key}
)",
                                                          "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agents.heartbeat_interval, Duration(200));
  EXPECT_EQ(config->agents.unreachable_timeout, Duration(1000));
  EXPECT_EQ(config->agents.lost_grace, Duration(30'000));
  EXPECT_EQ(config->agents.log_timeout, Duration(2'000));
  EXPECT_THAT(config->agents.gpu_models, ::testing::ElementsAre("H100", "A100-80GB"));
  EXPECT_EQ(config->grpc_tls.cert_file, "s.crt");
  EXPECT_EQ(config->grpc_tls.key_file, "s.key");
  // A control plane of agents only lists no in-process cluster.
  EXPECT_TRUE(config->clusters.empty());
  EXPECT_TRUE(ValidateServerConfig(*config).ok());

  absl::StatusOr<ServerConfig> defaults = ParseServerConfig("dataDir: /d", "c.yaml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->agents.heartbeat_interval, Duration(1000));
  EXPECT_FALSE(defaults->agents.unreachable_timeout.has_value());  // 3 intervals
  EXPECT_EQ(defaults->agents.log_timeout, Duration(10'000));
  EXPECT_TRUE(defaults->grpc_tls.cert_file.empty());

  for (const auto& [yaml, error] : std::vector<std::pair<const char*, const char*>>{
           {"agents: {heartbeatInterval: 0s}", "agents.heartbeatInterval: must be > 0"},
           {"agents: {heartbeatInterval: 1s, unreachableTimeout: 100ms}",
            "agents.unreachableTimeout: must be at least one heartbeat interval"},
           {"agents: {lostGrace: soon}", "agents.lostGrace"},
           {"agents: {logTimeout: 0s}", "agents.logTimeout: must be > 0"},
           {"agents: {gpuModels: H100}", "agents.gpuModels: must be a list"},
           {"agents: {beat: 1s}", "agents.beat: unknown key"},
           {"grpcTls: {certFile: a}", "grpcTls.keyFile: required"},
       }) {
    absl::StatusOr<ServerConfig> bad = ParseServerConfig(yaml, "c.yaml");
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_THAT(bad.status().message(), HasSubstr(error)) << yaml;
  }
}

TEST(ServerConfigTest, StoreIsSqliteUnlessEtcdIsNamed) {
  absl::StatusOr<ServerConfig> plain = ParseServerConfig("dataDir: /d\n", "c.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->store.backend, "sqlite");
  absl::StatusOr<ServerConfig> etcd = ParseServerConfig(R"(
dataDir: /d
store:
  backend: etcd
  etcd: {endpoints: [10.0.0.1:2379, 10.0.0.2:2379], caFile: ca.crt, certFile: c.crt,
         keyFile: c.key}
)",
                                                        "c.yaml");
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  EXPECT_EQ(etcd->store.backend, "etcd");
  EXPECT_THAT(etcd->store.etcd_endpoints, ::testing::ElementsAre("10.0.0.1:2379", "10.0.0.2:2379"));
  EXPECT_EQ(etcd->store.etcd_ca_file, "ca.crt");
  EXPECT_EQ(etcd->store.etcd_cert_file, "c.crt");
  EXPECT_EQ(etcd->store.etcd_key_file, "c.key");
  EXPECT_TRUE(ValidateServerConfig(*etcd).ok());
}

TEST(ServerConfigTest, BadStoreNamesTheField) {
  for (const auto& [yaml, error] : std::initializer_list<std::pair<const char*, const char*>>{
           {"store: {backend: mysql}", "store.backend: must be sqlite or etcd"},
           {"store: {backend: etcd}", "store.etcd.endpoints: required"},
           {"store: {backend: etcd, etcd: {endpoints: [nohost]}}", "store.etcd.endpoints[0]"},
           {"store: {backend: etcd, etcd: {endpoints: a:1}}",
            "store.etcd.endpoints: must be a list"},
           {"store: {backend: etcd, etcd: {endpoints: [a:1], keyFile: k}}",
            "store.etcd.keyFile: needs store.etcd.certFile"},
           {"store: {backend: etcd, etcd: {endpoints: [a:1], certFile: c, keyFile: k}}",
            "store.etcd.certFile: needs store.etcd.caFile"},
           {"store: {path: x}", "store.path: unknown key"},
       }) {
    const std::string text = std::string("dataDir: /d\n") + yaml;
    absl::StatusOr<ServerConfig> config = ParseServerConfig(text, "c.yaml");
    const absl::Status status = config.ok() ? ValidateServerConfig(*config) : config.status();
    ASSERT_FALSE(status.ok()) << yaml;
    EXPECT_THAT(status.message(), HasSubstr(error)) << yaml;
  }
}

TEST(ServerConfigTest, HaIsOffUnlessEnabled) {
  EXPECT_FALSE(ParseServerConfig("dataDir: /d\n", "c.yaml")->ha.enabled);
  absl::StatusOr<ServerConfig> ha = ParseServerConfig(R"(
dataDir: /d
store: {backend: etcd, etcd: {endpoints: [10.0.0.1:2379]}}
ha: {enabled: true, leaseTtl: 5s, advertiseHttp: "http://10.0.0.5:8080",
     advertiseGrpc: "10.0.0.5:9090"}
)",
                                                      "c.yaml");
  ASSERT_TRUE(ha.ok()) << ha.status();
  EXPECT_TRUE(ha->ha.enabled);
  EXPECT_EQ(ha->ha.lease_ttl, std::chrono::seconds(5));
  EXPECT_EQ(ha->ha.advertise_http, "http://10.0.0.5:8080");
  EXPECT_EQ(ha->ha.advertise_grpc, "10.0.0.5:9090");
  EXPECT_TRUE(ValidateServerConfig(*ha).ok());
}

TEST(ServerConfigTest, BadHaNamesTheField) {
  const std::string etcd = "store: {backend: etcd, etcd: {endpoints: [a:1]}}\n";
  for (const auto& [yaml, error] : std::initializer_list<std::pair<std::string, const char*>>{
           {"ha: {enabled: true}", "ha.enabled: needs store.backend etcd"},
           {"ha: {enabled: yes}", "ha.enabled"},
           {etcd + "ha: {enabled: true, leaseTtl: 1s}", "ha.leaseTtl: must be whole seconds"},
           {etcd + "ha: {enabled: true, leaseTtl: 2500ms}", "ha.leaseTtl"},
           {etcd + "ha: {enabled: true, advertiseHttp: 10.0.0.5:8080}", "ha.advertiseHttp"},
           {etcd + "ha: {enabled: true, advertiseGrpc: nohost}", "ha.advertiseGrpc"},
           {etcd + "httpAddr: 0.0.0.0:8080\nha: {enabled: true}", "ha.advertiseHttp: required"},
           {etcd + "httpAddr: 127.0.0.1:0\nha: {enabled: true}",
            "httpAddr: a replica needs a fixed port"},
           {etcd + "clusters: [{name: l, backend: local}]\nha: {enabled: true}",
            "clusters: must be empty with ha.enabled"},
           {"ha: {replicas: 3}", "ha.replicas: unknown key"},
       }) {
    const std::string text = "dataDir: /d\n" + yaml;
    absl::StatusOr<ServerConfig> config = ParseServerConfig(text, "c.yaml");
    const absl::Status status = config.ok() ? ValidateServerConfig(*config) : config.status();
    ASSERT_FALSE(status.ok()) << yaml;
    EXPECT_THAT(status.message(), HasSubstr(error)) << yaml;
  }
}

TEST(ServerConfigTest, HostPortParsesStrictly) {
  EXPECT_EQ(ParseHostPort("127.0.0.1:80", "a")->port, 80);
  EXPECT_EQ(ParseHostPort("[::1]:0", "a")->host, "[::1]");
  for (const char* bad : {"", ":80", "h:", "h:x", "h:70000", "h:-1"}) {
    EXPECT_FALSE(ParseHostPort(bad, "a").ok()) << bad;
  }
}

}  // namespace
}  // namespace tessera::server

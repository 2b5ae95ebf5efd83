// ServerConfig: how `tessera server` is set up — a YAML file, overridden by flags.
//
//   dataDir: /var/lib/tessera          # the SQLite store, task logs, admin.token
//   store:                             # where the control plane's state lives (default sqlite)
//     backend: etcd                    # sqlite (in dataDir) | etcd
//     etcd:                            # backend etcd only
//       endpoints: [10.0.0.1:2379, 10.0.0.2:2379]
//       caFile: ca.crt                 # TLS (optional), with a client certificate (optional)
//       certFile: client.crt
//       keyFile: client.key
//   ha:                                # replicas on one etcd (store.backend etcd; docs/operations.md)
//     enabled: true                    # campaign for leadership; a standby until elected
//     leaseTtl: 3s                     # a dead leader is replaced within this (whole s, >= 2s)
//     advertiseHttp: http://10.0.0.5:8080   # where standbys send REST clients (default: httpAddr)
//     advertiseGrpc: 10.0.0.5:9090     # this replica's gRPC address for others (default: grpcAddr)
//   httpAddr: 127.0.0.1:8080           # REST API, /metrics, /healthz
//   grpcAddr: 127.0.0.1:9090           # gRPC API
//   profile: default                   # scheduling profile: a built-in name (docs/plugins.md)
//   seed: 1                            # the scheduler's tie-breaks
//   cycleInterval: 1s                  # longest wait between cycles while jobs are pending
//   requeueBackoff: 5s                 # first restart's back-off; doubles per restart, at most 1h
//   rateLimit: {ratePerSecond: 50, burst: 100}   # per tenant; ratePerSecond 0 = unlimited
//   clusters:
//     - {name: local, backend: local}                       # this machine's processes
//     - {name: local, backend: local, gpus: {model: T4, memory: 16Gi, count: 2}}  # declared GPUs
//     - {name: sim, backend: sim, nodeList: openb_node_list_gpu_node.csv}         # simulated fleet
//   scheduling:                        # policy switches (sched/scheduling_policy.h); defaults:
//     backfill: easy                   # none | easy | conservative
//     backfillDepth: 16                # conservative: reservations for the first N blocked jobs
//     fairShare: drf                   # none | drf
//     fairShareHalfLife: 0s            # usage-history term; 0s = current use only
//     priorityAging: 1m                # one priority point per this much waiting; 0s = none
//     gangTimeout: 0s                  # admitted but unplaced this long: requeued; 0s = never
//     preemption: false
//     preemptionRate: {max: 10, per: 1m}   # evictions per preemptor queue
//     onPreemption: requeue            # requeue | cancel
//   agents:                            # clusters behind `tessera agent` (docs/agents/)
//     heartbeatInterval: 1s            # what agents are told to use
//     unreachableTimeout: 3s           # no heartbeat this long: Unreachable, nodes NotReady;
//                                      # default 3 heartbeat intervals
//     lostGrace: 1m                    # Unreachable this long: its tasks are lost
//     logTimeout: 10s                  # how long a log read waits for the agent's answer
//     gpuModels: [H100, A100-80GB]     # GPU models agents may report; default: any
//   grpcTls: {certFile: server.crt, keyFile: server.key}   # TLS for the gRPC port (optional)
//   queues:                            # the queue tree (queue_document.h); without it, one
//     - name: org                      # queue "default" without limits
//       children:
//         - {name: team-a, guaranteed: {gpu: 8}, borrowingLimit: {gpu: 4}}
//   targetWorkload:                    # what FGD (profile fgd) measures fragmentation against
//     podList: openb_pod_list_default.csv   # from an Alibaba pod list (read at start), or
//     window: 1000                     # without podList: the last N submitted tasks (default)
//     popularityThreshold: 95          # % of the tasks the kept task shapes cover, (0, 100]
//
// `clusters` lists the in-process clusters; clusters behind agents register themselves, so
// a control plane of agents only may list none.
// Dev mode (DevConfig) is this with dataDir given and one local cluster, plus a simulated
// cluster "sim" when a node list is given. Unknown keys and bad values are InvalidArgument
// naming the field ("clusters[1].backend: must be local or sim, not \"k8s\"").
// Value types; parsing is a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/local/local_inventory.h"
#include "sched/queue/queue_spec.h"
#include "sched/scheduling_policy.h"
#include "server/auth/rate_limiter.h"
#include "tessera/common/clock.h"

namespace tessera::server {

struct ClusterConfig {
  std::string name;
  std::string backend;  // "local" | "sim"
  std::optional<agent::DeclaredGpus> gpus;  // local: declared instead of discovered
  std::string node_list;                    // sim: an Alibaba-format node list (CSV)
};

struct AgentConfig {
  Duration heartbeat_interval{1000};
  std::optional<Duration> unreachable_timeout;  // nullopt: 3 heartbeat intervals
  Duration lost_grace{60000};
  Duration log_timeout{10000};
  std::vector<std::string> gpu_models;  // empty: any
};

struct TlsConfig {
  std::string cert_file;  // PEM; both empty: plaintext
  std::string key_file;
};

// Where the control plane's state lives. Several servers share one etcd keyspace only as the
// replicas of one control plane (HaConfig): each campaigns, and only the leader schedules.
struct StoreConfig {
  std::string backend = "sqlite";  // sqlite | etcd
  std::vector<std::string> etcd_endpoints;  // "host:port"; backend etcd needs at least one
  std::string etcd_ca_file;
  std::string etcd_cert_file;
  std::string etcd_key_file;
};

// High availability (store/etcd/etcd_election.h): every replica campaigns through an etcd
// lease; the leader runs the control plane; the others wait as standbys, their REST port
// redirecting to the leader and their gRPC port closed, so agents move on to the leader.
struct HaConfig {
  bool enabled = false;
  Duration lease_ttl{3000};
  std::string advertise_http;  // "http://host:port"; empty: http:// + httpAddr
  std::string advertise_grpc;  // "host:port"; empty: grpcAddr
};

// FGD's target workload (server/recent_workload.h): from a pod list, or a sliding window.
struct TargetWorkloadConfig {
  std::string pod_list;   // an Alibaba-format pod list (CSV); empty: the window
  int32_t window = 1000;  // tasks; only without pod_list
  double popularity_threshold_pct = 95;
};

struct ServerConfig {
  std::string data_dir;
  StoreConfig store;
  HaConfig ha;
  std::string http_addr = "127.0.0.1:8080";
  std::string grpc_addr = "127.0.0.1:9090";
  std::string profile = "default";
  uint64_t seed = 1;
  Duration cycle_interval{1000};
  Duration requeue_backoff{5000};
  RateLimit rate_limit;
  std::vector<ClusterConfig> clusters;
  AgentConfig agents;
  TlsConfig grpc_tls;
  SchedulingPolicy scheduling;
  // The queue tree in tree order; nullopt without a `queues:` section. The seed of the tree:
  // once the API changed it, the stored tree is used (JobManagerOptions::queues).
  std::optional<std::vector<QueueSpec>> queues;
  TargetWorkloadConfig target_workload;
};

// "host:port" → parts; InvalidArgument naming `field` for anything else (port 0..65535).
struct HostPort {
  std::string host;
  int port = 0;
};
absl::StatusOr<HostPort> ParseHostPort(std::string_view text, std::string_view field);

absl::StatusOr<ServerConfig> ParseServerConfig(std::string_view yaml, std::string_view source);
absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path);
ServerConfig DevConfig(std::string data_dir, std::string sim_node_list);
// Checks the whole config (required fields, unique cluster names, addresses).
absl::Status ValidateServerConfig(const ServerConfig& config);

}  // namespace tessera::server

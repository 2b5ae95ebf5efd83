#include "cli/server_command.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/local/local_cluster.h"
#include "agent/local/system_clock.h"
#include "agent/sim/sim_cluster.h"
#include "api/grpc/agent_service.h"
#include "api/grpc/grpc_server.h"
#include "api/rest/rest_server.h"
#include "cli/server_election.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "prometheus/registry.h"
#include "sched/profile.h"
#include "server/agent/agent_clusters.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/job_manager.h"
#include "server/job_mirror.h"
#include "server/server_config.h"
#include "sim/alibaba/alibaba_trace.h"
#include "sim/alibaba/target_workload_builder.h"
#include "store/etcd/etcd_store.h"
#include "store/fenced_store.h"
#include "store/sqlite/sqlite_store.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;
using server::ServerConfig;

// How long a new leader waits for the job state it followed as a standby to catch up with its
// first write, before it reads the store instead.
constexpr absl::Duration kHandOverWait = absl::Seconds(10);

struct Flags {
  std::string config_path;
  bool dev = false;
  std::string data_dir;
  std::string http_addr;
  std::string grpc_addr;
  std::string sim_nodes;
  std::string profile;
  std::optional<uint64_t> seed;
  std::string local_gpus;  // MODEL:COUNT:MEMORY
  std::optional<double> rate_limit;
  std::string store;                        // sqlite | etcd
  std::vector<std::string> etcd_endpoints;  // host:port
  bool ha = false;
  std::string ha_advertise_http;
  std::string ha_advertise_grpc;
};

// "T4:2:16Gi" → declared GPUs.
absl::StatusOr<agent::DeclaredGpus> ParseLocalGpus(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() != 3 || parts[0].empty()) {
    return absl::InvalidArgumentError(
        fmt::format("--local-gpus: \"{}\" is not MODEL:COUNT:MEMORY (e.g. T4:2:16Gi)", text));
  }
  absl::StatusOr<int64_t> count = ParseCount(parts[1], "--local-gpus count");
  if (!count.ok()) return count.status();
  if (*count > 64) return absl::InvalidArgumentError("--local-gpus count: must be at most 64");
  absl::StatusOr<int64_t> memory = ParseBytes(parts[2], "--local-gpus memory");
  if (!memory.ok()) return memory.status();
  return agent::DeclaredGpus{
      .model = parts[0], .memory = *memory, .count = static_cast<int32_t>(*count)};
}

absl::StatusOr<ServerConfig> BuildConfig(const Flags& flags) {
  ServerConfig config;
  if (flags.dev == !flags.config_path.empty()) {
    return absl::InvalidArgumentError("give exactly one of --dev and --config FILE");
  }
  if (flags.dev) {
    config = server::DevConfig(flags.data_dir, flags.sim_nodes);
  } else {
    absl::StatusOr<ServerConfig> loaded = server::LoadServerConfig(flags.config_path);
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
    if (!flags.data_dir.empty()) config.data_dir = flags.data_dir;
    if (!flags.sim_nodes.empty()) {
      config.clusters.push_back({.name = "sim", .backend = "sim", .node_list = flags.sim_nodes});
    }
  }
  if (flags.ha) config.ha.enabled = true;
  if (!flags.ha_advertise_http.empty()) config.ha.advertise_http = flags.ha_advertise_http;
  if (!flags.ha_advertise_grpc.empty()) config.ha.advertise_grpc = flags.ha_advertise_grpc;
  if (!flags.store.empty()) config.store.backend = flags.store;
  if (!flags.etcd_endpoints.empty()) config.store.etcd_endpoints = flags.etcd_endpoints;
  if (!flags.http_addr.empty()) config.http_addr = flags.http_addr;
  if (!flags.grpc_addr.empty()) config.grpc_addr = flags.grpc_addr;
  if (!flags.profile.empty()) config.profile = flags.profile;
  if (flags.seed.has_value()) config.seed = *flags.seed;
  if (flags.rate_limit.has_value()) config.rate_limit.rate_per_second = *flags.rate_limit;
  if (!flags.local_gpus.empty()) {
    absl::StatusOr<agent::DeclaredGpus> gpus = ParseLocalGpus(flags.local_gpus);
    if (!gpus.ok()) return gpus.status();
    for (server::ClusterConfig& cluster : config.clusters) {
      if (cluster.backend == "local") cluster.gpus = *gpus;
    }
  }
  if (absl::Status s = server::ValidateServerConfig(config); !s.ok()) return s;
  return config;
}

// The admin token of this data directory: the one in admin.token while it is valid, or a new
// one written there (mode 0600).
absl::StatusOr<std::string> AdminToken(server::Authenticator& auth, const fs::path& path) {
  std::ifstream in(path);
  std::string token;
  if (in && std::getline(in, token) && auth.Authenticate(token).ok()) return token;
  absl::StatusOr<server::IssuedToken> issued =
      auth.IssueToken(server::kAdminTenant, server::Role::kAdmin);
  if (!issued.ok()) return issued.status();
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << issued->token << "\n";
    if (!out)
      return absl::PermissionDeniedError(fmt::format("{}: cannot be written", tmp.string()));
  }
  ::chmod(tmp.c_str(), 0600);
  fs::rename(tmp, path);
  return issued->token;
}

// Everything the server runs, in construction order; destroyed in reverse.
struct ControlPlane {
  // HA: this replica's leadership (resigned last, once everything has stopped), the etcd store
  // that `store` fences with its term, and the job records it followed as a standby, until the
  // job manager takes them.
  std::unique_ptr<store::EtcdElection> election;
  std::unique_ptr<store::Store> backend;
  std::unique_ptr<server::JobMirror> mirrored_jobs;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<server::Authenticator> auth;
  prometheus::Registry metrics;
  std::unique_ptr<server::RateLimiter> rate_limiter;
  std::unique_ptr<server::JobManager> manager;
  std::vector<std::unique_ptr<Cluster>> clusters;
  server::NodeNames node_names;
  std::unique_ptr<server::AgentClusters> agent_clusters;
  std::unique_ptr<api::AgentService> agent_service;
  std::unique_ptr<api::RestServer> rest;
  std::unique_ptr<api::GrpcServer> grpc;
  std::chrono::steady_clock::time_point serving;  // when both API ports were open

  ~ControlPlane() {
    if (rest) rest->Stop();
    if (agent_service) agent_service->Stop();
    if (grpc) grpc->Stop();
    if (agent_clusters) agent_clusters->Stop();
    if (manager) manager->Stop();
    clusters.clear();
  }
};

absl::Status AddClusters(const ServerConfig& config, ControlPlane& plane) {
  for (const server::ClusterConfig& cluster : config.clusters) {
    if (cluster.backend == "local") {
      agent::LocalInventoryOptions inventory{.declared_gpus = cluster.gpus};
      absl::StatusOr<std::unique_ptr<agent::LocalCluster>> local = agent::LocalCluster::Create(
          {.name = cluster.name,
           .inventory = inventory,
           .task_dir = (fs::path(config.data_dir) / "tasks" / cluster.name).string(),
           .supervisor = agent::LocalCluster::SupervisorBesideBinary()},
          plane.manager.get());
      if (!local.ok()) return local.status();
      plane.clusters.push_back(*std::move(local));
    } else {
      absl::StatusOr<sim::alibaba::NodeList> nodes = sim::alibaba::LoadNodeList(cluster.node_list);
      if (!nodes.ok()) return nodes.status();
      plane.clusters.push_back(std::make_unique<agent::SimCluster>(
          agent::SimClusterOptions{.name = cluster.name,
                                   .nodes = std::move(nodes->nodes),
                                   .clock = &agent::SystemClock::Get()},
          plane.manager.get()));
    }
  }
  return absl::OkStatus();
}

// The clusters behind agents: those stored by earlier runs join `clusters`; new ones attach
// to the job manager when their agent first registers.
absl::Status StartAgentClusters(const ServerConfig& config, ControlPlane& plane,
                                std::vector<Cluster*>& clusters) {
  const server::AgentConfig& agents = config.agents;
  agent::InventoryRules rules;
  rules.known_gpu_models.insert(agents.gpu_models.begin(), agents.gpu_models.end());
  std::set<std::string, std::less<>> config_clusters;
  for (const server::ClusterConfig& cluster : config.clusters) config_clusters.insert(cluster.name);
  server::JobManager* manager = plane.manager.get();
  plane.agent_clusters = std::make_unique<server::AgentClusters>(server::AgentClustersOptions{
      .heartbeat_interval = agents.heartbeat_interval,
      .unreachable_timeout = agents.unreachable_timeout.value_or(3 * agents.heartbeat_interval),
      .lost_grace = agents.lost_grace,
      .log_timeout = agents.log_timeout,
      .rules = std::move(rules),
      .clock = &agent::SystemClock::Get(),
      .store = plane.store.get(),
      .node_names = &plane.node_names,
      .reserved_names = std::move(config_clusters),
      .task_observer = manager,
      .inventory_observer = manager,
      .attach = [manager](Cluster* cluster) { manager->AttachCluster(cluster); }});
  if (absl::Status s = plane.agent_clusters->Load(); !s.ok()) return s;
  for (Cluster* cluster : plane.agent_clusters->clusters()) clusters.push_back(cluster);
  plane.agent_service = std::make_unique<api::AgentService>(api::AgentService::Options{
      .clusters = plane.agent_clusters.get(), .auth = plane.auth.get(), .metrics = &plane.metrics});
  return absl::OkStatus();
}

// The configured target workload: the pod list's when one is given (errors name the key), else
// nullopt (the job manager's window of recent tasks). Says which on stderr when `profile` scores
// with FGD or FGD-CPU.
absl::StatusOr<std::optional<TargetWorkload>> ConfiguredTargetWorkload(
    const server::TargetWorkloadConfig& config, const Profile& profile) {
  const bool fgd = std::any_of(profile.score.begin(), profile.score.end(),
                               [](const WeightedPlugin& p) {
                                 return p.name == "FGD" || p.name == "FGD-CPU";
                               });
  if (config.pod_list.empty()) {
    if (fgd) {
      std::cerr << fmt::format("tessera: target workload from the last {} submitted task(s)\n",
                               config.window);
    }
    return std::nullopt;
  }
  sim::alibaba::TargetWorkloadStats stats;
  absl::StatusOr<TargetWorkload> loaded = sim::alibaba::LoadTargetWorkload(
      config.pod_list, {.popularity_threshold_pct = config.popularity_threshold_pct}, &stats);
  if (!loaded.ok()) {
    const std::string why(loaded.status().message());
    return absl::Status(loaded.status().code(), fmt::format("targetWorkload.podList: {}", why));
  }
  if (fgd) {
    std::cerr << fmt::format(
        "tessera: target workload from {}: {} task shape(s) covering {:.1f}% of its tasks\n",
        config.pod_list, stats.kept_classes, stats.covered_pct);
  }
  return *std::move(loaded);
}

// The store the config names: SQLite in the data directory, or etcd.
absl::StatusOr<std::unique_ptr<store::Store>> OpenStore(const ServerConfig& config) {
  if (config.store.backend == "etcd") {
    absl::StatusOr<std::unique_ptr<store::EtcdStore>> etcd =
        store::EtcdStore::Open({.endpoints = config.store.etcd_endpoints,
                                .ca_file = config.store.etcd_ca_file,
                                .cert_file = config.store.etcd_cert_file,
                                .key_file = config.store.etcd_key_file});
    if (!etcd.ok()) return etcd.status();
    return std::unique_ptr<store::Store>(*std::move(etcd));
  }
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> sqlite =
      store::SqliteStore::Open({.data_dir = (fs::path(config.data_dir) / "store").string()});
  if (!sqlite.ok()) return sqlite.status();
  return std::unique_ptr<store::Store>(*std::move(sqlite));
}

// The store of a replica of an HA control plane: etcd, waited for while it does not answer (as
// the campaign waits), until `stop` says so (Cancelled).
absl::StatusOr<std::unique_ptr<store::Store>> OpenReplicaStore(const ServerConfig& config,
                                                               const std::function<bool()>& stop) {
  while (true) {
    absl::StatusOr<std::unique_ptr<store::Store>> store = OpenStore(config);
    if (!absl::IsUnavailable(store.status())) return store;
    std::cerr << fmt::format("tessera server: etcd: {}; trying again in 1 s\n",
                             std::string(store.status().message()));
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (stop()) return absl::CancelledError("stopped");
  }
}

// A replica whose job writes failed steps down, so that the state is rebuilt from the store (by
// it, restarted, or by the next leader) rather than run ahead of it.
std::function<void(const absl::Status&)> WriteFailureHandler(const ControlPlane& plane) {
  if (!plane.election) return nullptr;
  return [](const absl::Status& status) {
    ExitDeposed(fmt::format("a job state write failed ({})", std::string(status.message())));
  };
}

// The job records the standby followed, once the mirror has applied this new leader's first
// write (JobMirror::HandOver: every write of the leaders before it is then applied); nullopt,
// said on stderr, when the mirror cannot hand them over: the job manager then reads the store.
std::optional<std::map<int64_t, server::JobRecord>> TakeMirroredJobs(ControlPlane& plane) {
  if (!plane.mirrored_jobs) return std::nullopt;
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<server::MirroredJobs> mirrored = plane.mirrored_jobs->HandOver(
      *plane.store, plane.election->key(), absl::Now() + kHandOverWait);
  plane.mirrored_jobs.reset();
  if (!mirrored.ok()) {
    std::cerr << fmt::format(
        "tessera server: the job state followed as a standby is not taken ({}); reading it "
        "from the store\n",
        mirrored.status().ToString());
    return std::nullopt;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::cout << fmt::format(
                   "tessera server: took the job state followed as a standby: {} job(s), {} "
                   "stored task(s), up to revision {}, in {:.1f} ms\n",
                   mirrored->jobs.size(), mirrored->stored_tasks, mirrored->revision, ms)
            << std::flush;
  return std::move(mirrored->jobs);
}

absl::Status StartControlPlane(const ServerConfig& config, ControlPlane& plane) {
  std::error_code error;
  fs::create_directories(config.data_dir, error);
  if (error) {
    return absl::PermissionDeniedError(
        fmt::format("--data-dir {}: {}", config.data_dir, error.message()));
  }
  if (plane.election) {
    plane.store = std::make_unique<store::FencedStore>(
        plane.backend.get(), plane.election->Fence(),
        [] { ExitDeposed("a write was fenced: another replica leads"); });
  } else {
    absl::StatusOr<std::unique_ptr<store::Store>> store = OpenStore(config);
    if (!store.ok()) return store.status();
    plane.store = *std::move(store);
  }
  std::optional<std::map<int64_t, server::JobRecord>> stored_jobs = TakeMirroredJobs(plane);
  absl::StatusOr<std::unique_ptr<server::Authenticator>> auth =
      server::Authenticator::Create(plane.store.get());
  if (!auth.ok()) return auth.status();
  plane.auth = *std::move(auth);
  if (absl::StatusOr<std::string> token =
          AdminToken(*plane.auth, fs::path(config.data_dir) / "admin.token");
      !token.ok()) {
    return token.status();
  }
  plane.rate_limiter =
      std::make_unique<server::RateLimiter>(config.rate_limit, &agent::SystemClock::Get());
  absl::StatusOr<Profile> profile = BuiltinProfile(config.profile);
  if (!profile.ok()) return profile.status();
  absl::StatusOr<std::optional<TargetWorkload>> target =
      ConfiguredTargetWorkload(config.target_workload, *profile);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::unique_ptr<server::JobManager>> manager = server::JobManager::Create(
      {.store = plane.store.get(),
       .clock = &agent::SystemClock::Get(),
       .profile = *profile,
       .policy = config.scheduling,
       .queues = config.queues,
       .seed = config.seed,
       .cycle_interval = config.cycle_interval,
       .requeue_backoff = config.requeue_backoff,
       .metrics = &plane.metrics,
       .delete_cluster =
           [&plane](std::string_view name) { return plane.agent_clusters->Delete(name); },
       .target_workload = *std::move(target),
       .recent_workload = {.capacity = config.target_workload.window,
                           .popularity_threshold_pct =
                               config.target_workload.popularity_threshold_pct},
       .on_write_failure = WriteFailureHandler(plane),
       .stored_jobs = std::move(stored_jobs)});
  if (!manager.ok()) return manager.status();
  plane.manager = *std::move(manager);
  if (absl::Status s = AddClusters(config, plane); !s.ok()) return s;
  std::vector<Cluster*> clusters;
  for (const auto& cluster : plane.clusters) {
    clusters.push_back(cluster.get());
    for (const Node& node : cluster->Inventory()) {
      (void)plane.node_names.Claim(node.name, cluster->name());
    }
  }
  if (absl::Status s = StartAgentClusters(config, plane, clusters); !s.ok()) return s;
  if (absl::Status s = plane.manager->Start(clusters); !s.ok()) return s;
  plane.agent_clusters->Start();

  plane.rest = std::make_unique<api::RestServer>(
      api::RestServer::Options{.service = plane.manager.get(),
                               .auth = plane.auth.get(),
                               .rate_limiter = plane.rate_limiter.get(),
                               .metrics = &plane.metrics});
  const server::HostPort http = *server::ParseHostPort(config.http_addr, "httpAddr");
  if (absl::Status s = plane.rest->Start(http.host, http.port); !s.ok()) {
    return absl::Status(
        s.code(), fmt::format("--http-addr {}: {}", config.http_addr, std::string(s.message())));
  }
  plane.grpc = std::make_unique<api::GrpcServer>(
      api::GrpcServer::Options{.service = plane.manager.get(),
                               .auth = plane.auth.get(),
                               .rate_limiter = plane.rate_limiter.get(),
                               .more_services = {plane.agent_service.get()},
                               .tls_cert_file = config.grpc_tls.cert_file,
                               .tls_key_file = config.grpc_tls.key_file});
  if (absl::Status s = plane.grpc->Start(config.grpc_addr); !s.ok()) {
    if (absl::IsInvalidArgument(s)) return s;  // grpcTls: the message names the field
    return absl::Status(
        s.code(), fmt::format("--grpc-addr {}: {}", config.grpc_addr, std::string(s.message())));
  }
  plane.serving = std::chrono::steady_clock::now();
  const server::HostPort grpc = *server::ParseHostPort(config.grpc_addr, "grpcAddr");
  std::cout << fmt::format(
                   "tessera server: REST http://{0}:{1}/api/v1  metrics http://{0}:{1}/metrics  "
                   "gRPC {2}:{3}{7}\n"
                   "tessera server: {4} cluster(s), {5} node(s); admin token in {6}\n",
                   http.host, plane.rest->port(), grpc.host, plane.grpc->port(),
                   plane.manager->Clusters().size(), plane.manager->Nodes().size(),
                   (fs::path(config.data_dir) / "admin.token").string(),
                   config.grpc_tls.cert_file.empty() ? "" : " (TLS)")
            << std::flush;
  return absl::OkStatus();
}

// Whether SIGINT or SIGTERM (blocked, in `signals`) is pending; takes it into `signal`.
bool SignalPending(const sigset_t& signals, int& signal) {
  const timespec now{};
  const int taken = sigtimedwait(&signals, nullptr, &now);
  if (taken <= 0) return false;
  signal = taken;
  return true;
}

int Stopped(int signal) {
  std::cout << "tessera server: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ", stopping (tasks keep running)\n";
  return 0;
}

}  // namespace

int RunServerCommand(int argc, char** argv) {
  CLI::App app{"tessera server: the control plane (job API, scheduling loop, clusters)"};
  Flags flags;
  app.add_option("--config", flags.config_path, "YAML configuration file (docs/server.md)");
  app.add_flag("--dev", flags.dev,
               "embedded defaults: SQLite in --data-dir, this machine as cluster 'local', and a "
               "simulated cluster 'sim' from --sim-nodes");
  app.add_option("--data-dir", flags.data_dir, "store, task logs and admin.token");
  app.add_option("--store", flags.store,
                 "where the state lives: sqlite (in --data-dir, the "
                 "default) or etcd (--etcd-endpoints)");
  app.add_flag("--ha", flags.ha,
               "a replica of a highly available control plane: campaign for leadership through "
               "etcd, a standby until elected (config ha:, docs/operations.md)");
  app.add_option("--ha-advertise-http", flags.ha_advertise_http,
                 "this replica's REST URL for clients sent by standbys (default http://httpAddr)");
  app.add_option("--ha-advertise-grpc", flags.ha_advertise_grpc,
                 "this replica's gRPC address as others reach it (default grpcAddr)");
  app.add_option("--etcd-endpoints", flags.etcd_endpoints, "etcd's host:port, comma-separated")
      ->delimiter(',');
  app.add_option("--http-addr", flags.http_addr, "REST API address (default 127.0.0.1:8080)");
  app.add_option("--grpc-addr", flags.grpc_addr, "gRPC API address (default 127.0.0.1:9090)");
  app.add_option("--sim-nodes", flags.sim_nodes,
                 "node list CSV (Alibaba format) of a simulated cluster 'sim'");
  app.add_option("--profile", flags.profile, "scheduling profile (default: default)");
  app.add_option("--seed", flags.seed, "seed of the scheduler's tie-breaks");
  app.add_option("--local-gpus", flags.local_gpus,
                 "declare the local node's GPUs instead of discovering them: MODEL:COUNT:MEMORY");
  app.add_option("--rate-limit", flags.rate_limit, "API requests per second per tenant (0: none)")
      ->check(CLI::Range(0.0, 1e9));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  absl::StatusOr<ServerConfig> config = BuildConfig(flags);
  if (!config.ok()) {
    std::cerr << "tessera server: " << config.status().message() << "\n";
    return 2;
  }
  // Signals are taken by sigwait below; every thread started from here inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ControlPlane plane;
  int signal = 0;
  if (config->ha.enabled) {
    absl::StatusOr<std::unique_ptr<store::Store>> backend =
        OpenReplicaStore(*config, [&] { return SignalPending(signals, signal); });
    if (absl::IsCancelled(backend.status())) return Stopped(signal);
    if (!backend.ok()) {
      std::cerr << "tessera server: " << backend.status().message() << "\n";
      return 1;
    }
    plane.backend = *std::move(backend);
    absl::StatusOr<Elected> elected = AwaitLeadership(
        *config, plane.backend.get(), [&] { return SignalPending(signals, signal); });
    if (absl::IsCancelled(elected.status())) return Stopped(signal);
    if (!elected.ok()) {
      std::cerr << "tessera server: " << elected.status().message() << "\n";
      return absl::IsInvalidArgument(elected.status()) ? 2 : 1;
    }
    plane.election = std::move(elected->election);
    plane.mirrored_jobs = std::move(elected->jobs);
  }
  const auto started = std::chrono::steady_clock::now();
  if (absl::Status s = StartControlPlane(*config, plane); !s.ok()) {
    std::cerr << "tessera server: " << s.message() << "\n";
    return 1;
  }
  if (plane.election) {
    std::cout << fmt::format(
                     "tessera server: serving as the leader {:.0f} ms after the election\n",
                     std::chrono::duration<double, std::milli>(plane.serving - started).count())
              << std::flush;
  }
  sigwait(&signals, &signal);
  return Stopped(signal);
}

}  // namespace tessera::cli

#include "cli/agent_command.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "agent/kubernetes/api_access.h"
#include "agent/kubernetes/kubernetes_cluster.h"
#include "agent/local/local_cluster.h"
#include "agent/local/system_clock.h"
#include "agent/runtime/agent_runner.h"
#include "agent/sim/sim_cluster.h"
#include "agent/slurm/slurm_cluster.h"
#include "core/cluster_name.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "server/server_config.h"
#include "sim/alibaba/alibaba_trace.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

struct AgentFlags {
  std::vector<std::string> servers;
  std::string cluster;
  std::string backend;
  std::string token;
  std::string token_file;
  std::vector<std::string> labels;
  std::string tls_ca;
  // local
  std::string data_dir;
  // sim
  std::string sim_nodes;
  std::optional<int32_t> sim_node_count;
  int32_t sim_gpus = 8;
  std::string sim_gpu_model = "H100";
  std::string sim_cpu = "64";
  std::string sim_memory = "512Gi";
  // slurm (empty: from the SLURM_REST_* environment)
  std::string slurm_url;
  std::string slurm_jwt;
  std::string slurm_jwt_file;
  std::string slurm_user;
  std::string slurm_api_version;
  std::string slurm_partition;
  std::string slurm_log_dir = "/tmp";
  std::string slurm_jobcomp_file;  // Slurm's job-completion log; "" = polls alone
  // kubernetes
  std::string kubeconfig;
  std::string kube_namespace;
  std::string kube_image;
};

absl::StatusOr<std::string> Token(const AgentFlags& flags) {
  if (!flags.token.empty()) return flags.token;
  if (!flags.token_file.empty()) {
    std::ifstream in(flags.token_file);
    std::string token;
    if (!(in >> token)) {
      return absl::InvalidArgumentError(
          fmt::format("--token-file: cannot read a token from \"{}\"", flags.token_file));
    }
    return token;
  }
  if (const char* env = std::getenv("TESSERA_TOKEN"); env != nullptr && *env != '\0') return env;
  return absl::InvalidArgumentError(
      "--token, --token-file or TESSERA_TOKEN: an admin token is required");
}

// --server, --cluster and --tls-ca, checked before anything connects: gRPC would retry a
// wrong address forever, and take a key file for a CA only to fail every handshake.
absl::Status CheckConnectionFlags(const AgentFlags& flags) {
  for (const std::string& server : flags.servers) {
    if (server.find("://") != std::string::npos) {
      return absl::InvalidArgumentError(
          fmt::format("--server: \"{}\" is a URL; give the gRPC address as HOST:PORT", server));
    }
    if (absl::StatusOr<server::HostPort> address = server::ParseHostPort(server, "--server");
        !address.ok() || address->port == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "--server: \"{}\" is not HOST:PORT (the server's gRPC address, e.g. 127.0.0.1:9090)",
          server));
    }
  }
  if (!IsValidClusterName(flags.cluster)) {
    return absl::InvalidArgumentError(fmt::format(
        "--cluster: \"{}\" is not a cluster name ([a-z0-9][a-z0-9._-]{{0,62}})", flags.cluster));
  }
  if (!flags.tls_ca.empty()) return agent::ReadTlsCa(flags.tls_ca).status();
  return absl::OkStatus();
}

constexpr std::string_view kBackends[] = {"local", "sim", "slurm", "kubernetes"};

// A flag of one backend given to another is refused rather than ignored: it usually means a
// wrong --backend. `app` holds the parsed command line.
absl::Status CheckBackendFlags(const CLI::App& app, std::string_view backend) {
  if (std::find(std::begin(kBackends), std::end(kBackends), backend) == std::end(kBackends)) {
    return absl::InvalidArgumentError(
        fmt::format("--backend: must be local, sim, slurm or kubernetes, not \"{}\"", backend));
  }
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0) continue;
    const std::string flag = option->get_name();
    std::string_view owner;
    if (flag == "--data-dir") owner = "local";
    if (flag.starts_with("--sim-")) owner = "sim";
    if (flag.starts_with("--slurm-")) owner = "slurm";
    if (flag.starts_with("--kube")) owner = "kubernetes";
    if (!owner.empty() && owner != backend) {
      return absl::InvalidArgumentError(
          fmt::format("{}: only for --backend {}, not {}", flag, owner, backend));
    }
  }
  return absl::OkStatus();
}

// key=value pairs; the server checks keys and values (docs/agents/README.md).
absl::StatusOr<Labels> ParseLabels(const std::vector<std::string>& labels) {
  Labels out;
  for (const std::string& label : labels) {
    const size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(fmt::format("--label: \"{}\" is not key=value", label));
    }
    if (!out.emplace(label.substr(0, eq), label.substr(eq + 1)).second) {
      return absl::InvalidArgumentError(
          fmt::format("--label: key \"{}\" given twice", label.substr(0, eq)));
    }
  }
  return out;
}

// A simulated fleet of identical nodes named <cluster>-n<i>.
absl::StatusOr<std::vector<Node>> SimNodes(const AgentFlags& flags) {
  if (!flags.sim_nodes.empty()) {
    absl::StatusOr<sim::alibaba::NodeList> list = sim::alibaba::LoadNodeList(flags.sim_nodes);
    if (!list.ok()) return list.status();
    return std::move(list->nodes);
  }
  if (!flags.sim_node_count.has_value()) {
    return absl::InvalidArgumentError(
        "--sim-nodes or --sim-node-count: required for --backend sim");
  }
  if (*flags.sim_node_count <= 0) {
    return absl::InvalidArgumentError("--sim-node-count: must be > 0");
  }
  absl::StatusOr<int64_t> cpu = ParseCpuMillis(flags.sim_cpu, "--sim-cpu");
  if (!cpu.ok()) return cpu.status();
  absl::StatusOr<int64_t> memory = ParseBytes(flags.sim_memory, "--sim-memory");
  if (!memory.ok()) return memory.status();
  std::vector<Node> nodes(*flags.sim_node_count);
  for (int32_t i = 0; i < *flags.sim_node_count; ++i) {
    Node& node = nodes[i];
    node.name = fmt::format("{}-n{:05d}", flags.cluster, i);
    node.pool = flags.sim_gpu_model;
    node.capacity = {.cpu = *cpu, .memory = *memory};
    for (int32_t g = 0; g < flags.sim_gpus; ++g) {
      node.gpus.push_back(GpuDevice{.index = g, .model = flags.sim_gpu_model});
    }
    node.capacity.gpu = kMilliGpuPerDevice * flags.sim_gpus;
    node.allocatable = node.capacity;
  }
  return nodes;
}

absl::StatusOr<std::unique_ptr<Cluster>> MakeBackend(const AgentFlags& flags, const Labels& labels,
                                                     TaskObserver* observer) {
  const Clock* clock = &agent::SystemClock::Get();
  if (flags.backend == "local") {
    if (flags.data_dir.empty()) {
      return absl::InvalidArgumentError("--data-dir: required for --backend local");
    }
    absl::StatusOr<std::unique_ptr<agent::LocalCluster>> local =
        agent::LocalCluster::Create({.name = flags.cluster,
                                     .labels = labels,
                                     .task_dir = (fs::path(flags.data_dir) / "tasks").string(),
                                     .supervisor = agent::LocalCluster::SupervisorBesideBinary(),
                                     .clock = clock},
                                    observer);
    if (!local.ok()) return local.status();
    return std::unique_ptr<Cluster>(*std::move(local));
  }
  if (flags.backend == "sim") {
    absl::StatusOr<std::vector<Node>> nodes = SimNodes(flags);
    if (!nodes.ok()) return nodes.status();
    return std::unique_ptr<Cluster>(std::make_unique<agent::SimCluster>(
        agent::SimClusterOptions{
            .name = flags.cluster, .labels = labels, .nodes = *std::move(nodes), .clock = clock},
        observer));
  }
  if (flags.backend == "slurm") {
    absl::StatusOr<agent::SlurmClusterOptions> options =
        agent::SlurmClusterOptions::FromEnvironment({.name = flags.cluster,
                                                     .labels = labels,
                                                     .url = flags.slurm_url,
                                                     .jwt = flags.slurm_jwt,
                                                     .jwt_file = flags.slurm_jwt_file,
                                                     .user = flags.slurm_user,
                                                     .api_version = flags.slurm_api_version,
                                                     .partition = flags.slurm_partition,
                                                     .jobcomp_file = flags.slurm_jobcomp_file,
                                                     .log_dir = flags.slurm_log_dir,
                                                     .clock = clock});
    if (!options.ok()) return options.status();
    absl::StatusOr<std::unique_ptr<agent::SlurmCluster>> slurm =
        agent::SlurmCluster::Create(*std::move(options), observer);
    if (!slurm.ok()) return slurm.status();
    return std::unique_ptr<Cluster>(*std::move(slurm));
  }
  if (flags.backend == "kubernetes") {
    absl::StatusOr<agent::KubernetesApiAccess> access = agent::ResolveApiAccess(
        flags.kubeconfig, flags.kube_namespace, agent::InClusterEnvironmentFromProcess());
    if (!access.ok()) return access.status();
    absl::StatusOr<std::unique_ptr<agent::KubernetesCluster>> kubernetes =
        agent::KubernetesCluster::Create({.name = flags.cluster,
                                          .labels = labels,
                                          .api = *std::move(access),
                                          .default_image = flags.kube_image,
                                          .clock = clock},
                                         observer);
    if (!kubernetes.ok()) return kubernetes.status();
    return std::unique_ptr<Cluster>(*std::move(kubernetes));
  }
  return absl::InvalidArgumentError(
      fmt::format("--backend: must be local, sim, slurm or kubernetes, not \"{}\"", flags.backend));
}

// Stops the runner on SIGINT or SIGTERM.
void StopOnSignal(agent::AgentRunner& runner) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals, &runner] {
    int signal = 0;
    sigwait(&signals, &signal);
    runner.Stop();
  }).detach();
}

}  // namespace

int RunAgentCommand(int argc, char** argv) {
  CLI::App app{"tessera agent: connects a cluster to the control plane"};
  AgentFlags flags;
  app.add_option("--server", flags.servers,
                 "the control plane's gRPC address, HOST:PORT; comma-separated, the replicas "
                 "of a highly available control plane (the agent finds the leader)")
      ->required()
      ->delimiter(',');
  app.add_option("--cluster", flags.cluster, "this cluster's name")->required();
  app.add_option("--backend", flags.backend, "local | sim | slurm | kubernetes")->required();
  app.add_option("--token", flags.token, "an admin token (or --token-file, $TESSERA_TOKEN)");
  app.add_option("--token-file", flags.token_file, "a file holding the admin token");
  app.add_option("--label", flags.labels, "a cluster label key=value (repeatable)");
  app.add_option("--tls-ca", flags.tls_ca, "PEM CA of the server's TLS certificate");
  app.add_option("--data-dir", flags.data_dir, "local: task state and logs");
  app.add_option("--sim-nodes", flags.sim_nodes, "sim: an Alibaba-format node list (CSV)");
  app.add_option("--sim-node-count", flags.sim_node_count, "sim: this many identical nodes");
  app.add_option("--sim-gpus", flags.sim_gpus, "sim: GPUs per node (default 8)");
  app.add_option("--sim-gpu-model", flags.sim_gpu_model, "sim: GPU model (default H100)");
  app.add_option("--sim-cpu", flags.sim_cpu, "sim: CPUs per node (default 64)");
  app.add_option("--sim-memory", flags.sim_memory, "sim: memory per node (default 512Gi)");
  app.add_option("--slurm-url", flags.slurm_url, "slurm: slurmrestd URL ($SLURM_REST_URL)");
  app.add_option("--slurm-jwt", flags.slurm_jwt, "slurm: JWT ($SLURM_JWT)");
  app.add_option("--slurm-jwt-file", flags.slurm_jwt_file,
                 "slurm: a file holding the JWT, read again when it changes ($SLURM_JWT_FILE)");
  app.add_option("--slurm-user", flags.slurm_user, "slurm: user jobs run as ($SLURM_REST_USER)");
  app.add_option("--slurm-api-version", flags.slurm_api_version,
                 "slurm: REST API version, v0.0.38 to v0.0.43 ($SLURM_REST_API_VERSION, "
                 "default auto: the newest slurmrestd serves)");
  app.add_option("--slurm-partition", flags.slurm_partition, "slurm: only this partition");
  app.add_option("--slurm-log-dir", flags.slurm_log_dir,
                 "slurm: where jobs write their output (default /tmp)");
  app.add_option("--slurm-jobcomp-file", flags.slurm_jobcomp_file,
                 "slurm: Slurm's job-completion log (JobCompLoc of jobcomp/filetxt), followed "
                 "to hear of job ends at once");
  app.add_option(
      "--kubeconfig", flags.kubeconfig,
      "kubernetes: kubeconfig (default: in-cluster, else $KUBECONFIG or ~/.kube/config)");
  app.add_option("--kube-namespace", flags.kube_namespace,
                 "kubernetes: the namespace of Tessera's pods (default tessera)");
  app.add_option("--kube-image", flags.kube_image,
                 "kubernetes: the image of tasks whose env sets no TESSERA_IMAGE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // help is 0; every usage error is 2
  }
  const auto fail = [](const absl::Status& status) {
    std::cerr << "tessera agent: " << status.message() << "\n";
    return 1;
  };
  const auto usage = [](const absl::Status& status) {
    std::cerr << "tessera agent: " << status.message() << "\n";
    return 2;
  };
  if (absl::Status s = CheckConnectionFlags(flags); !s.ok()) return usage(s);
  if (absl::Status s = CheckBackendFlags(app, flags.backend); !s.ok()) return usage(s);
  if (app.count("--token") > 0 && flags.token.empty()) {
    return usage(absl::InvalidArgumentError("--token: empty"));
  }
  absl::StatusOr<std::string> token = Token(flags);
  if (!token.ok()) return usage(token.status());
  absl::StatusOr<Labels> labels = ParseLabels(flags.labels);
  if (!labels.ok()) return usage(labels.status());

  agent::AgentRunner runner({.servers = flags.servers,
                             .cluster = flags.cluster,
                             .backend = flags.backend,
                             .labels = *labels,
                             .token = *token,
                             .tls_ca_file = flags.tls_ca,
                             .clock = &agent::SystemClock::Get()});
  absl::StatusOr<std::unique_ptr<Cluster>> backend = MakeBackend(flags, *labels, &runner);
  if (!backend.ok()) {  // bad backend flags are usage; an unreachable Slurm, say, is not
    return absl::IsInvalidArgument(backend.status()) ? usage(backend.status())
                                                     : fail(backend.status());
  }
  runner.SetBackend(backend->get());
  StopOnSignal(runner);
  absl::Status status = runner.Run();
  if (!status.ok()) return fail(status);
  return 0;
}

}  // namespace tessera::cli

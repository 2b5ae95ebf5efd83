#include "server/server_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "core/duration.h"
#include "core/quantity.h"
#include "fmt/format.h"
#include "spec/queue_document.h"
#include "tessera/cluster/cluster.h"
#include "yaml-cpp/yaml.h"

namespace tessera::server {
namespace {

absl::Status FieldError(std::string_view source, std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source, field, what));
}

absl::Status CheckKeys(const YAML::Node& node, std::string_view source, const std::string& field,
                       const std::set<std::string>& known) {
  if (!node.IsMap())
    return FieldError(source, field.empty() ? "config" : field, "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (!known.contains(key)) {
      return FieldError(source, field.empty() ? key : fmt::format("{}.{}", field, key),
                        "unknown key");
    }
  }
  return absl::OkStatus();
}

// A value parser's error ("FIELD: what"), prefixed with the source like every other error.
absl::Status InSource(std::string_view source, const absl::Status& status) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", source, std::string(status.message())));
}

absl::StatusOr<std::string> Text(const YAML::Node& node, std::string_view source,
                                 const std::string& field) {
  if (!node.IsScalar()) return FieldError(source, field, "must be a string");
  if (node.Tag() != "?" && node.Tag() != "!" && !node.Tag().empty()) {
    return FieldError(source, field, fmt::format("YAML tags are not allowed ({})", node.Tag()));
  }
  return node.as<std::string>();
}

absl::StatusOr<double> Number(const YAML::Node& node, std::string_view source,
                              const std::string& field) {
  const std::string text = node.IsScalar() ? node.as<std::string>() : "";
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(value >= 0) ||
      value > 1e9) {
    return FieldError(source, field, "must be a number between 0 and 1e9");
  }
  return value;
}

// One cluster's own rules (not those across clusters); InvalidArgument naming `field`.
absl::Status CheckCluster(const ClusterConfig& cluster, const std::string& field) {
  if (cluster.name.empty()) return absl::InvalidArgumentError(field + ".name: required");
  if (!IsValidClusterName(cluster.name)) {
    return absl::InvalidArgumentError(
        fmt::format("{}.name: \"{}\" is not a cluster name ([a-z0-9][a-z0-9._-]{{0,62}})", field,
                    cluster.name));
  }
  if (cluster.backend == "sim") {
    if (cluster.node_list.empty()) {
      return absl::InvalidArgumentError(field + ".nodeList: required for a sim cluster");
    }
  } else if (cluster.backend == "local") {
    if (!cluster.node_list.empty()) {
      return absl::InvalidArgumentError(field + ".nodeList: only for sim clusters");
    }
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "{}.backend: must be local or sim (clusters of other kinds join through `tessera agent`), "
        "not \"{}\"",
        field, cluster.backend));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterConfig> ParseCluster(const YAML::Node& node, std::string_view source,
                                           const std::string& field) {
  if (absl::Status s = CheckKeys(node, source, field, {"name", "backend", "gpus", "nodeList"});
      !s.ok()) {
    return s;
  }
  ClusterConfig cluster;
  if (node["name"]) {
    absl::StatusOr<std::string> name = Text(node["name"], source, field + ".name");
    if (!name.ok()) return name.status();
    cluster.name = *name;
  }
  if (node["backend"]) {
    absl::StatusOr<std::string> backend = Text(node["backend"], source, field + ".backend");
    if (!backend.ok()) return backend.status();
    cluster.backend = *backend;
  }
  if (node["nodeList"]) {
    absl::StatusOr<std::string> list = Text(node["nodeList"], source, field + ".nodeList");
    if (!list.ok()) return list.status();
    cluster.node_list = *list;
  }
  if (const YAML::Node gpus = node["gpus"]) {
    const std::string gpus_field = field + ".gpus";
    if (absl::Status s = CheckKeys(gpus, source, gpus_field, {"model", "memory", "count"});
        !s.ok()) {
      return s;
    }
    agent::DeclaredGpus declared;
    absl::StatusOr<std::string> model = Text(gpus["model"], source, gpus_field + ".model");
    if (!model.ok()) return model.status();
    declared.model = *model;
    absl::StatusOr<std::string> memory = Text(gpus["memory"], source, gpus_field + ".memory");
    if (!memory.ok()) return memory.status();
    absl::StatusOr<int64_t> bytes = ParseBytes(*memory, gpus_field + ".memory");
    if (!bytes.ok()) return InSource(source, bytes.status());
    declared.memory = *bytes;
    absl::StatusOr<std::string> count = Text(gpus["count"], source, gpus_field + ".count");
    if (!count.ok()) return count.status();
    absl::StatusOr<int64_t> n = ParseCount(*count, gpus_field + ".count");
    if (!n.ok()) return InSource(source, n.status());
    if (*n > 64) return FieldError(source, gpus_field + ".count", "must be at most 64");
    declared.count = static_cast<int32_t>(*n);
    cluster.gpus = declared;
  }
  if (absl::Status s = CheckCluster(cluster, field); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", source, std::string(s.message())));
  }
  return cluster;
}

absl::StatusOr<Duration> DurationValue(const YAML::Node& node, std::string_view source,
                                       const std::string& field) {
  absl::StatusOr<std::string> text = Text(node, source, field);
  if (!text.ok()) return text.status();
  absl::StatusOr<Duration> d = ParseDuration(*text, field);
  if (!d.ok()) return InSource(source, d.status());
  return *d;
}

// `field`'s text, which must be one of `choices`; its index.
absl::StatusOr<size_t> Choice(const YAML::Node& node, std::string_view source,
                              const std::string& field, std::vector<std::string_view> choices) {
  absl::StatusOr<std::string> text = Text(node, source, field);
  if (!text.ok()) return text.status();
  for (size_t i = 0; i < choices.size(); ++i) {
    if (*text == choices[i]) return i;
  }
  return FieldError(source, field,
                    fmt::format("must be {}, not \"{}\"", fmt::join(choices, " or "), *text));
}

absl::StatusOr<int32_t> Count(const YAML::Node& node, std::string_view source,
                              const std::string& field, int32_t min) {
  absl::StatusOr<double> value = Number(node, source, field);
  if (!value.ok()) return value.status();
  if (*value != static_cast<double>(static_cast<int64_t>(*value)) || *value < min || *value > 1e6) {
    return FieldError(source, field, fmt::format("must be a whole number from {} to 1000000", min));
  }
  return static_cast<int32_t>(*value);
}

absl::StatusOr<SchedulingPolicy> ParseScheduling(const YAML::Node& node, std::string_view source) {
  if (absl::Status s =
          CheckKeys(node, source, "scheduling",
                    {"backfill", "backfillDepth", "fairShare", "fairShareHalfLife", "priorityAging",
                     "gangTimeout", "preemption", "preemptionRate", "onPreemption"});
      !s.ok()) {
    return s;
  }
  SchedulingPolicy policy;
  if (node["backfill"]) {
    absl::StatusOr<size_t> mode =
        Choice(node["backfill"], source, "scheduling.backfill", {"none", "easy", "conservative"});
    if (!mode.ok()) return mode.status();
    policy.backfill =
        std::array{BackfillMode::kNone, BackfillMode::kEasy, BackfillMode::kConservative}[*mode];
  }
  if (node["backfillDepth"]) {
    absl::StatusOr<int32_t> depth =
        Count(node["backfillDepth"], source, "scheduling.backfillDepth", 1);
    if (!depth.ok()) return depth.status();
    policy.backfill_depth = *depth;
  }
  if (node["fairShare"]) {
    absl::StatusOr<size_t> mode =
        Choice(node["fairShare"], source, "scheduling.fairShare", {"none", "drf"});
    if (!mode.ok()) return mode.status();
    policy.fair_share = *mode == 0 ? FairShareMode::kNone : FairShareMode::kDrf;
  }
  for (const auto& [key, target] : std::initializer_list<std::pair<const char*, Duration*>>{
           {"fairShareHalfLife", &policy.fair_share_half_life},
           {"priorityAging", &policy.priority_aging},
           {"gangTimeout", &policy.gang_timeout}}) {
    if (!node[key]) continue;
    absl::StatusOr<Duration> d =
        DurationValue(node[key], source, fmt::format("scheduling.{}", key));
    if (!d.ok()) return d.status();
    *target = *d;
  }
  if (node["preemption"]) {
    absl::StatusOr<size_t> on =
        Choice(node["preemption"], source, "scheduling.preemption", {"false", "true"});
    if (!on.ok()) return on.status();
    policy.preemption = *on == 1;
  }
  if (const YAML::Node rate = node["preemptionRate"]) {
    if (absl::Status s = CheckKeys(rate, source, "scheduling.preemptionRate", {"max", "per"});
        !s.ok()) {
      return s;
    }
    if (rate["max"]) {
      absl::StatusOr<int32_t> max = Count(rate["max"], source, "scheduling.preemptionRate.max", 0);
      if (!max.ok()) return max.status();
      policy.preemption_rate_max = *max;
    }
    if (rate["per"]) {
      absl::StatusOr<Duration> per =
          DurationValue(rate["per"], source, "scheduling.preemptionRate.per");
      if (!per.ok()) return per.status();
      if (per->count() <= 0) {
        return FieldError(source, "scheduling.preemptionRate.per", "must be > 0");
      }
      policy.preemption_rate_period = *per;
    }
  }
  if (node["onPreemption"]) {
    absl::StatusOr<size_t> action =
        Choice(node["onPreemption"], source, "scheduling.onPreemption", {"requeue", "cancel"});
    if (!action.ok()) return action.status();
    policy.on_preemption = *action == 0 ? PreemptedAction::kRequeue : PreemptedAction::kCancel;
  }
  return policy;
}

absl::Status ParseAgents(const YAML::Node& node, std::string_view source, AgentConfig& agents) {
  if (absl::Status s = CheckKeys(
          node, source, "agents",
          {"heartbeatInterval", "unreachableTimeout", "lostGrace", "logTimeout", "gpuModels"});
      !s.ok()) {
    return s;
  }
  if (node["heartbeatInterval"]) {
    absl::StatusOr<Duration> d =
        DurationValue(node["heartbeatInterval"], source, "agents.heartbeatInterval");
    if (!d.ok()) return d.status();
    agents.heartbeat_interval = *d;
  }
  if (node["unreachableTimeout"]) {
    absl::StatusOr<Duration> d =
        DurationValue(node["unreachableTimeout"], source, "agents.unreachableTimeout");
    if (!d.ok()) return d.status();
    agents.unreachable_timeout = *d;
  }
  if (node["lostGrace"]) {
    absl::StatusOr<Duration> d = DurationValue(node["lostGrace"], source, "agents.lostGrace");
    if (!d.ok()) return d.status();
    agents.lost_grace = *d;
  }
  if (node["logTimeout"]) {
    absl::StatusOr<Duration> d = DurationValue(node["logTimeout"], source, "agents.logTimeout");
    if (!d.ok()) return d.status();
    agents.log_timeout = *d;
  }
  if (const YAML::Node models = node["gpuModels"]) {
    if (!models.IsSequence()) return FieldError(source, "agents.gpuModels", "must be a list");
    for (size_t i = 0; i < models.size(); ++i) {
      absl::StatusOr<std::string> model =
          Text(models[i], source, fmt::format("agents.gpuModels[{}]", i));
      if (!model.ok()) return model.status();
      agents.gpu_models.push_back(*model);
    }
  }
  if (agents.heartbeat_interval.count() <= 0) {
    return FieldError(source, "agents.heartbeatInterval", "must be > 0");
  }
  if (agents.log_timeout.count() <= 0) {
    return FieldError(source, "agents.logTimeout", "must be > 0");
  }
  if (agents.unreachable_timeout && *agents.unreachable_timeout < agents.heartbeat_interval) {
    return FieldError(source, "agents.unreachableTimeout",
                      "must be at least one heartbeat interval");
  }
  return absl::OkStatus();
}

absl::StatusOr<TargetWorkloadConfig> ParseTargetWorkload(const YAML::Node& node,
                                                         std::string_view source) {
  if (absl::Status s =
          CheckKeys(node, source, "targetWorkload", {"podList", "window", "popularityThreshold"});
      !s.ok()) {
    return s;
  }
  TargetWorkloadConfig config;
  if (node["podList"]) {
    absl::StatusOr<std::string> path = Text(node["podList"], source, "targetWorkload.podList");
    if (!path.ok()) return path.status();
    if (path->empty()) return FieldError(source, "targetWorkload.podList", "must not be empty");
    config.pod_list = *path;
  }
  if (node["window"]) {
    if (!config.pod_list.empty()) {
      return FieldError(source, "targetWorkload.window",
                        "only without podList (the window is the default source)");
    }
    absl::StatusOr<int32_t> window = Count(node["window"], source, "targetWorkload.window", 1);
    if (!window.ok()) return window.status();
    config.window = *window;
  }
  if (node["popularityThreshold"]) {
    absl::StatusOr<double> pct =
        Number(node["popularityThreshold"], source, "targetWorkload.popularityThreshold");
    if (!pct.ok() || *pct <= 0 || *pct > 100) {
      return FieldError(source, "targetWorkload.popularityThreshold",
                        "must be a percentage in (0, 100]");
    }
    config.popularity_threshold_pct = *pct;
  }
  return config;
}

absl::Status ParseStore(const YAML::Node& node, std::string_view source, StoreConfig& config) {
  if (absl::Status s = CheckKeys(node, source, "store", {"backend", "etcd"}); !s.ok()) return s;
  if (node["backend"]) {
    absl::StatusOr<std::string> backend = Text(node["backend"], source, "store.backend");
    if (!backend.ok()) return backend.status();
    config.backend = *backend;
  }
  const YAML::Node etcd = node["etcd"];
  if (!etcd) return absl::OkStatus();
  if (absl::Status s =
          CheckKeys(etcd, source, "store.etcd", {"endpoints", "caFile", "certFile", "keyFile"});
      !s.ok()) {
    return s;
  }
  if (const YAML::Node endpoints = etcd["endpoints"]) {
    if (!endpoints.IsSequence()) {
      return FieldError(source, "store.etcd.endpoints", "must be a list of host:port");
    }
    for (size_t i = 0; i < endpoints.size(); ++i) {
      absl::StatusOr<std::string> endpoint =
          Text(endpoints[i], source, fmt::format("store.etcd.endpoints[{}]", i));
      if (!endpoint.ok()) return endpoint.status();
      config.etcd_endpoints.push_back(*endpoint);
    }
  }
  for (const auto& [key, target] : std::initializer_list<std::pair<const char*, std::string*>>{
           {"caFile", &config.etcd_ca_file},
           {"certFile", &config.etcd_cert_file},
           {"keyFile", &config.etcd_key_file}}) {
    if (!etcd[key]) continue;
    absl::StatusOr<std::string> value = Text(etcd[key], source, fmt::format("store.etcd.{}", key));
    if (!value.ok()) return value.status();
    *target = *value;
  }
  return absl::OkStatus();
}

absl::Status ParseHa(const YAML::Node& node, std::string_view source, HaConfig& config) {
  if (absl::Status s =
          CheckKeys(node, source, "ha", {"enabled", "leaseTtl", "advertiseHttp", "advertiseGrpc"});
      !s.ok()) {
    return s;
  }
  if (node["enabled"]) {
    absl::StatusOr<size_t> enabled =
        Choice(node["enabled"], source, "ha.enabled", {"false", "true"});
    if (!enabled.ok()) return enabled.status();
    config.enabled = *enabled == 1;
  }
  if (node["leaseTtl"]) {
    absl::StatusOr<Duration> ttl = DurationValue(node["leaseTtl"], source, "ha.leaseTtl");
    if (!ttl.ok()) return ttl.status();
    config.lease_ttl = *ttl;
  }
  for (const auto& [key, target] : std::initializer_list<std::pair<const char*, std::string*>>{
           {"advertiseHttp", &config.advertise_http}, {"advertiseGrpc", &config.advertise_grpc}}) {
    if (!node[key]) continue;
    absl::StatusOr<std::string> value = Text(node[key], source, fmt::format("ha.{}", key));
    if (!value.ok()) return value.status();
    *target = *value;
  }
  return absl::OkStatus();
}

absl::Status ParseTopLevel(const YAML::Node& root, std::string_view source, ServerConfig& config) {
  if (absl::Status s =
          CheckKeys(root, source, "",
                    {"dataDir", "store", "ha", "httpAddr", "grpcAddr", "profile", "seed",
                     "cycleInterval", "requeueBackoff", "rateLimit", "clusters", "agents",
                     "grpcTls", "scheduling", "queues", "targetWorkload"});
      !s.ok()) {
    return s;
  }
  for (const auto& [key, target] :
       std::initializer_list<std::pair<const char*, std::string*>>{{"dataDir", &config.data_dir},
                                                                   {"httpAddr", &config.http_addr},
                                                                   {"grpcAddr", &config.grpc_addr},
                                                                   {"profile", &config.profile}}) {
    if (!root[key]) continue;
    absl::StatusOr<std::string> value = Text(root[key], source, key);
    if (!value.ok()) return value.status();
    *target = *value;
  }
  if (root["seed"]) {
    absl::StatusOr<double> seed = Number(root["seed"], source, "seed");
    if (!seed.ok()) return seed.status();
    config.seed = static_cast<uint64_t>(*seed);
  }
  for (const auto& [key, target] : std::initializer_list<std::pair<const char*, Duration*>>{
           {"cycleInterval", &config.cycle_interval},
           {"requeueBackoff", &config.requeue_backoff}}) {
    if (!root[key]) continue;
    absl::StatusOr<std::string> text = Text(root[key], source, key);
    if (!text.ok()) return text.status();
    absl::StatusOr<Duration> d = ParseDuration(*text, key);
    if (!d.ok()) return InSource(source, d.status());
    *target = *d;
  }
  if (const YAML::Node limit = root["rateLimit"]) {
    if (absl::Status s = CheckKeys(limit, source, "rateLimit", {"ratePerSecond", "burst"});
        !s.ok()) {
      return s;
    }
    if (limit["ratePerSecond"]) {
      absl::StatusOr<double> rate =
          Number(limit["ratePerSecond"], source, "rateLimit.ratePerSecond");
      if (!rate.ok()) return rate.status();
      config.rate_limit.rate_per_second = *rate;
    }
    if (limit["burst"]) {
      absl::StatusOr<double> burst = Number(limit["burst"], source, "rateLimit.burst");
      if (!burst.ok()) return burst.status();
      config.rate_limit.burst = *burst;
    }
  }
  if (const YAML::Node clusters = root["clusters"]) {
    if (!clusters.IsSequence()) return FieldError(source, "clusters", "must be a list");
    for (size_t i = 0; i < clusters.size(); ++i) {
      absl::StatusOr<ClusterConfig> cluster =
          ParseCluster(clusters[i], source, fmt::format("clusters[{}]", i));
      if (!cluster.ok()) return cluster.status();
      config.clusters.push_back(*std::move(cluster));
    }
  }
  if (const YAML::Node store = root["store"]) {
    if (absl::Status s = ParseStore(store, source, config.store); !s.ok()) return s;
  }
  if (const YAML::Node ha = root["ha"]) {
    if (absl::Status s = ParseHa(ha, source, config.ha); !s.ok()) return s;
  }
  if (const YAML::Node agents = root["agents"]) {
    if (absl::Status s = ParseAgents(agents, source, config.agents); !s.ok()) return s;
  }
  if (const YAML::Node tls = root["grpcTls"]) {
    if (absl::Status s = CheckKeys(tls, source, "grpcTls", {"certFile", "keyFile"}); !s.ok()) {
      return s;
    }
    for (const auto& [key, target] : std::initializer_list<std::pair<const char*, std::string*>>{
             {"certFile", &config.grpc_tls.cert_file}, {"keyFile", &config.grpc_tls.key_file}}) {
      if (!tls[key]) return FieldError(source, fmt::format("grpcTls.{}", key), "required");
      absl::StatusOr<std::string> value = Text(tls[key], source, fmt::format("grpcTls.{}", key));
      if (!value.ok()) return value.status();
      *target = *value;
    }
  }
  if (const YAML::Node scheduling = root["scheduling"]) {
    absl::StatusOr<SchedulingPolicy> policy = ParseScheduling(scheduling, source);
    if (!policy.ok()) return policy.status();
    config.scheduling = *policy;
  }
  if (const YAML::Node queues = root["queues"]) {
    absl::StatusOr<std::vector<QueueSpec>> tree = spec::ParseQueueTree(queues, "queues");
    if (!tree.ok()) return InSource(source, tree.status());
    config.queues = *std::move(tree);
  }
  if (const YAML::Node target = root["targetWorkload"]) {
    absl::StatusOr<TargetWorkloadConfig> parsed = ParseTargetWorkload(target, source);
    if (!parsed.ok()) return parsed.status();
    config.target_workload = *std::move(parsed);
  }
  return absl::OkStatus();
}

// yaml-cpp parses flow collections recursively: deep "[[[[..." would exhaust the stack.
constexpr size_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxFlowDepth = 64;

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(std::string_view text, std::string_view field) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        fmt::format("{}: \"{}\" is not HOST:PORT (port 0..65535)", field, text));
  };
  if (colon == std::string_view::npos || colon == 0) return bad();
  HostPort out{.host = std::string(text.substr(0, colon))};
  const std::string_view port = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || out.port < 0 ||
      out.port > 65535) {
    return bad();
  }
  return out;
}

absl::StatusOr<ServerConfig> ParseServerConfig(std::string_view yaml, std::string_view source) {
  ServerConfig config;
  if (yaml.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        fmt::format("{}: larger than the limit of {} bytes", source, kMaxConfigBytes));
  }
  if (spec::FlowDepth(yaml) > kMaxFlowDepth) {
    return absl::InvalidArgumentError(
        fmt::format("{}: brackets nest deeper than the limit of {}", source, kMaxFlowDepth));
  }
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    if (root.IsNull()) return config;
    if (absl::Status s = ParseTopLevel(root, source, config); !s.ok()) return s;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}:{}: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  return config;
}

absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(fmt::format("{}: cannot be read", path));
  std::ostringstream text;
  text << file.rdbuf();
  return ParseServerConfig(text.str(), path);
}

ServerConfig DevConfig(std::string data_dir, std::string sim_node_list) {
  ServerConfig config;
  config.data_dir = std::move(data_dir);
  config.clusters.push_back({.name = "local", .backend = "local"});
  if (!sim_node_list.empty()) {
    config.clusters.push_back(
        {.name = "sim", .backend = "sim", .node_list = std::move(sim_node_list)});
  }
  return config;
}

absl::Status CheckStore(const StoreConfig& store) {
  if (store.backend != "sqlite" && store.backend != "etcd") {
    return absl::InvalidArgumentError(
        fmt::format("store.backend: must be sqlite or etcd, not \"{}\"", store.backend));
  }
  if (store.backend == "etcd" && store.etcd_endpoints.empty()) {
    return absl::InvalidArgumentError(
        "store.etcd.endpoints: required with store.backend etcd (--etcd-endpoints)");
  }
  for (size_t i = 0; i < store.etcd_endpoints.size(); ++i) {
    if (absl::StatusOr<HostPort> hp =
            ParseHostPort(store.etcd_endpoints[i], fmt::format("store.etcd.endpoints[{}]", i));
        !hp.ok()) {
      return hp.status();
    }
  }
  if (!store.etcd_key_file.empty() && store.etcd_cert_file.empty()) {
    return absl::InvalidArgumentError("store.etcd.keyFile: needs store.etcd.certFile");
  }
  if (!store.etcd_cert_file.empty() && store.etcd_ca_file.empty()) {
    return absl::InvalidArgumentError("store.etcd.certFile: needs store.etcd.caFile (TLS)");
  }
  return absl::OkStatus();
}

absl::Status CheckHa(const ServerConfig& config) {
  const HaConfig& ha = config.ha;
  if (!ha.enabled) return absl::OkStatus();
  if (config.store.backend != "etcd") {
    return absl::InvalidArgumentError("ha.enabled: needs store.backend etcd (--store etcd)");
  }
  if (ha.lease_ttl < std::chrono::seconds(2) ||
      ha.lease_ttl % std::chrono::seconds(1) != Duration::zero()) {
    return absl::InvalidArgumentError("ha.leaseTtl: must be whole seconds, at least 2s");
  }
  if (!config.clusters.empty()) {
    return absl::InvalidArgumentError(
        "clusters: must be empty with ha.enabled (every replica would run them); run "
        "`tessera agent` for each cluster instead");
  }
  if (!ha.advertise_http.empty() && !ha.advertise_http.starts_with("http://") &&
      !ha.advertise_http.starts_with("https://")) {
    return absl::InvalidArgumentError(fmt::format(
        "ha.advertiseHttp: must start with http:// or https://, not \"{}\"", ha.advertise_http));
  }
  if (!ha.advertise_grpc.empty()) {
    if (absl::StatusOr<HostPort> hp = ParseHostPort(ha.advertise_grpc, "ha.advertiseGrpc");
        !hp.ok()) {
      return hp.status();
    }
  }
  for (const auto& [field, addr, advertised] :
       {std::tuple<const char*, const std::string*, const std::string*>{
            "httpAddr", &config.http_addr, &ha.advertise_http},
        {"grpcAddr", &config.grpc_addr, &ha.advertise_grpc}}) {
    const absl::StatusOr<HostPort> hp = ParseHostPort(*addr, field);
    if (!hp.ok()) return hp.status();
    if (hp->port == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: a replica needs a fixed port (0 lets the kernel pick one that agents and "
          "clients cannot know)",
          field));
    }
    if (advertised->empty() && (hp->host == "0.0.0.0" || hp->host == "[::]")) {
      return absl::InvalidArgumentError(
          fmt::format("ha.advertise{}: required when {} listens on every address ({})",
                      std::string_view(field) == "httpAddr" ? "Http" : "Grpc", field, *addr));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateServerConfig(const ServerConfig& config) {
  if (config.data_dir.empty()) return absl::InvalidArgumentError("dataDir: required (--data-dir)");
  for (const auto& [field, addr] :
       {std::pair<const char*, const std::string*>{"httpAddr", &config.http_addr},
        {"grpcAddr", &config.grpc_addr}}) {
    if (absl::StatusOr<HostPort> hp = ParseHostPort(*addr, field); !hp.ok()) return hp.status();
  }
  if (config.cycle_interval.count() <= 0) {
    return absl::InvalidArgumentError("cycleInterval: must be > 0");
  }
  if (absl::Status s = CheckStore(config.store); !s.ok()) return s;
  if (absl::Status s = CheckHa(config); !s.ok()) return s;
  std::set<std::string> names;
  for (size_t i = 0; i < config.clusters.size(); ++i) {
    const ClusterConfig& cluster = config.clusters[i];
    const std::string field = fmt::format("clusters[{}]", i);
    if (absl::Status s = CheckCluster(cluster, field); !s.ok()) return s;
    if (!names.insert(cluster.name).second) {
      return absl::InvalidArgumentError(
          fmt::format("{}.name: \"{}\" names another cluster too", field, cluster.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace tessera::server

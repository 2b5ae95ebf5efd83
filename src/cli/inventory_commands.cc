#include "cli/inventory_commands.h"

#include <set>
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "cli/job_view.h"
#include "cli/output_format.h"
#include "cli/table.h"
#include "cli/verb_common.h"
#include "fmt/format.h"

namespace tessera::cli {
namespace {

// "allocated/capacity" of one resource: "12/64".
std::string Usage(const Json& item, std::string_view resource) {
  std::string allocated = JsonText(item, {"allocated", resource});
  std::string capacity = JsonText(item, {"capacity", resource});
  if (allocated.empty()) allocated = "0";
  if (capacity.empty()) capacity = "0";
  return fmt::format("{}/{}", allocated, capacity);
}

std::string Labels(const Json& item) {
  const Json* labels = JsonAt(item, {"labels"});
  if (labels == nullptr || !labels->is_object() || labels->empty()) return "-";
  std::vector<std::string> pairs;
  for (const auto& [key, value] : labels->items()) {
    pairs.push_back(
        fmt::format("{}={}", key, value.is_string() ? value.get<std::string>() : DumpJson(value)));
  }
  return fmt::format("{}", fmt::join(pairs, ","));
}

std::string Taints(const Json& node) {
  std::vector<std::string> taints;
  for (const Json& t : JsonArray(node, {"taints"})) {
    const std::string value = JsonText(t, {"value"});
    taints.push_back(fmt::format("{}{}:{}", JsonText(t, {"key"}), value.empty() ? "" : "=" + value,
                                 JsonText(t, {"effect"})));
  }
  return taints.empty() ? "-" : fmt::format("{}", fmt::join(taints, ","));
}

std::string GpuModels(const Json& node) {
  std::vector<std::string> models;
  std::set<std::string> seen;
  for (const Json& gpu : JsonArray(node, {"gpus"})) {
    std::string model = JsonText(gpu, {"model"});
    if (!model.empty() && seen.insert(model).second) models.push_back(std::move(model));
  }
  return models.empty() ? "-" : fmt::format("{}", fmt::join(models, ","));
}

std::string NodeStatus(const Json& node) {
  const Json* ready = JsonAt(node, {"ready"});
  const Json* cordoned = JsonAt(node, {"unschedulable"});
  std::string status =
      ready != nullptr && ready->is_boolean() && ready->get<bool>() ? "Ready" : "NotReady";
  if (cordoned != nullptr && cordoned->is_boolean() && cordoned->get<bool>()) {
    status += ",SchedulingDisabled";
  }
  return status;
}

struct Inventory {
  std::string_view path;
  std::vector<std::string> headers;
  std::vector<std::string> wide_headers;
  std::vector<std::string> (*row)(const Json& item, bool wide);
};

// The administrative state; "Ready" from a server that does not report one.
std::string NodeState(const Json& node) {
  const std::string state = JsonText(node, {"state"});
  return state.empty() ? "Ready" : state;
}

// "<reason> [<by> <since>]" as sinfo -R shows it; "-" for a node never changed.
std::string NodeStateReason(const Json& node) {
  const std::string since = JsonText(node, {"stateSince"});
  if (since.empty()) return "-";
  const std::string reason = JsonText(node, {"stateReason"});
  return fmt::format("{}[{} {}]", reason.empty() ? "" : reason + " ", JsonText(node, {"stateBy"}),
                     since);
}

std::vector<std::string> NodeRow(const Json& node, bool wide) {
  const std::string tasks = JsonText(node, {"tasks"});
  std::vector<std::string> row = {
      JsonText(node, {"name"}),   JsonText(node, {"cluster"}), NodeStatus(node),   NodeState(node),
      Usage(node, "cpu"),         Usage(node, "memory"),       Usage(node, "gpu"), GpuModels(node),
      tasks.empty() ? "0" : tasks};
  if (wide) {
    row.push_back(NodeStateReason(node));
    row.push_back(Taints(node));
    row.push_back(Labels(node));
  }
  return row;
}

// Ready, or Unreachable while the cluster's agent is away or silent.
std::string ClusterStatus(const Json& cluster) {
  const auto reachable = cluster.find("reachable");
  return reachable != cluster.end() && reachable->is_boolean() && !reachable->get<bool>()
             ? "Unreachable"
             : "Ready";
}

std::vector<std::string> ClusterRow(const Json& cluster, bool wide) {
  std::vector<std::string> row = {JsonText(cluster, {"name"}),
                                  JsonText(cluster, {"backend"}),
                                  ClusterStatus(cluster),
                                  JsonText(cluster, {"nodes"}),
                                  JsonText(cluster, {"readyNodes"}),
                                  Usage(cluster, "cpu"),
                                  Usage(cluster, "memory"),
                                  Usage(cluster, "gpu")};
  if (wide) row.push_back(Labels(cluster));
  return row;
}

int RunInventory(int argc, char** argv, const CommandEnv& env, const Inventory& inventory,
                 std::string description) {
  ClientFlags client_flags;
  std::string output;
  CLI::App app{std::move(description), fmt::format("tessera {}", argv[0])};
  app.add_option("-o,--output", output, "Output format: table (default), wide, json or yaml");
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok()) return ReportUsageError(std::string(format.status().message()), *env.err);
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  absl::StatusOr<Json> items = client->GetJson(inventory.path);
  if (!items.ok()) return ReportApiError(items.status(), *env.err);
  if (*format == OutputFormat::kJson || *format == OutputFormat::kYaml) {
    *env.out << RenderStructured(*items, *format);
    return kExitOk;
  }
  const bool wide = *format == OutputFormat::kWide;
  std::vector<std::string> headers = inventory.headers;
  if (wide)
    headers.insert(headers.end(), inventory.wide_headers.begin(), inventory.wide_headers.end());
  Table table(std::move(headers));
  for (const Json& item : JsonArray(*items, {"items"})) table.AddRow(inventory.row(item, wide));
  *env.out << table.Render();
  return kExitOk;
}

}  // namespace

int RunNodesCommand(int argc, char** argv, const CommandEnv& env) {
  const Inventory nodes{
      "/api/v1/nodes",
      {"NAME", "CLUSTER", "STATUS", "STATE", "CPU", "MEMORY", "GPU", "GPU MODEL", "TASKS"},
      {"REASON", "TAINTS", "LABELS"},
      &NodeRow};
  return RunInventory(argc, argv, env, nodes,
                      "List the nodes of every cluster, with allocated/capacity of each "
                      "resource.\n\nExamples:\n  tessera nodes\n  tessera nodes -o wide");
}

int RunClustersCommand(int argc, char** argv, const CommandEnv& env) {
  const Inventory clusters{"/api/v1/clusters",
                           {"NAME", "BACKEND", "STATUS", "NODES", "READY", "CPU", "MEMORY", "GPU"},
                           {"LABELS"},
                           &ClusterRow};
  return RunInventory(argc, argv, env, clusters,
                      "List the clusters, with allocated/capacity of each resource.\n\n"
                      "Example:\n  tessera clusters");
}

int RunClusterCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string name;
  CLI::App app{"Change the clusters (admin tokens only).", "tessera cluster"};
  app.require_subcommand(1);
  CLI::App* remove = app.add_subcommand(
      "delete",
      "Delete a cluster behind an agent (a decommissioned one): its nodes leave the inventory "
      "and the tasks still counted there end Lost. Its agent must be stopped first.\n\n"
      "Example:\n  tessera cluster delete hpc-old");
  remove->add_option("name", name, "The cluster's name")->required();
  AddClientFlags(*remove, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;
  absl::StatusOr<Json> left = client->DeleteJson("/api/v1/clusters/" + PercentEncode(name));
  if (!left.ok()) return ReportApiError(left.status(), *env.err);
  *env.out << fmt::format("cluster {} deleted\n", name);
  return kExitOk;
}

int RunNodeCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string target;
  std::string reason;
  std::string grace;
  CLI::App app{"Take a node out of service or back (admin tokens only).", "tessera node"};
  app.require_subcommand(1);
  struct Action {
    const char* name;
    const char* help;
  };
  const Action actions[] = {
      {"cordon",
       "No new tasks on the node; what runs there keeps running (Slurm: state=drain without "
       "evicting; kubectl cordon).\n\nExample:\n  tessera node cordon east/gpu-7 --reason "
       "\"bad DIMM\""},
      {"uncordon",
       "Make a cordoned, draining or drained node schedulable again (kubectl uncordon; Slurm: "
       "state=resume).\n\nExample:\n  tessera node uncordon east/gpu-7"},
      {"drain",
       "No new tasks on the node, and every job with a task there is evicted whole (its gang) "
       "and requeued; the node is Drained once nothing is left on it (kubectl drain).\n\n"
       "Example:\n  tessera node drain east/gpu-7 --grace 5m --reason \"replace GPU 3\""},
  };
  std::vector<CLI::App*> subcommands;
  for (const Action& action : actions) {
    CLI::App* sub = app.add_subcommand(action.name, action.help);
    sub->add_option("node", target, "CLUSTER/NODE, as `tessera nodes` lists them")->required();
    sub->add_option("--reason", reason, "Why, in words (shown by `tessera nodes -o wide`)");
    if (std::string_view(action.name) == "drain") {
      sub->add_option("--grace", grace,
                      "The evicted tasks' time to exit (\"90s\", \"5m\") instead of each "
                      "job's terminationGracePeriod");
    }
    AddClientFlags(*sub, &client_flags);
    subcommands.push_back(sub);
  }
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  const size_t slash = target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == target.size() ||
      target.find('/', slash + 1) != std::string::npos) {
    return ReportUsageError(
        fmt::format("node: \"{}\" is not CLUSTER/NODE (as `tessera nodes` lists them)", target),
        *env.err);
  }
  const std::string cluster = target.substr(0, slash);
  const std::string node = target.substr(slash + 1);
  std::string action;
  bool grace_given = false;
  for (size_t i = 0; i < subcommands.size(); ++i) {
    if (!subcommands[i]->parsed()) continue;
    action = actions[i].name;
    const CLI::Option* option = subcommands[i]->get_option_no_throw("--grace");
    grace_given = option != nullptr && option->count() > 0;
  }
  if (grace_given && grace.empty()) {
    return ReportUsageError("--grace: must be a duration such as 90s or 5m", *env.err);
  }
  Json body = Json::object();
  if (!reason.empty()) body["reason"] = reason;
  if (!grace.empty()) body["gracePeriod"] = grace;
  std::string text;
  try {
    text = body.dump();
  } catch (const Json::type_error&) {  // JSON text is UTF-8: the encoder refuses other bytes
    return ReportUsageError("--reason: is not valid UTF-8 text", *env.err);
  }
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;
  absl::StatusOr<Json> changed =
      client->PostJson(fmt::format("/api/v1/clusters/{}/nodes/{}:{}", PercentEncode(cluster),
                                   PercentEncode(node), action),
                       text);
  if (!changed.ok()) return ReportApiError(changed.status(), *env.err);
  const std::string state = NodeState(*changed);
  const std::string tasks = JsonText(*changed, {"tasks"});
  if (state == "Draining") {
    *env.out << fmt::format("node {} draining: {} task(s) being evicted\n", target,
                            tasks.empty() ? "0" : tasks);
  } else if (action == "uncordon" || state == "Ready") {
    *env.out << fmt::format("node {} uncordoned\n", target);
  } else {
    *env.out << fmt::format("node {} {}\n", target, state == "Drained" ? "drained" : "cordoned");
  }
  return kExitOk;
}

}  // namespace tessera::cli

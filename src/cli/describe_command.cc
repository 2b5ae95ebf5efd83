// `tessera describe`: see job_commands.h.
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "cli/job_commands.h"
#include "cli/job_view.h"
#include "cli/table.h"
#include "cli/verb_common.h"
#include "fmt/format.h"

namespace tessera::cli {
namespace {

// "k=v, k2=v2"; "-" when empty.
std::string KeyValues(const Json& value, std::initializer_list<std::string_view> path) {
  const Json* map = JsonAt(value, path);
  if (map == nullptr || !map->is_object() || map->empty()) return "-";
  std::vector<std::string> pairs;
  for (const auto& [key, v] : map->items()) {
    pairs.push_back(fmt::format("{}={}", key, v.is_string() ? v.get<std::string>() : DumpJson(v)));
  }
  return fmt::format("{}", fmt::join(pairs, ", "));
}

// A list of strings, or one string, as "a,b".
std::string Items(const Json& value, std::initializer_list<std::string_view> path) {
  const Json* node = JsonAt(value, path);
  if (node == nullptr || node->is_null()) return "-";
  if (!node->is_array()) return JsonText(value, path);
  std::vector<std::string> items;
  for (const Json& item : *node)
    items.push_back(item.is_string() ? item.get<std::string>() : DumpJson(item));
  return items.empty() ? "-" : fmt::format("{}", fmt::join(items, ","));
}

// "key=value:NoSchedule", "key (Exists)"; "-" when none.
std::string Tolerations(const Json& tolerations) {
  if (!tolerations.is_array() || tolerations.empty()) return "-";
  std::vector<std::string> out;
  for (const Json& t : tolerations) {
    const std::string key = JsonText(t, {"key"});
    std::string text = JsonText(t, {"operator"}) == "Exists"
                           ? fmt::format("{} (Exists)", key.empty() ? "*" : key)
                           : fmt::format("{}={}", key, JsonText(t, {"value"}));
    if (const std::string effect = JsonText(t, {"effect"}); !effect.empty()) text += ":" + effect;
    out.push_back(std::move(text));
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// argv as a shell would show it: items with spaces quoted.
std::string CommandLine(const Json& task) {
  std::vector<std::string> words;
  for (const char* key : {"command", "args"}) {
    for (const Json& word : JsonArray(task, {key})) {
      std::string w = word.is_string() ? word.get<std::string>() : DumpJson(word);
      if (w.empty() || w.find_first_of(" \t'\"") != std::string::npos) {
        w.insert(0, 1, '\'');
        w += '\'';
      }
      words.push_back(std::move(w));
    }
  }
  return words.empty() ? "-" : fmt::format("{}", fmt::join(words, " "));
}

// "2026-11-29T10:00:00Z (5m ago)", "... (in 3m)"; "-" when absent.
std::string When(const std::string& time, TimePoint now) {
  if (time.empty()) return "-";
  std::optional<TimePoint> t = ParseRfc3339(time);
  if (!t) return time;
  if (*t <= now) return fmt::format("{} ({} ago)", time, FormatAge(now - *t));
  return fmt::format("{} (in {})", time, FormatAge(*t - now));
}

std::string OrZero(std::string text) { return text.empty() ? "0" : text; }

void Field(std::ostream& out, std::string_view name, std::string_view value) {
  out << fmt::format("{:<18}{}\n", fmt::format("{}:", name), SafeCell(value.empty() ? "-" : value));
}

void Indented(std::ostream& out, const Table& table) {
  const std::string text = table.Render();
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out << "  " << text.substr(start, end - start + 1);
    start = end + 1;
  }
}

void PrintSpec(const Json& job, TimePoint now, std::ostream& out) {
  Field(out, "Name", JsonText(job, {"metadata", "name"}));
  Field(out, "ID", JsonText(job, {"metadata", "id"}));
  Field(out, "Tenant", JsonText(job, {"metadata", "tenant"}));
  Field(out, "Labels", KeyValues(job, {"metadata", "labels"}));
  Field(out, "Queue", JsonText(job, {"spec", "queue"}));
  Field(out, "Priority", JsonText(job, {"spec", "priority"}));
  Field(out, "Phase", JsonText(job, {"status", "phase"}));
  if (JsonAt(job, {"status", "preemptions"}) != nullptr) {
    Field(out, "Preemptions", JsonText(job, {"status", "preemptions"}));
  }
  Field(out, "Reason", JsonText(job, {"status", "reason"}));
  Field(out, "Message", JsonText(job, {"status", "message"}));
  Field(out, "Cluster", JsonText(job, {"status", "cluster"}));
  Field(out, "Submitted", When(JsonText(job, {"status", "submitTime"}), now));
  Field(out, "Started", When(JsonText(job, {"status", "startTime"}), now));
  Field(out, "Ended", When(JsonText(job, {"status", "endTime"}), now));
  Field(out, "Time limit", JsonText(job, {"spec", "timeLimit"}));
  if (JsonAt(job, {"spec", "duration"}) != nullptr) {
    Field(out, "Duration", JsonText(job, {"spec", "duration"}));
  }
  int64_t total = 0;
  for (const Json& group : JsonArray(job, {"spec", "tasks"})) {
    total += static_cast<int64_t>(JsonNumber(group, {"replicas"}).value_or(1));
  }
  const std::string gang = JsonText(job, {"spec", "minAvailable"});
  Field(out, "Gang",
        fmt::format("{} of {} task(s) start together", gang.empty() ? std::to_string(total) : gang,
                    total));
  Field(out, "Preemptible", JsonText(job, {"spec", "preemptible"}));
  Field(out, "Node selector", KeyValues(job, {"spec", "nodeSelector"}));
  Field(out, "Cluster selector", KeyValues(job, {"spec", "clusterSelector"}));
  const Json* tolerations = JsonAt(job, {"spec", "tolerations"});
  Field(out, "Tolerations", Tolerations(tolerations != nullptr ? *tolerations : Json()));

  Table groups({"GROUP", "REPLICAS", "CPU", "MEMORY", "GPU", "GPU MODEL", "COMMAND"});
  for (const Json& group : JsonArray(job, {"spec", "tasks"})) {
    const auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    groups.AddRow({JsonText(group, {"name"}), or_dash(JsonText(group, {"replicas"})),
                   or_dash(JsonText(group, {"resources", "cpu"})),
                   or_dash(JsonText(group, {"resources", "memory"})),
                   or_dash(JsonText(group, {"resources", "gpu"})),
                   Items(group, {"resources", "gpuModel"}), CommandLine(group)});
  }
  out << "Task groups:\n";
  Indented(out, groups);
}

void PrintTasks(const Json& job, std::ostream& out) {
  const Json& tasks = JsonArray(job, {"status", "tasks"});
  if (tasks.empty()) return;
  Table table({"TASK", "PHASE", "NODE", "DEVICES", "EXIT CODE"});
  for (const Json& task : tasks) {
    const std::string node = JsonText(task, {"node"});
    const std::string exit_code = JsonText(task, {"exitCode"});
    table.AddRow({JsonText(task, {"name"}), JsonText(task, {"phase"}), node.empty() ? "-" : node,
                  Items(task, {"devices"}), exit_code.empty() ? "-" : exit_code});
  }
  out << "Tasks:\n";
  Indented(out, table);
}

// "0/4 nodes: 3 insufficient gpu, 1 node(s) had untolerated taint".
std::string NodeSummary(const Json& explanation) {
  std::vector<std::string> parts;
  for (const Json& r : JsonArray(explanation, {"rejections"})) {
    parts.push_back(fmt::format("{} {}", JsonText(r, {"nodes"}), JsonText(r, {"reason"})));
  }
  const std::string total = JsonText(explanation, {"totalNodes"});
  if (parts.empty())
    return fmt::format("0/{} nodes: no reason recorded", total.empty() ? "?" : total);
  return fmt::format("0/{} nodes: {}", total.empty() ? "?" : total, fmt::join(parts, ", "));
}

// "2026-11-29T10:05:00Z (in 5m)"; "(now)" for a time already reached.
std::string StartText(const std::string& time, TimePoint now) {
  std::optional<TimePoint> t = ParseRfc3339(time);
  if (!t) return time;
  if (*t <= now) return fmt::format("{} (now)", time);
  return fmt::format("{} (in {})", time, FormatAge(*t - now));
}

void PrintExplanation(const Json& explanation, TimePoint now, std::ostream& out) {
  const auto line = [&out](std::string_view name, std::string_view value) {
    out << fmt::format("  {:<20}{}\n", fmt::format("{}:", name),
                       SafeCell(value.empty() ? "-" : value));
  };
  out << "Why pending:\n";
  const std::string message = JsonText(explanation, {"message"});
  line("Reason", JsonText(explanation, {"reason"}));
  line("Message", message);
  // Only a job that found no node has node counts (not one waiting for quota, say).
  if (JsonNumber(explanation, {"totalNodes"}).value_or(0) > 0 ||
      !JsonArray(explanation, {"rejections"}).empty()) {
    line("Nodes", NodeSummary(explanation));
  }
  const Json* estimate = JsonAt(explanation, {"estimate"});
  if (estimate == nullptr || !estimate->is_object()) {
    line("Estimated start", "unknown");
    return;
  }
  const std::string start = JsonText(*estimate, {"startTime"});
  const std::string blocker = JsonText(*estimate, {"blocker"});
  if (!start.empty()) {
    line("Estimated start", StartText(start, now));
  } else if (blocker == "NoFit") {
    line("Estimated start", "never on the clusters there are now (even with every node empty)");
  } else {
    line("Estimated start", "unknown (waits on jobs without a time limit)");
  }
  if (!blocker.empty()) {
    // The detail is left out when it only repeats the message above.
    const std::string detail = JsonText(*estimate, {"message"});
    line("Blocked by",
         detail.empty() || detail == message ? blocker : fmt::format("{}: {}", blocker, detail));
  }
  line("Position in queue", OrZero(JsonText(*estimate, {"position"})));
}

void PrintEvents(const Json& events, std::ostream& out) {
  const Json& items = JsonArray(events, {"items"});
  out << "Events:";
  if (items.empty()) {
    out << " none\n";
    return;
  }
  out << "\n";
  Table table({"TIME", "TYPE", "PHASE", "REASON", "MESSAGE"});
  for (const Json& e : items) {
    table.AddRow({JsonText(e, {"time"}), JsonText(e, {"type"}), JsonText(e, {"phase"}),
                  JsonText(e, {"reason"}), JsonText(e, {"message"})});
  }
  Indented(out, table);
}

}  // namespace

int RunDescribeCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string id;
  CLI::App app{
      "Describe a job: its spec, status, tasks, events and, while it is pending, why "
      "it waits.\n\nExample:\n  tessera describe 42",
      "tessera describe"};
  app.add_option("id", id, "The job's id")->required();
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  absl::StatusOr<Json> job = client->GetJson(JobPath(id));
  if (!job.ok()) return ReportApiError(job.status(), *env.err);
  absl::StatusOr<Json> events = client->GetJson(JobPath(id, "/events"));
  if (!events.ok()) return ReportApiError(events.status(), *env.err);
  std::optional<Json> explanation;
  if (JsonText(*job, {"status", "phase"}) == "Pending") {
    absl::StatusOr<Json> explained = client->GetJson(JobPath(id, "/explain"));
    if (!explained.ok()) return ReportApiError(explained.status(), *env.err);
    explanation = std::move(*explained);
  }
  const TimePoint now = env.clock->Now();
  std::ostream& out = *env.out;
  PrintSpec(*job, now, out);
  PrintTasks(*job, out);
  if (explanation) PrintExplanation(*explanation, now, out);
  PrintEvents(*events, out);
  return kExitOk;
}

}  // namespace tessera::cli

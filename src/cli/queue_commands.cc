#include "cli/queue_commands.h"

#include <fstream>
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

// Queue documents are at most 1 MiB (the API's limit); a bigger file is refused unread.

// "gpu=16,cpu=64"; "-" when empty.
std::string Quantities(const Json& queue, std::string_view key) {
  const Json* list = JsonAt(queue, {key});
  if (list == nullptr || !list->is_object() || list->empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& [name, value] : list->items()) {
    parts.push_back(fmt::format("{}={}", name,
                                value.is_string()   ? value.get<std::string>()
                                : value.is_number() ? FormatNumber(value.get<double>())
                                                    : DumpJson(value)));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string OrDash(std::string text) { return text.empty() ? "-" : text; }

std::vector<std::string> QueueRow(const Json& queue, bool wide) {
  const Json* borrowing = JsonAt(queue, {"borrowing"});
  std::vector<std::string> row = {
      JsonText(queue, {"name"}),
      OrDash(JsonText(queue, {"parent"})),
      Quantities(queue, "guaranteed"),
      Quantities(queue, "usage"),
      borrowing != nullptr && borrowing->is_boolean() && borrowing->get<bool>() ? "yes" : "no",
      FormatNumber(JsonNumber(queue, {"share"}).value_or(0)),
      OrDash(JsonText(queue, {"pendingJobs"})),
      OrDash(JsonText(queue, {"admittedJobs"})),
      OrDash(JsonText(queue, {"runningJobs"}))};
  if (wide) {
    row.push_back(OrDash(JsonText(queue, {"weight"})));
    row.push_back(OrDash(JsonText(queue, {"priority"})));
    row.push_back(OrDash(JsonText(queue, {"ordering"})));
    row.push_back(Quantities(queue, "borrowingLimit"));
    row.push_back(Quantities(queue, "lendingLimit"));
  }
  return row;
}


int ApplyTree(RestClient& client, const std::string& file, const CommandEnv& env) {
  absl::StatusOr<std::string> text = ReadDocumentFile(file);
  if (!text.ok()) return ReportUsageError(std::string(text.status().message()), *env.err);
  const bool json = file.ends_with(".json");
  absl::StatusOr<Json> applied =
      client.PutJson("/api/v1/queues", *text, json ? "application/json" : "application/yaml");
  if (!applied.ok()) return ReportApiError(applied.status(), *env.err);
  *env.out << fmt::format("queue tree applied: {} queue(s)\n",
                          JsonArray(*applied, {"items"}).size());
  return kExitOk;
}

int Delete(RestClient& client, const std::string& name, const CommandEnv& env) {
  absl::StatusOr<Json> left = client.DeleteJson("/api/v1/queues/" + PercentEncode(name));
  if (!left.ok()) return ReportApiError(left.status(), *env.err);
  *env.out << fmt::format("queue {} deleted\n", name);
  return kExitOk;
}

}  // namespace

int RunQueuesCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string output;
  CLI::App app{
      "List the queue tree, parents before children, with what each queue is guaranteed, "
      "uses and holds.\n\nExamples:\n  tessera queues\n  tessera queues -o wide\n"
      "  tessera queues -o yaml",
      "tessera queues"};
  app.add_option("-o,--output", output, "Output format: table (default), wide, json or yaml");
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok()) return ReportUsageError(std::string(format.status().message()), *env.err);
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  absl::StatusOr<Json> queues = client->GetJson("/api/v1/queues");
  if (!queues.ok()) return ReportApiError(queues.status(), *env.err);
  if (*format == OutputFormat::kJson || *format == OutputFormat::kYaml) {
    *env.out << RenderStructured(*queues, *format);
    return kExitOk;
  }
  const bool wide = *format == OutputFormat::kWide;
  std::vector<std::string> headers = {"NAME",  "PARENT",  "GUARANTEED", "USAGE",  "BORROWING",
                                      "SHARE", "PENDING", "ADMITTED",   "RUNNING"};
  if (wide) {
    headers.insert(headers.end(), {"WEIGHT", "PRIORITY", "ORDERING", "BORROW-LIMIT", "LEND-LIMIT"});
  }
  Table table(std::move(headers));
  for (const Json& queue : JsonArray(*queues, {"items"})) table.AddRow(QueueRow(queue, wide));
  *env.out << table.Render();
  return kExitOk;
}

int RunQueueCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string file;
  std::string name;
  CLI::App app{"Change the queue tree (admin tokens only).", "tessera queue"};
  app.require_subcommand(1);
  CLI::App* apply = app.add_subcommand(
      "apply",
      "Replace the whole queue tree with a file's ({\"queues\": [...]}, YAML or JSON; "
      "docs/server.md). Queues with unfinished jobs must stay leaves.\n\n"
      "Example:\n  tessera queue apply -f queues.yaml");
  apply->add_option("-f,--file", file, "The queue tree document")->required();
  AddClientFlags(*apply, &client_flags);
  CLI::App* remove = app.add_subcommand("delete",
                                        "Delete a leaf queue without unfinished jobs.\n\nExample:\n"
                                        "  tessera queue delete team-c");
  remove->add_option("name", name, "The queue's name")->required();
  AddClientFlags(*remove, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;
  if (apply->parsed()) return ApplyTree(*client, file, env);
  return Delete(*client, name, env);
}

}  // namespace tessera::cli

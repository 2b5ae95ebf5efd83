// `tessera logs`: see job_commands.h.
#include <charconv>
#include <string>

#include "cli/exit_status.h"
#include "cli/job_commands.h"
#include "cli/verb_common.h"

namespace tessera::cli {
namespace {

// How long `logs -f` waits before asking again when no new output came.
constexpr Duration kFollowPollInterval = std::chrono::seconds(1);

std::optional<int64_t> ParseOffset(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

int RunLogsCommand(int argc, char** argv, const CommandEnv& env) {
  ClientFlags client_flags;
  std::string id;
  std::string task;
  bool stderr_stream = false;
  bool follow = false;
  CLI::App app{
      "Print a task's output.\n\nExamples:\n  tessera logs 42\n"
      "  tessera logs 42 --task worker-1 --stderr\n  tessera logs 42 -f",
      "tessera logs"};
  app.add_option("id", id, "The job's id")->required();
  app.add_option("--task", task, "The task: worker-1 (default: the job's first task)");
  app.add_flag("--stderr", stderr_stream, "The task's standard error instead of its output");
  app.add_flag("-f,--follow", follow, "Keep printing new output until the task has ended");
  AddClientFlags(app, &client_flags);
  if (std::optional<int> rc = ParseVerbFlags(app, argc, argv, env)) return *rc;
  std::unique_ptr<RestClient> client = ConnectOrReport(client_flags, env);
  if (client == nullptr) return kExitUsage;

  int64_t offset = 0;
  while (true) {
    Query query;
    if (!task.empty()) query.emplace_back("task", task);
    query.emplace_back("stream", stderr_stream ? "stderr" : "stdout");
    query.emplace_back("offset", std::to_string(offset));
    absl::StatusOr<RawResponse> chunk = client->GetRaw(JobPath(id, "/logs"), query);
    if (!chunk.ok()) return ReportApiError(chunk.status(), *env.err);
    *env.out << chunk->body;
    env.out->flush();
    const int64_t next = ParseOffset(chunk->Header("X-Tessera-Next-Offset"))
                             .value_or(offset + static_cast<int64_t>(chunk->body.size()));
    const bool end = chunk->Header("X-Tessera-Log-End") == "true";
    const bool progressed = next > offset;
    offset = std::max(offset, next);
    if (end) break;
    if (!progressed) {
      if (!follow) break;
      env.sleep(kFollowPollInterval);
    }
  }
  return kExitOk;
}

}  // namespace tessera::cli

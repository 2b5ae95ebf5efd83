#include "cli/verb_common.h"

#include "cli/exit_status.h"

namespace tessera::cli {

std::optional<int> ParseVerbFlags(CLI::App& app, int argc, char** argv, const CommandEnv& env) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    *env.out << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    *env.err << "error: " << e.what() << "\n"
             << "Run '" << app.get_name() << " --help' for its options.\n";
    return kExitUsage;
  }
  return std::nullopt;
}

std::unique_ptr<RestClient> ConnectOrReport(const ClientFlags& flags, const CommandEnv& env) {
  absl::StatusOr<std::unique_ptr<RestClient>> client = MakeRestClient(flags, env);
  if (!client.ok()) {
    ReportUsageError(std::string(client.status().message()), *env.err);
    return nullptr;
  }
  return std::move(*client);
}

std::string JobPath(std::string_view id, std::string_view suffix) {
  return "/api/v1/jobs/" + PercentEncode(id) + std::string(suffix);
}

}  // namespace tessera::cli

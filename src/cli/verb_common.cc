#include "cli/verb_common.h"

#include <algorithm>
#include <fstream>
#include <string_view>

#include "cli/exit_status.h"
#include "fmt/format.h"

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

std::optional<int> ParseVerbFlagsAndCommand(CLI::App& app, int argc, char** argv,
                                            const CommandEnv& env,
                                            std::vector<std::string>* command) {
  char** const end = argv + argc;
  char** const dashes =
      std::find_if(argv + 1, end, [](const char* arg) { return std::string_view(arg) == "--"; });
  if (std::optional<int> rc = ParseVerbFlags(app, static_cast<int>(dashes - argv), argv, env)) {
    return rc;
  }
  if (dashes != end) command->insert(command->end(), dashes + 1, end);
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

absl::StatusOr<std::string> ReadDocumentFile(const std::string& path) {
  constexpr std::streamoff kMaxDocumentBytes = 1 << 20;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::InvalidArgumentError(fmt::format("-f: cannot read '{}'", path));
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::InvalidArgumentError(fmt::format("-f: cannot read '{}'", path));
  if (size > kMaxDocumentBytes) {
    return absl::InvalidArgumentError(
        fmt::format("-f: '{}' is larger than {} bytes", path, kMaxDocumentBytes));
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) {
    return absl::InvalidArgumentError(fmt::format("-f: cannot read '{}'", path));
  }
  return text;
}

}  // namespace tessera::cli

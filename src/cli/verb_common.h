// Helpers shared by the client verbs: parsing a verb's flags with CLI11 (help on the output
// stream, usage errors as exit status 2), making the RestClient from the shared flags, and
// reading the document a verb's -f names.
// Thread-compatible.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/client/client_flags.h"
#include "cli/client/rest_client.h"
#include "cli/command_env.h"

namespace tessera::cli {

// Parses argv (argv[0] is the verb). nullopt: parsed, go on; otherwise the exit status to
// return: 0 after printing --help, 2 after printing a usage error.
std::optional<int> ParseVerbFlags(CLI::App& app, int argc, char** argv, const CommandEnv& env);

// ParseVerbFlags for a verb that runs a command given after "--": only the arguments before the
// first "--" are the verb's flags; those after it are appended to *command verbatim, whatever
// they look like and whatever option precedes the "--". (CLI11 alone takes a "--" right after a
// repeatable option as the end of that option's values and goes on parsing flags after it.)
std::optional<int> ParseVerbFlagsAndCommand(CLI::App& app, int argc, char** argv,
                                            const CommandEnv& env,
                                            std::vector<std::string>* command);

// The client for the shared flags; nullptr after printing a usage error (bad --server).
std::unique_ptr<RestClient> ConnectOrReport(const ClientFlags& flags, const CommandEnv& env);

// The text of the file `-f PATH` names, of at most 1 MiB (the API's limit on a document; a
// bigger file is refused unread). InvalidArgument "-f: cannot read 'PATH'" or "-f: 'PATH' is
// larger than 1048576 bytes".
absl::StatusOr<std::string> ReadDocumentFile(const std::string& path);

// "/api/v1/jobs/<id><suffix>", the id percent-encoded.
std::string JobPath(std::string_view id, std::string_view suffix = "");

}  // namespace tessera::cli

#include "cli/client/client_flags.h"

#include <utility>

#include "absl/status/status.h"
#include "tessera/common/status_macros.h"

namespace tessera::cli {

void AddClientFlags(CLI::App& app, ClientFlags* flags) {
  app.add_option(
      "--server", flags->server,
      "The API server's URL, or several separated by commas for the replicas of a highly "
      "available control plane (default: $TESSERA_SERVER, else "
      "http://127.0.0.1:8080)");
  app.add_option("--token", flags->token, "Bearer token (default: $TESSERA_TOKEN)");
}

absl::StatusOr<std::unique_ptr<RestClient>> MakeRestClient(const ClientFlags& flags,
                                                           const CommandEnv& env) {
  std::string server(kDefaultServer);
  std::string source = "--server";
  if (flags.server) {
    server = *flags.server;
  } else if (std::optional<std::string> from_env = env.getenv("TESSERA_SERVER");
             from_env && !from_env->empty()) {
    server = *from_env;
    source = "TESSERA_SERVER";
  }
  RestClientOptions options;
  TESSERA_ASSIGN_OR_RETURN(options.servers, ParseServerUrls(server, source));
  std::string token_source = "--token";
  if (flags.token) {
    options.token = *flags.token;
  } else if (std::optional<std::string> token = env.getenv("TESSERA_TOKEN")) {
    options.token = *token;
    token_source = "TESSERA_TOKEN";
  }
  for (char c : options.token) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      return absl::InvalidArgumentError(token_source +
                                        ": the token contains a space or control character");
    }
  }
  return std::make_unique<RestClient>(std::move(options));
}

}  // namespace tessera::cli

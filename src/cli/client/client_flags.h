// ClientFlags: the flags every client verb shares — where the server is and who is asking —
// and the RestClient they make.
//
//   --server URL[,URL…]  else $TESSERA_SERVER, else http://127.0.0.1:8080 (client/server_url.h);
//                  several URLs: the replicas of an HA control plane (client/rest_client.h)
//   --token TOKEN  else $TESSERA_TOKEN, else none (the server then answers 401)
// Thread-compatible.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/client/rest_client.h"
#include "cli/command_env.h"

namespace tessera::cli {

struct ClientFlags {
  std::optional<std::string> server;
  std::optional<std::string> token;
};

void AddClientFlags(CLI::App& app, ClientFlags* flags);

// InvalidArgument naming --server or TESSERA_SERVER for a URL that cannot be used.
absl::StatusOr<std::unique_ptr<RestClient>> MakeRestClient(const ClientFlags& flags,
                                                           const CommandEnv& env);

}  // namespace tessera::cli

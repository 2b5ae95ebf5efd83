// `tessera token create --tenant T [--role admin|tenant] [-o json]`: asks the server for a new
// bearer token (POST /api/v1/tokens; needs an admin token) and prints it alone on its line, or
// the whole answer as JSON. The token is shown once: the server keeps only its hash.
// Exit statuses: exit_status.h.
#pragma once

#include "cli/command_env.h"

namespace tessera::cli {

// `argv[0]` is "token".
int RunTokenCommand(int argc, char** argv, const CommandEnv& env);

}  // namespace tessera::cli

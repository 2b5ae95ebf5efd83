// `tessera server`: the control plane — the job manager and its scheduling loop over the
// configured clusters, the SQLite store, and the REST and gRPC APIs (docs/server.md).
//
//   tessera server --dev --data-dir DIR --http-addr 127.0.0.1:PORT --grpc-addr 127.0.0.1:PORT
//                  [--sim-nodes FILE]
//   tessera server --config tessera.yaml [flags overriding it]
//
// Runs until SIGINT or SIGTERM, then stops the APIs and the loop; tasks keep running and are
// adopted by the next start. Exit status: 0 after a signal, 1 when it cannot start (the reason
// on stderr), 2 for bad usage.
#pragma once

namespace tessera::cli {

int RunServerCommand(int argc, char** argv);

}  // namespace tessera::cli

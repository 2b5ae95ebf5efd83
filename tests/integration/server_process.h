// ServerProcess: a real `tessera server --dev` running as a child process of the test, on
// loopback ports the kernel picks, over a data directory the test owns.
//
// Start() spawns `tessera server --dev --data-dir DIR --http-addr 127.0.0.1:0 --grpc-addr
// 127.0.0.1:0 [extra args]` (`--config FILE` instead of `--dev` when a config file is given) with
// stdout and stderr in LOG_DIR/server-<n>.log (n counts the starts of every server in the test
// process), reads the bound REST and gRPC ports from the line the server prints once it serves,
// waits for GET /readyz to answer 200 and reads DIR/admin.token. Port 0 means no port race with
// other tests; ports change on every start, so clients ask for them after each Start(). Stop()
// sends SIGTERM and, after a grace period, SIGKILL; Kill() sends SIGKILL at once (the crash test's
// "power cut"). The destructor stops a running server and then kills what its local cluster left
// running: the server leaves tasks running by design (a restart adopts them), but a test must not
// leave processes behind. The server gets SIGKILL when the test process dies (PR_SET_PDEATHSIG), so
// a test killed by a timeout leaves no server behind.
//
// The binary is TesseraBinary(): $TESSERA_BINARY, else the path CMake compiled in.
// Errors: Start() returns Unavailable / DeadlineExceeded with the server's log in the message.
// Thread-safety: the accessors may be read from any thread while no Start/Stop/Kill runs;
// Start/Stop/Kill belong to one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tessera::integration {

// The tessera binary under test.
std::string TesseraBinary();

struct ServerOptions {
  std::string data_dir;  // required: the store, task logs, admin.token
  std::string log_dir;   // required: server-<n>.log, one per start
  // A configuration file (docs/server.md): `--config FILE` instead of `--dev`; --data-dir and
  // the addresses still come from the flags.
  std::string config_path;
  std::vector<std::string> extra_args;  // appended: {"--rate-limit", "0"}, ...
  // Restarts serve gRPC on the port of the first start, so that agents given grpc_target()
  // find the restarted server.
  bool keep_grpc_port = false;
  // Fixed ports (0: the kernel picks): the replicas of an HA control plane, whose addresses
  // agents and clients must know before they are elected.
  int http_port = 0;
  int grpc_port = 0;
};

class ServerProcess {
 public:
  explicit ServerProcess(ServerOptions options);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Spawns the server and waits (up to `timeout`) until it serves and is ready.
  // REQUIRES: not running.
  absl::Status Start(std::chrono::seconds timeout = std::chrono::seconds(120));
  // Only spawns the server, without waiting for anything: for killing it while it starts
  // (recovers its state), or a standby replica. Follow with AwaitStarted(), Kill() or Stop().
  // REQUIRES: not running.
  absl::Status Spawn();
  // After Spawn: waits (up to `timeout`) until the server serves and is ready (a replica: once
  // it is elected) and reads its admin token.
  absl::Status AwaitStarted(std::chrono::seconds timeout);
  // Whether the process has exited (reaped); its wait status in `status` when it has.
  bool Exited(int* status = nullptr);
  // SIGTERM, then SIGKILL when it has not exited after `grace`. Returns the wait status
  // (waitpid's), -1 when it was not running.
  int Stop(std::chrono::seconds grace = std::chrono::seconds(30));
  // SIGKILL and reap. No-op when not running.
  void Kill();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& host() const { return host_; }
  int http_port() const { return http_port_; }
  int grpc_port() const { return grpc_port_; }
  std::string grpc_target() const;  // "127.0.0.1:PORT"
  const std::string& admin_token() const { return admin_token_; }
  const std::string& data_dir() const { return options_.data_dir; }
  const ServerOptions& options() const { return options_; }
  // The current (or last) start's log.
  std::string Log() const;

 private:
  absl::Status AwaitServing(std::chrono::steady_clock::time_point deadline);
  absl::Status AwaitReady(std::chrono::steady_clock::time_point deadline);
  // Reaps the child when it has exited; returns whether it has.
  bool Reaped();

  int wait_status_ = -1;
  ServerOptions options_;
  pid_t pid_ = -1;
  std::string log_path_;
  std::string host_ = "127.0.0.1";
  int http_port_ = 0;
  int grpc_port_ = 0;
  int first_grpc_port_ = 0;  // the gRPC port of the first start; 0 before it
  std::string admin_token_;
};

}  // namespace tessera::integration

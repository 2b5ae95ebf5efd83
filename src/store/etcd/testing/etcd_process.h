// EtcdProcess: a real etcd server (Debian's etcd-server, /usr/bin/etcd or $TESSERA_ETCD) started
// by a test on loopback: one member, in a temporary data directory, on free ports. Test-only.
//
// Start waits until the member answers (at most 30 s). Kill ends it at once (SIGKILL, a crash);
// Restart starts it again on the same data and ports. The destructor kills it and removes its
// data directory. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::store::testing {

class EtcdProcess {
 public:
  // Errors: FailedPrecondition when no etcd binary is installed; Unavailable when it does not
  // come up.
  static absl::StatusOr<std::unique_ptr<EtcdProcess>> Start();
  ~EtcdProcess();

  // "127.0.0.1:PORT": what EtcdStoreOptions::endpoints takes.
  const std::string& endpoint() const { return endpoint_; }

  void Kill();
  // Errors: as Start.
  absl::Status Restart();

 private:
  EtcdProcess() = default;
  // Starts the binary with args_ and waits until it answers.
  absl::Status Run();

  pid_t pid_ = -1;
  std::string data_dir_;
  std::string endpoint_;
  std::vector<std::string> args_;
};

}  // namespace tessera::store::testing

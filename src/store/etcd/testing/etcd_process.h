// EtcdProcess: a real etcd cluster (Debian's etcd-server, /usr/bin/etcd or $TESSERA_ETCD)
// started by a test on loopback: `members` members (1 by default; 3 for a cluster that keeps a
// quorum when one fails), each in its own folder of one temporary directory, on free ports.
// With `mutual_tls`, the members serve clients over TLS only and require a client certificate
// (etcd's --client-cert-auth): a CA, a server certificate for 127.0.0.1 and a client
// certificate are made with the openssl command in the directory's pki/ folder. Test-only.
//
// Start waits until every member answers (at most 30 s). Kill(m) ends member m at once
// (SIGKILL, a crash); Restart(m) starts it again on its data and ports and waits for it. The
// destructor kills every member and removes the directory. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/etcd/etcd_store_options.h"

namespace tessera::store::testing {

class EtcdProcess {
 public:
  // Errors: FailedPrecondition when no etcd binary (or, for TLS, no openssl) is installed;
  // Unavailable when a member does not come up; Internal when the certificates cannot be made.
  static absl::StatusOr<std::unique_ptr<EtcdProcess>> Start(int members = 1,
                                                            bool mutual_tls = false);
  ~EtcdProcess();

  // Member 0's "127.0.0.1:PORT", and every member's: what EtcdStoreOptions::endpoints takes.
  const std::string& endpoint() const { return members_.front().endpoint; }
  std::vector<std::string> endpoints() const;
  // What a client needs: every endpoint, and with mutual TLS the CA and the client certificate.
  EtcdStoreOptions ClientOptions() const;
  // The folder of the certificates ("" without TLS): ca.crt, client.crt, client.key, ...
  const std::string& pki_dir() const { return pki_dir_; }

  // REQUIRES: 0 <= member < the number of members.
  void Kill(int member = 0);
  // Errors: as Start.
  absl::Status Restart(int member = 0);

 private:
  struct Member {
    std::string endpoint;
    std::string log;
    std::vector<std::string> args;
    pid_t pid = -1;
  };
  EtcdProcess() = default;
  // Starts the member's binary without waiting.
  absl::Status Spawn(Member& member);
  // Waits until the member answers.
  absl::Status AwaitServing(Member& member);
  // Makes pki_dir_ and the certificates in it.
  absl::Status MakeCertificates();

  std::string dir_;
  std::string pki_dir_;
  std::vector<Member> members_;
};

}  // namespace tessera::store::testing

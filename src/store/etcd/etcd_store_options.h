// EtcdStoreOptions: how to reach an etcd cluster (endpoints, TLS files, request timeout) and
// the etcd store's own bounds. The leader election (etcd_election.h) reaches etcd the same way.
//
// Endpoints: "host:port" each; several (IPv4 addresses) are handed to gRPC as one target that
// fails over between them; a single one may be a host name. TLS: with `ca_file`, the connection
// is TLS verified against that CA, with a client certificate when `cert_file` and `key_file` are
// given. Plain value type.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tessera/common/clock.h"
#include "tessera/store/txn.h"

namespace tessera::store {

struct EtcdStoreOptions {
  std::vector<std::string> endpoints;  // "host:port", at least one
  std::string ca_file;                 // PEM; empty: plaintext
  std::string cert_file;               // PEM client certificate (with ca_file)
  std::string key_file;                // PEM client key (with cert_file)
  Duration request_timeout{5000};
  size_t max_queued_txns = 10000;     // CommitAsync's queue
  size_t watch_buffer_events = 1024;  // per watcher, before etcd is held back
  TxnLimits limits{.max_value_bytes = 1536 * 1024 - 4096,
                   .max_entries = 128,
                   .max_total_bytes = 1536 * 1024 - 4096};
};

}  // namespace tessera::store

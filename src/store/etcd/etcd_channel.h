// OpenEtcdChannel: the gRPC channel to an etcd cluster that the etcd store and the leader
// election share the settings of (EtcdStoreOptions: endpoints, TLS, request timeout).
//
// Several endpoints (IPv4 addresses) become one target that fails over between them (within
// about 0.1 s: the reconnect back-off starts at 100 ms and stays under 1 s); a single one may be
// a host name. With `ca_file` the connection is TLS verified against that CA, with a
// client certificate when `cert_file` and `key_file` are given.
// Errors: InvalidArgument naming the field for unreadable PEM files or a key without a
// certificate; Unavailable when no endpoint connects within `request_timeout`.
// Thread-safe (a pure function; the channel is thread-safe).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "store/etcd/etcd_store_options.h"

namespace tessera::store::etcd {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenEtcdChannel(const EtcdStoreOptions& options);

}  // namespace tessera::store::etcd

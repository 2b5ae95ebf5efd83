// Translation between the store's types (tessera/store/*.h) and etcd's v3 messages
// (proto/etcd/etcdserverpb/rpc.proto), for the etcd backend.
//
// Revisions: etcd counts its empty keyspace as revision 1, the store as revision 0, so a store
// revision is etcd's minus one (kRevisionOffset) in both directions. Everything else maps one to
// one: compares, puts, deletes, delete-prefix (a DeleteRange to PrefixEnd), key-value
// bookkeeping and events.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "etcd/etcdserverpb/rpc.pb.h"
#include "grpcpp/support/status.h"
#include "tessera/store/event.h"
#include "tessera/store/key_value.h"
#include "tessera/store/store.h"
#include "tessera/store/txn.h"

namespace tessera::store::etcd {

inline constexpr Revision kRevisionOffset = 1;

inline Revision FromEtcdRevision(int64_t revision) {
  return revision > 0 ? revision - kRevisionOffset : 0;
}
inline int64_t ToEtcdRevision(Revision revision) { return revision + kRevisionOffset; }

KeyValue FromEtcd(const mvccpb::KeyValue& kv);
Event FromEtcd(const mvccpb::Event& event);

etcdserverpb::TxnRequest ToEtcd(const Txn& txn);
// The transaction's outcome: whether its compares held, its revision, the keys it deleted.
TxnResult FromEtcd(const etcdserverpb::TxnResponse& response);

// The Range request for the store's RangeRequest: keys under `prefix`, after `after`, at most
// `limit`, in key order.
etcdserverpb::RangeRequest ToEtcd(const RangeRequest& request);

// "The range end" etcd expects for every key under `prefix`: PrefixEnd(prefix), or "\0" (every
// key from the start) when the prefix has no end.
std::string RangeEnd(const std::string& prefix);

// A gRPC status as the store's error. The codes are the same; a deadline that passed while
// committing is Unavailable (the outcome is unknown, as Store::Commit says), and the message
// says that etcd answered it.
absl::Status FromGrpc(const grpc::Status& status);

}  // namespace tessera::store::etcd

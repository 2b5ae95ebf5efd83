// EtcdStore: the state store (tessera/store/store.h) over a real etcd cluster's v3 API (gRPC),
// for a control plane that outgrows one machine's SQLite file. It passes the same conformance
// suite as the SQLite backend (src/store/testing/store_conformance.h).
//
// Mapping: Get and Range are etcd Range requests (linearizable reads); Commit is one etcd Txn
// (compares, puts, deletes and delete-prefix ranges map one to one); Watch is an etcd watch on
// the prefix's key range; Compact is an etcd compaction that returns once it is physically
// done. Revisions are etcd's minus one (etcd counts its empty keyspace as revision 1): an etcd
// cluster should serve one control plane, since every write to it moves the revision.
//
// Durability: etcd acknowledges a Txn once a quorum of its members has it in their logs, on
// disk; Commit returns after that acknowledgement. CommitAsync hands transactions to one
// committer thread that sends them to etcd one Txn at a time, in the order they were admitted,
// so a caller's writes commit in the order it made them (the job manager relies on that); at
// most `max_queued_txns` wait (one more: ResourceExhausted). The transactions that queued while
// one Txn was on its way go together as the next one where that is equivalent to sending them in
// order (txn_batch.h); they then share a revision.
//
// Limits: `limits` must not exceed etcd's own (--max-request-bytes, 1.5 MiB by default, and
// --max-txn-ops, 128 by default); the defaults below are etcd's defaults. Transactions are
// checked against them before they are sent (InvalidArgument naming the field).
//
// Endpoints and TLS: see etcd_store_options.h and etcd_channel.h.
//
// Errors: as Store; Unavailable when etcd cannot be reached within `request_timeout` (also at
// Open, which reads once to check), and for a Commit whose answer did not come in time (the
// outcome is unknown: re-read before retrying).
// Thread-safety: as Store. Destroying the store finishes the queued transactions and ends
// live watchers with Unavailable.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "etcd/etcdserverpb/rpc.grpc.pb.h"
#include "store/etcd/etcd_store_options.h"
#include "tessera/store/store.h"

namespace tessera::store {

namespace etcd {
class EtcdWatcher;
class TxnBatch;
}  // namespace etcd

class EtcdStore final : public Store {
 public:
  // Connects and reads once. Errors: InvalidArgument for bad options (no endpoint, a key file
  // without a certificate, unreadable PEM files), Unavailable when etcd does not answer.
  static absl::StatusOr<std::unique_ptr<EtcdStore>> Open(EtcdStoreOptions options);
  ~EtcdStore() override;

  absl::StatusOr<std::optional<KeyValue>> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(const RangeRequest& request) override;
  absl::StatusOr<TxnResult> Commit(Txn txn) override;
  absl::Status CommitAsync(Txn txn, TxnCallback done) override;
  absl::StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix,
                                                 Revision from_revision) override;
  TxnLimits limits() const override { return options_.limits; }
  absl::Status Compact(Revision revision) override;

 private:
  struct Queued {
    Txn txn;
    TxnCallback done;
  };
  explicit EtcdStore(EtcdStoreOptions options) : options_(std::move(options)) {}
  absl::Status Connect();
  absl::StatusOr<etcdserverpb::TxnResponse> SendTxn(const Txn& txn);
  absl::StatusOr<TxnResult> Send(const Txn& txn);
  void CommitLoop();
  // Commits the queued transactions `taken`, gathered in `batch`, and calls back each.
  void CommitBatch(const etcd::TxnBatch& batch, std::vector<Queued>& taken);
  void SetDeadline(grpc::ClientContext& context) const;
  // OutOfRange when etcd revision `start` (0: the next one) is compacted away; etcd itself
  // would say so only after the watch is created.
  absl::Status CheckNotCompacted(const std::string& prefix, int64_t start);

  EtcdStoreOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<etcdserverpb::KV::Stub> kv_;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch_;

  std::mutex mu_;
  std::condition_variable queued_;
  std::deque<Queued> queue_;
  bool closing_ = false;
  // Live watchers, to end at close (a watcher may outlive the store).
  std::vector<std::weak_ptr<etcd::EtcdWatcher>> watchers_;
  std::thread committer_;
};

}  // namespace tessera::store

// TxnBatch: consecutive transactions of the etcd store's CommitAsync queue gathered into one
// etcd Txn when that commits exactly what sending them one after the other would.
//
// etcd evaluates a Txn's compares before any of its operations, and refuses a Txn that writes a
// key twice. So transactions t1..tn (in queue order) are merged only while:
//   - none has failure operations (a merged Txn has one failure branch);
//   - no compare of a later one is on a key an earlier one writes (put, delete, or under a
//     deleted prefix): every compare then sees in the merged Txn what it would see in order;
//   - no key is written by two of them (nor under a prefix another deletes): the order of the
//     operations then does not matter;
//   - the whole stays within the store's TxnLimits (etcd's 128 operations and request size).
// Identical compares are sent once (the fencing compare every leader write carries).
// When the merged Txn's compares hold, each transaction's result is the merged Txn's revision,
// with its own count of deleted keys. When they do not, none was applied, and the caller sends
// each transaction alone, in order, to learn which fail.
//
// The transactions of one batch share a revision (tessera/store/store.h allows that of
// transactions queued with CommitAsync). Thread-compatible.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "etcd/etcdserverpb/rpc.pb.h"
#include "tessera/store/txn.h"

namespace tessera::store::etcd {

class TxnBatch {
 public:
  explicit TxnBatch(TxnLimits limits) : limits_(limits) {}

  // Adds `txn` when the batch stays equivalent to sending its transactions in order; false
  // (and the batch unchanged) otherwise. The first transaction always joins.
  bool Add(const Txn& txn);
  size_t size() const { return ends_.size(); }
  // The merged transaction.
  const Txn& merged() const { return merged_; }
  // Each transaction's result, in the order they were added, from the merged Txn's answer.
  // REQUIRES: response.succeeded().
  std::vector<TxnResult> Split(const etcdserverpb::TxnResponse& response) const;

 private:
  // Whether `key` is written by the batch: put or deleted, or under a deleted prefix.
  bool Writes(const std::string& key) const;
  // Whether `op` writes a key the batch writes.
  bool Overlaps(const Op& op) const;
  void Note(const Op& op);

  TxnLimits limits_;
  Txn merged_;
  std::vector<size_t> ends_;        // per transaction, the end of its operations in merged_.success
  std::set<std::string> keys_;      // put or deleted
  std::set<std::string> prefixes_;  // deleted prefixes
  size_t bytes_ = 0;
  bool closed_ = false;  // the first transaction has failure operations
};

}  // namespace tessera::store::etcd

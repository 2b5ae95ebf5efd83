// FencedStore: a Store whose writes take effect only while a fencing compare holds — the
// leader's term from its election (etcd/etcd_election.h: EtcdElection::Fence) — so that a
// replica deposed without knowing it (paused or cut off past its lease) cannot write over its
// successor. The fencing token of Chubby and of Kleppmann's "How to do distributed locking";
// etcd's concurrency.Election guards a leader's writes with the same compare.
//
// Every Commit and CommitAsync gets the fence as one more compare. A transaction must have no
// failure branch (InvalidArgument "failure: ...": a failed fence would run it). When a
// transaction does not succeed, the fence is read back: if it no longer holds, the write fails
// with FailedPrecondition ("fenced: ...") and `on_fenced` is called (once, on the thread that
// found it: the caller's, or the inner store's callback thread); if it still holds, the
// caller's own compares failed, and the result is returned as the inner store gave it.
// Reads, watches, limits and compaction go to the inner store unchanged.
//
// Thread-safety: as Store. `inner` must outlive the FencedStore.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>

#include "tessera/store/store.h"

namespace tessera::store {

class FencedStore final : public Store {
 public:
  FencedStore(Store* inner, Compare fence, std::function<void()> on_fenced);

  absl::StatusOr<std::optional<KeyValue>> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(const RangeRequest& request) override;
  absl::StatusOr<TxnResult> Commit(Txn txn) override;
  absl::Status CommitAsync(Txn txn, TxnCallback done) override;
  absl::StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix,
                                                 Revision from_revision) override;
  TxnLimits limits() const override;
  absl::Status Compact(Revision revision) override;

 private:
  // The transaction with the fence added; InvalidArgument when it has a failure branch.
  absl::StatusOr<Txn> Fenced(Txn txn) const;
  // What a committed transaction's caller gets: `result`, or FailedPrecondition when it failed
  // because the fence no longer holds.
  absl::StatusOr<TxnResult> Checked(absl::StatusOr<TxnResult> result);

  Store* inner_;
  Compare fence_;
  std::function<void()> on_fenced_;
  std::atomic<bool> fenced_{false};
};

}  // namespace tessera::store

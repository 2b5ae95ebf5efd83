// Store: the control plane's durable state — a revisioned key-value store with atomic
// conditional transactions and prefix watches, shaped after etcd's KV and Watch APIs so that
// an embedded SQLite backend and an etcd backend serve the same callers and pass the same
// conformance suite (src/store/testing/store_conformance.h).
//
// Model (see key_value.h, txn.h, event.h, watcher.h):
//   - keys are byte strings ordered bytewise; values are opaque bytes;
//   - every transaction that changes at least one key gets the next global revision
//     (1, 2, 3, ...); all its changes carry that revision. Transactions queued with CommitAsync
//     may be committed together, as one, and then share a revision (the etcd backend does so
//     where that is equivalent to committing them in order: etcd/txn_batch.h);
//   - the change history is retained until Compact(revision) discards it; watches replay it.
//
// Durability: Commit returns (and CommitAsync calls back) only after the transaction is durably
// committed — it survives a crash of the process and, with the backend's default settings, of
// the machine. A caller may therefore acknowledge a submission or send a binding as soon as
// its transaction returns OK (DESIGN.md §4 rule 6). When Commit returns an error the transaction
// did not commit, except for Unavailable/Internal/DataLoss raised while committing, where the
// outcome is unknown (as with any remote store): re-read before retrying.
//
// Thread-safety: every method may be called from any thread, concurrently. Writes are
// linearised in revision order; a read issued after a write returned sees that write.
//
// Error codes (absl canonical codes; they map one to one onto gRPC and HTTP statuses):
//   InvalidArgument     a malformed request: empty key, duplicate key in a branch, a size
//                       limit exceeded, a negative revision or limit;
//   ResourceExhausted   back-pressure: the store's bounded write queue is full (retry later)
//                       or the disk is full;
//   OutOfRange          a revision that is compacted away or lies in the future (Watch,
//                       Compact);
//   FailedPrecondition  the store cannot be used in its current state (e.g. its data
//                       directory is held by another process, or holds a newer schema);
//   Unavailable         the store is closing or closed, or transiently busy;
//   PermissionDenied    the data cannot be written (read-only file or directory);
//   DataLoss            the data is corrupt;
//   Internal            an unexpected storage failure (e.g. an I/O error while syncing).
// A compare that does not hold is not an error (TxnResult::succeeded == false).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/store/key_value.h"
#include "tessera/store/txn.h"
#include "tessera/store/watcher.h"

namespace tessera::store {

struct RangeRequest {
  // Every key that starts with `prefix` ("" = every key).
  std::string prefix;
  // At most this many keys (0 = no limit).
  int64_t limit = 0;
  // Only keys ordered strictly after this one; pass the last key of the previous page to read
  // the next page. "" starts at the beginning.
  std::string after;
};

struct RangeResult {
  // The matching keys in bytewise key order.
  std::vector<KeyValue> kvs;
  // Whether `limit` cut the result short (more keys match after the last one returned).
  bool more = false;
  // The store's revision at the moment of the read; the result reflects exactly the
  // transactions up to it. Watch from revision + 1 to follow the keys from there on.
  Revision revision = 0;
};

class Store {
 public:
  // Called exactly once with the outcome of an admitted CommitAsync.
  using TxnCallback = std::function<void(absl::StatusOr<TxnResult>)>;

  virtual ~Store() = default;

  // The key's current state, or nullopt if it does not exist.
  virtual absl::StatusOr<std::optional<KeyValue>> Get(std::string_view key) = 0;

  // The keys under a prefix, consistently as of one revision.
  virtual absl::StatusOr<RangeResult> Range(const RangeRequest& request) = 0;

  // Runs `txn` atomically and returns once it is durably committed (see the contract above).
  // Errors: InvalidArgument, ResourceExhausted (queue full: nothing was written; retry with
  // back-off), Unavailable, and the storage failures listed above.
  virtual absl::StatusOr<TxnResult> Commit(Txn txn) = 0;

  // Like Commit, but does not wait. Returns OK when the transaction was admitted; `done` is then
  // called exactly once, after the durable commit (or with the error that prevented it), on a
  // thread of the store's — keep it short and never call the store's Commit from it.
  // Returns InvalidArgument, ResourceExhausted or Unavailable when the transaction was not
  // admitted; `done` is then never called. This is how a thread that must not block (the
  // scheduling loop) hands decisions to the store.
  virtual absl::Status CommitAsync(Txn txn, TxnCallback done) = 0;

  // Streams the changes under `prefix` from `from_revision` on (see watcher.h).
  // from_revision == 0 means "from the next revision to commit". Errors: InvalidArgument for
  // a negative revision; OutOfRange when from_revision is below the compaction revision.
  virtual absl::StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix,
                                                         Revision from_revision) = 0;

  // The size bounds Commit and CommitAsync enforce (InvalidArgument beyond them). The default
  // is etcd's; a backend configured otherwise answers its own.
  virtual TxnLimits limits() const { return TxnLimits{}; }

  // Discards the history of the revisions before `revision`: afterwards Watch accepts
  // from_revision >= `revision` only. Current keys are never affected. Durable on return.
  // Errors: OutOfRange when `revision` is above the current revision, or not above the
  // revision of an earlier compaction.
  virtual absl::Status Compact(Revision revision) = 0;
};

}  // namespace tessera::store

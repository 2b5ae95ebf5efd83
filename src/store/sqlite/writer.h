// Writer: the SQLite backend's single writer thread and its bounded queue — group commit.
//
// Enqueue admits a request (a transaction or a compaction) or refuses it at once:
// ResourceExhausted when max_queued_txns are already waiting, Unavailable once stopping, or
// the store's failure status after a fatal storage error. The thread takes everything queued
// (up to max_batch_txns), applies the requests in order inside one SQLite transaction — each
// transaction's compares see the state its predecessors left, each change gets its own
// revision — commits once, publishes the events to the WatchHub and then calls every
// request's callback. A storage failure fails the whole batch (rolled back, nothing applied).
//
// Thread-safety: Enqueue and Stats from any thread; callbacks run on the writer thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/sqlite/sqlite_schema.h"
#include "store/sqlite/sqlite_store.h"
#include "store/watch_hub.h"

namespace tessera::store::sqlite {

struct WriteRequest {
  Txn txn;
  // Set: this request compacts history below this revision instead of running `txn`.
  std::optional<Revision> compact;
  Store::TxnCallback done;
};

class Writer {
 public:
  // `meta`: the committed state `db` holds.
  Writer(std::unique_ptr<Connection> db, Meta meta, std::shared_ptr<WatchHub> hub,
         const SqliteStoreOptions& options);
  // Finishes the queued requests, then stops the thread.
  ~Writer();

  absl::Status Enqueue(WriteRequest request);
  SqliteStoreStats Stats() const;

 private:
  void Run();
  void CommitBatch(std::vector<WriteRequest>& batch);
  // Applying returns the storage failure that dooms the batch; the request's own outcome
  // (including a refusal such as OutOfRange) goes to `result`.
  absl::Status Apply(const Txn& txn, std::vector<Event>& events, absl::StatusOr<TxnResult>& result);
  absl::Status ApplyCompact(Revision revision, absl::StatusOr<TxnResult>& result);
  absl::StatusOr<bool> Compares(const Txn& txn);
  absl::Status Put(const Op& op, Revision revision, std::vector<Event>& events);
  absl::StatusOr<bool> Delete(std::string_view key, Revision revision, std::vector<Event>& events);
  absl::StatusOr<std::vector<std::string>> KeysWithPrefix(std::string_view prefix);
  absl::Status AppendEvent(const Event& event, std::vector<Event>& events);
  void Fail(const absl::Status& status);

  const SqliteStoreOptions options_;
  const std::unique_ptr<Connection> db_;
  const std::shared_ptr<WatchHub> hub_;
  // Owned by the writer thread.
  Revision revision_;
  Revision compacted_;
  int64_t seq_ = 0;

  absl::Mutex mu_;
  std::deque<WriteRequest> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);

  std::atomic<int64_t> txns_committed_{0};
  std::atomic<int64_t> batches_committed_{0};
  std::atomic<int64_t> largest_batch_{0};
  std::atomic<int64_t> queued_{0};

  std::thread thread_;
};

}  // namespace tessera::store::sqlite

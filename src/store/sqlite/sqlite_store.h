// SqliteStore: the embedded backend of the state store — one SQLite database in WAL mode in
// the control plane's data directory, with group commit.
//
// Files in the data directory (created if missing): tessera.db (+ its -wal and -shm) and LOCK,
// an flock(2) lock that keeps a second store — in this or another process — off the same data.
//
// Writes: Commit/CommitAsync validate the transaction (TxnLimits), then enqueue it on a bounded
// queue (max_queued_txns; a full queue answers ResourceExhausted at once). One writer thread
// takes everything queued, up to max_batch_txns, and runs it as ONE SQLite transaction —
// each queued transaction still evaluates its compares against the state left by the ones
// before it and gets its own revision — then commits with one WAL sync, publishes the events to
// watchers, and finally acknowledges every caller. Under load the sync cost is shared by a
// whole batch (group commit); a lone writer pays one sync per transaction.
//
// Durability: synchronous=FULL by default — the WAL is fsync'ed at every commit, so an
// acknowledged transaction survives a process crash and a power loss. kNormal skips that sync
// (committed data still survives a process crash, not a power loss); it exists for
// benchmarks and throw-away stores. See docs/store.md.
//
// Storage failures during a commit fail every transaction of that batch (nothing of it is
// applied). A full disk or a busy database is reported and the store carries on; any other
// failure (an I/O error while syncing, corruption) leaves the store failed: every later
// write answers that error until the process reopens the data directory.
//
// Reads (Get, Range, watchers catching up) run on a small pool of reader connections and never
// wait for the writer (WAL readers see the last commit).
//
// Thread-safety: as Store. Destroying the store finishes the queued transactions, stops the
// writer, and ends live watchers with Unavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/txn_validation.h"
#include "tessera/store/store.h"

namespace tessera::store {

struct SqliteStoreOptions {
  enum class Sync {
    kFull,    // fsync the WAL at every commit: durable across power loss (the default)
    kNormal,  // no sync at commit: durable across a process crash only
  };

  // The data directory; created (with parents) if missing.
  std::string data_dir;
  Sync sync = Sync::kFull;
  // Transactions waiting for the writer; one more answers ResourceExhausted.
  size_t max_queued_txns = 10000;
  // Transactions committed together in one SQLite transaction, at most. 1 disables group
  // commit (used by the benchmark to show what it buys).
  size_t max_batch_txns = 1000;
  // Events buffered per watcher before it catches up from history instead.
  size_t watch_buffer_events = 1024;
  TxnLimits limits;
  // A quota on the database file (0: none). Writes that would grow it beyond answer
  // ResourceExhausted, as a full disk does, so a runaway client cannot fill the control
  // plane's disk. Never below the current size.
  int64_t max_database_bytes = 0;
  // Test hook: called by the writer thread, with no lock held, each time it wakes up with work
  // and before it takes that work off the queue. Lets a test hold the writer still.
  std::function<void()> before_batch_for_test;
};

// Counters for metrics and tests.
struct SqliteStoreStats {
  int64_t txns_committed = 0;
  int64_t batches_committed = 0;
  int64_t largest_batch = 0;
  // Transactions in the queue right now.
  int64_t queued = 0;
};

class SqliteStore final : public Store {
 public:
  // Opens or creates the store in options.data_dir. Errors, each naming the path:
  //   InvalidArgument     empty data_dir or a zero bound;
  //   PermissionDenied    the directory or database cannot be written;
  //   FailedPrecondition  data_dir is not a directory, is locked by another store, or holds an
  //                       SQLite database that is not a Tessera store (or of another schema);
  //   DataLoss            tessera.db is not a database or is corrupt;
  //   Internal            other I/O failures.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(SqliteStoreOptions options);

  ~SqliteStore() override;

  absl::StatusOr<std::optional<KeyValue>> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(const RangeRequest& request) override;
  absl::StatusOr<TxnResult> Commit(Txn txn) override;
  absl::Status CommitAsync(Txn txn, TxnCallback done) override;
  absl::StatusOr<std::unique_ptr<Watcher>> Watch(std::string_view prefix,
                                                 Revision from_revision) override;
  absl::Status Compact(Revision revision) override;
  TxnLimits limits() const override;

  SqliteStoreStats Stats() const;

 private:
  class Impl;
  explicit SqliteStore(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::store

#include "store/sqlite/sqlite_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "store/sqlite/reader_pool.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/sqlite/sqlite_schema.h"
#include "store/sqlite/writer.h"
#include "store/watch_hub.h"
#include "tessera/common/status_macros.h"

namespace tessera::store {
namespace {

constexpr char kDatabaseFile[] = "tessera.db";
constexpr char kLockFile[] = "LOCK";
constexpr size_t kIdleReaders = 8;

absl::Status CheckOptions(const SqliteStoreOptions& options) {
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError("store: data_dir must name a directory");
  }
  if (options.max_queued_txns == 0 || options.max_batch_txns == 0 ||
      options.watch_buffer_events == 0) {
    return absl::InvalidArgumentError(
        "store: max_queued_txns, max_batch_txns and watch_buffer_events must be >= 1");
  }
  if (options.max_database_bytes < 0) {
    return absl::InvalidArgumentError("store: max_database_bytes must be >= 0 (0: no quota)");
  }
  return absl::OkStatus();
}

absl::Status PrepareDirectory(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::ErrnoToStatus(error.value(),
                               absl::StrCat("data directory ", dir, ": cannot create it"));
  }
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::FailedPreconditionError(
        absl::StrCat("data directory ", dir, ": exists and is not a directory"));
  }
  return absl::OkStatus();
}

// Holds the data directory's LOCK file for the store's lifetime (flock: released by the
// kernel when the process dies, so a crashed control plane never leaves a stale lock).
class DirectoryLock {
 public:
  static absl::StatusOr<std::unique_ptr<DirectoryLock>> Acquire(const std::string& dir) {
    std::string path = absl::StrCat(dir, "/", kLockFile);
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat("data directory ", dir, " is not writable: cannot open ", path));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int error = errno;
      close(fd);
      if (error == EWOULDBLOCK) {
        return absl::FailedPreconditionError(
            absl::StrCat("data directory ", dir, " is in use by another store (", path,
                         " is locked); stop the other control plane or choose another directory"));
      }
      return absl::ErrnoToStatus(error,
                                 absl::StrCat("data directory ", dir, ": cannot lock ", path));
    }
    return std::unique_ptr<DirectoryLock>(new DirectoryLock(fd));
  }
  ~DirectoryLock() { close(fd_); }

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_;
};

// Makes the directory's entries (database, WAL, LOCK) durable, so a power loss right after
// the first commits cannot lose a newly created file.
absl::Status SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("data directory ", dir, ": cannot open"));
  }
  int result = fsync(fd);
  int error = errno;
  close(fd);
  if (result != 0) {
    return absl::ErrnoToStatus(error, absl::StrCat("data directory ", dir, ": cannot sync"));
  }
  return absl::OkStatus();
}

absl::Status LimitDatabaseSize(sqlite::Connection& db, int64_t max_bytes) {
  if (max_bytes == 0) return absl::OkStatus();
  TESSERA_ASSIGN_OR_RETURN(sqlite::Statement page_size, db.Prepare("PRAGMA page_size"));
  TESSERA_ASSIGN_OR_RETURN(bool row, page_size.Step());
  int64_t bytes_per_page = row ? page_size.ColumnInt64(0) : 4096;
  return db.Exec(absl::StrCat("PRAGMA max_page_count = ", max_bytes / bytes_per_page));
}

absl::Status ConfigureWriter(sqlite::Connection& db, SqliteStoreOptions::Sync sync) {
  if (db.ReadOnly()) {
    return absl::PermissionDeniedError(absl::StrCat(db.path(), " is read-only"));
  }
  TESSERA_ASSIGN_OR_RETURN(sqlite::Statement wal, db.Prepare("PRAGMA journal_mode = WAL"));
  TESSERA_ASSIGN_OR_RETURN(bool row, wal.Step());
  std::string mode = row ? wal.ColumnBlob(0) : "";
  if (mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(db.path(), ": cannot switch to WAL mode (journal mode is \"", mode,
                     "\"); the data directory must be on a local filesystem"));
  }
  // temp_store = MEMORY keeps each statement's rollback journal in memory: an upsert inside a
  // batch of thousands otherwise copies every page it touches into a temporary file first.
  return db.Exec(absl::StrCat(
      "PRAGMA synchronous = ", sync == SqliteStoreOptions::Sync::kFull ? "FULL" : "NORMAL",
      "; PRAGMA busy_timeout = 5000; PRAGMA temp_store = MEMORY"));
}

// Creates or checks the schema, counts the open, and returns the committed state.
absl::StatusOr<sqlite::Meta> Initialize(sqlite::Connection& db) {
  TESSERA_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  absl::StatusOr<sqlite::Meta> meta = [&db]() -> absl::StatusOr<sqlite::Meta> {
    TESSERA_RETURN_IF_ERROR(sqlite::EnsureSchema(db));
    TESSERA_RETURN_IF_ERROR(db.Exec("UPDATE meta SET value = value + 1 WHERE name = 'opens'"));
    return sqlite::ReadMeta(db);
  }();
  TESSERA_RETURN_IF_ERROR(db.Exec(meta.ok() ? "COMMIT" : "ROLLBACK"));
  return meta;
}

}  // namespace

class SqliteStore::Impl {
 public:
  ~Impl() {
    writer.reset();  // finishes the queued transactions first
    if (hub) hub->Close();
  }

  SqliteStoreOptions options;
  std::unique_ptr<DirectoryLock> lock;
  std::shared_ptr<sqlite::ReaderPool> readers;
  std::shared_ptr<WatchHub> hub;
  std::unique_ptr<sqlite::Writer> writer;
};

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(SqliteStoreOptions options) {
  TESSERA_RETURN_IF_ERROR(CheckOptions(options));
  const std::string dir = options.data_dir;
  TESSERA_RETURN_IF_ERROR(PrepareDirectory(dir));
  auto impl = std::make_unique<Impl>();
  TESSERA_ASSIGN_OR_RETURN(impl->lock, DirectoryLock::Acquire(dir));

  const std::string path = absl::StrCat(dir, "/", kDatabaseFile);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Connection> db,
                           sqlite::Connection::Open(path, /*create=*/true));
  TESSERA_RETURN_IF_ERROR(ConfigureWriter(*db, options.sync));
  TESSERA_ASSIGN_OR_RETURN(sqlite::Meta meta, Initialize(*db));
  TESSERA_RETURN_IF_ERROR(LimitDatabaseSize(*db, options.max_database_bytes));
  TESSERA_RETURN_IF_ERROR(SyncDirectory(dir));

  impl->readers = std::make_shared<sqlite::ReaderPool>(path, kIdleReaders);
  impl->hub = WatchHub::Create(
      meta.revision, meta.compacted, options.watch_buffer_events,
      [readers = impl->readers](std::string_view prefix, Revision from, size_t max_events) {
        return readers->With([&](sqlite::Connection& reader) {
          return sqlite::ReadHistory(reader, prefix, from, max_events);
        });
      });
  impl->writer = std::make_unique<sqlite::Writer>(std::move(db), meta, impl->hub, options);
  impl->options = std::move(options);
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteStore::~SqliteStore() = default;

absl::StatusOr<std::optional<KeyValue>> SqliteStore::Get(std::string_view key) {
  return impl_->readers->With(
      [key](sqlite::Connection& reader) { return sqlite::ReadKey(reader, key); });
}

absl::StatusOr<RangeResult> SqliteStore::Range(const RangeRequest& request) {
  return impl_->readers->With(
      [&request](sqlite::Connection& reader) { return sqlite::ReadRange(reader, request); });
}

absl::StatusOr<TxnResult> SqliteStore::Commit(Txn txn) {
  absl::Notification committed;
  absl::StatusOr<TxnResult> result;
  TESSERA_RETURN_IF_ERROR(CommitAsync(std::move(txn), [&](absl::StatusOr<TxnResult> outcome) {
    result = std::move(outcome);
    committed.Notify();
  }));
  committed.WaitForNotification();
  return result;
}

absl::Status SqliteStore::CommitAsync(Txn txn, TxnCallback done) {
  TESSERA_RETURN_IF_ERROR(ValidateTxn(txn, impl_->options.limits));
  return impl_->writer->Enqueue({.txn = std::move(txn), .done = std::move(done)});
}

absl::StatusOr<std::unique_ptr<Watcher>> SqliteStore::Watch(std::string_view prefix,
                                                            Revision from_revision) {
  return impl_->hub->Watch(prefix, from_revision);
}

TxnLimits SqliteStore::limits() const { return impl_->options.limits; }

absl::Status SqliteStore::Compact(Revision revision) {
  absl::Notification compacted;
  absl::Status status;
  TESSERA_RETURN_IF_ERROR(
      impl_->writer->Enqueue({.compact = revision, .done = [&](absl::StatusOr<TxnResult> outcome) {
                                status = outcome.status();
                                compacted.Notify();
                              }}));
  compacted.WaitForNotification();
  return status;
}

SqliteStoreStats SqliteStore::Stats() const { return impl_->writer->Stats(); }

}  // namespace tessera::store

// A thin RAII layer over one SQLite connection: prepared-statement cache, typed binds and
// columns, and SQLite result codes turned into absl::Status with the store's code mapping.
//
// Internal to the SQLite backend. A Connection is used by one thread at a time (the store
// gives the writer thread its own and lends reader connections from a pool); it is opened in
// SQLite's multi-thread mode, so distinct connections need no shared lock.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::store::sqlite {

// Maps a SQLite result code onto the store's absl codes (see tessera/store/store.h):
// BUSY/LOCKED -> Unavailable, FULL/NOMEM -> ResourceExhausted, CORRUPT/NOTADB -> DataLoss,
// PERM/READONLY/AUTH -> PermissionDenied, CANTOPEN -> FailedPrecondition, else Internal.
absl::StatusCode StatusCodeFor(int sqlite_code);

// A prepared statement borrowed from a Connection's cache; reset and unbound on destruction.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept
      : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  void BindInt64(int index, int64_t value);
  // Binds the bytes (never NULL, also when empty). The bytes must outlive the statement's use.
  void BindBlob(int index, std::string_view bytes);
  // Binds text (SQLite never finds a BLOB equal to TEXT: bind names stored as TEXT this way).
  void BindText(int index, std::string_view text);

  // Advances to the next row: true when a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Runs a statement that returns no rows.
  absl::Status Run();

  int64_t ColumnInt64(int column) const;
  std::string ColumnBlob(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class Connection {
 public:
  // Opens (creating if `create`) the database file at `path`.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path, bool create);

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one or more statements that return no rows (pragmas, DDL, BEGIN/COMMIT).
  absl::Status Exec(std::string_view sql);

  // The cached prepared statement for `sql` (a string literal: the cache keys on its text).
  absl::StatusOr<Statement> Prepare(std::string_view sql);

  // The error of the last failed call on this connection, as a Status naming `context`.
  absl::Status Error(int code, std::string_view context) const;

  const std::string& path() const { return path_; }
  // Whether SQLite could open the database for reading only (e.g. a write-protected file).
  bool ReadOnly() const { return sqlite3_db_readonly(db_, "main") == 1; }

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  absl::flat_hash_map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace tessera::store::sqlite

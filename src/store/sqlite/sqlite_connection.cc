#include "store/sqlite/sqlite_connection.h"

#include "absl/strings/str_cat.h"

namespace tessera::store::sqlite {

absl::StatusCode StatusCodeFor(int sqlite_code) {
  switch (sqlite_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Statement::BindInt64(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }

void Statement::BindBlob(int index, std::string_view bytes) {
  // A zero-length blob needs a non-null pointer, or SQLite binds NULL.
  static const char kEmpty = 0;
  sqlite3_bind_blob(stmt_, index, bytes.empty() ? &kEmpty : bytes.data(),
                    static_cast<int>(bytes.size()), SQLITE_STATIC);
}

void Statement::BindText(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}

absl::StatusOr<bool> Statement::Step() {
  int code = sqlite3_step(stmt_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  const char* file = sqlite3_db_filename(db_, "main");
  return absl::Status(StatusCodeFor(code),
                      absl::StrCat("sqlite: ", file != nullptr ? file : "", ": ",
                                   sqlite3_errmsg(db_), " (in \"", sqlite3_sql(stmt_), "\")"));
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  return absl::OkStatus();
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::ColumnBlob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || size == 0) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int code = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (code != SQLITE_OK) {
    absl::Status status(StatusCodeFor(code),
                        absl::StrCat("sqlite: cannot open ", path, ": ",
                                     db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code)));
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Connection>(new Connection(db, path));
}

Connection::~Connection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

absl::Status Connection::Exec(std::string_view sql) {
  std::string text(sql);
  int code = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (code != SQLITE_OK) return Error(code, text);
  return absl::OkStatus();
}

absl::StatusOr<Statement> Connection::Prepare(std::string_view sql) {
  auto it = statements_.find(absl::string_view(sql.data(), sql.size()));
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int code = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                  SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (code != SQLITE_OK) return Error(code, sql);
    it = statements_.emplace(std::string(sql), stmt).first;
  }
  return Statement(db_, it->second);
}

absl::Status Connection::Error(int code, std::string_view context) const {
  return absl::Status(StatusCodeFor(code),
                      absl::StrCat("sqlite: ", path_, ": ", sqlite3_errmsg(db_), " (in \"",
                                   absl::string_view(context.data(), context.size()), "\")"));
}

}  // namespace tessera::store::sqlite

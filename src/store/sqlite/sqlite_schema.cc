#include "store/sqlite/sqlite_schema.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "store/key_range.h"
#include "tessera/common/status_macros.h"

namespace tessera::store::sqlite {
namespace {

constexpr std::string_view kCreateTables = R"sql(
  CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE kv(
    key BLOB PRIMARY KEY,
    value BLOB NOT NULL,
    create_revision INTEGER NOT NULL,
    mod_revision INTEGER NOT NULL,
    version INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE events(
    revision INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    type INTEGER NOT NULL,
    key BLOB NOT NULL,
    value BLOB NOT NULL,
    create_revision INTEGER NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY(revision, seq)) WITHOUT ROWID;
  INSERT INTO meta(name, value) VALUES
    ('schema_version', 1), ('revision', 0), ('compacted', 0), ('opens', 0);
)sql";

constexpr int kEventPut = 0;

// Ends a read transaction however the reads in it went.
class ReadTransaction {
 public:
  explicit ReadTransaction(Connection& db) : db_(db) {}
  ~ReadTransaction() {
    if (begun_) db_.Exec("COMMIT").IgnoreError();
  }
  absl::Status Begin() {
    TESSERA_RETURN_IF_ERROR(db_.Exec("BEGIN"));
    begun_ = true;
    return absl::OkStatus();
  }

 private:
  Connection& db_;
  bool begun_ = false;
};

KeyValue KeyValueAt(const Statement& row, int first) {
  return {.key = row.ColumnBlob(first),
          .value = row.ColumnBlob(first + 1),
          .create_revision = row.ColumnInt64(first + 2),
          .mod_revision = row.ColumnInt64(first + 3),
          .version = row.ColumnInt64(first + 4)};
}

// Columns: revision, type, key, value, create_revision, version.
Event EventAt(const Statement& row) {
  Event event{.type = row.ColumnInt64(1) == kEventPut ? Event::Type::kPut : Event::Type::kDelete};
  event.kv = {.key = row.ColumnBlob(2),
              .value = row.ColumnBlob(3),
              .create_revision = row.ColumnInt64(4),
              .mod_revision = row.ColumnInt64(0),
              .version = row.ColumnInt64(5)};
  return event;
}

absl::StatusOr<absl::flat_hash_set<std::string>> TableNames(Connection& db) {
  TESSERA_ASSIGN_OR_RETURN(Statement query,
                           db.Prepare("SELECT name FROM sqlite_master WHERE type = 'table'"));
  absl::flat_hash_set<std::string> names;
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return names;
    names.insert(query.ColumnBlob(0));
  }
}

}  // namespace

absl::Status EnsureSchema(Connection& db) {
  TESSERA_ASSIGN_OR_RETURN(absl::flat_hash_set<std::string> tables, TableNames(db));
  if (tables.empty()) return db.Exec(kCreateTables);
  for (const char* table : {"meta", "kv", "events"}) {
    if (!tables.contains(table)) {
      return absl::FailedPreconditionError(
          absl::StrCat(db.path(), " is an SQLite database but not a Tessera store (no table \"",
                       table, "\"); point the data directory elsewhere"));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(Statement query,
                           db.Prepare("SELECT value FROM meta WHERE name = 'schema_version'"));
  TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
  int64_t version = row ? query.ColumnInt64(0) : 0;
  if (version != kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(db.path(), " has store schema version ",
                                                      version, "; this build reads version ",
                                                      kSchemaVersion));
  }
  return absl::OkStatus();
}

absl::StatusOr<Meta> ReadMeta(Connection& db) {
  TESSERA_ASSIGN_OR_RETURN(
      Statement query,
      db.Prepare("SELECT name, value FROM meta WHERE name IN ('revision', 'compacted')"));
  Meta meta;
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return meta;
    (query.ColumnBlob(0) == "revision" ? meta.revision : meta.compacted) = query.ColumnInt64(1);
  }
}

absl::Status WriteMeta(Connection& db, std::string_view name, int64_t value) {
  TESSERA_ASSIGN_OR_RETURN(Statement update,
                           db.Prepare("UPDATE meta SET value = ?2 WHERE name = ?1"));
  update.BindText(1, name);
  update.BindInt64(2, value);
  return update.Run();
}

absl::StatusOr<std::optional<KeyValue>> ReadKey(Connection& db, std::string_view key) {
  TESSERA_ASSIGN_OR_RETURN(
      Statement query,
      db.Prepare("SELECT key, value, create_revision, mod_revision, version FROM kv "
                 "WHERE key = ?1"));
  query.BindBlob(1, key);
  TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return std::nullopt;
  return KeyValueAt(query, 0);
}

absl::StatusOr<RangeResult> ReadRange(Connection& db, const RangeRequest& request) {
  if (request.limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("range: limit ", request.limit, " must be >= 0 (0: no limit)"));
  }
  // Keys > `after` are exactly the keys >= after + '\0'.
  std::string lower = request.prefix;
  if (!request.after.empty()) lower = std::max(lower, request.after + std::string(1, '\0'));
  std::optional<std::string> upper = PrefixEnd(request.prefix);

  ReadTransaction transaction(db);
  TESSERA_RETURN_IF_ERROR(transaction.Begin());
  TESSERA_ASSIGN_OR_RETURN(Meta meta, ReadMeta(db));
  TESSERA_ASSIGN_OR_RETURN(
      Statement query,
      upper ? db.Prepare("SELECT key, value, create_revision, mod_revision, version FROM kv "
                         "WHERE key >= ?1 AND key < ?2 ORDER BY key LIMIT ?3")
            : db.Prepare("SELECT key, value, create_revision, mod_revision, version FROM kv "
                         "WHERE key >= ?1 ORDER BY key LIMIT ?3"));
  query.BindBlob(1, lower);
  if (upper) query.BindBlob(2, *upper);
  // One row more than asked tells whether there are more.
  query.BindInt64(3, request.limit == 0 ? -1 : request.limit + 1);
  RangeResult result{.revision = meta.revision};
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    if (request.limit != 0 && static_cast<int64_t>(result.kvs.size()) == request.limit) {
      result.more = true;
      break;
    }
    result.kvs.push_back(KeyValueAt(query, 0));
  }
  return result;
}

absl::StatusOr<HistoryChunk> ReadHistory(Connection& db, std::string_view prefix, Revision from,
                                         size_t max_events) {
  ReadTransaction transaction(db);
  TESSERA_RETURN_IF_ERROR(transaction.Begin());
  TESSERA_ASSIGN_OR_RETURN(Meta meta, ReadMeta(db));
  if (from < meta.compacted) {
    return absl::OutOfRangeError(
        absl::StrCat("watch: revision ", from, " has been compacted (history starts at ",
                     meta.compacted, "); list again and watch from the list's revision + 1"));
  }
  HistoryChunk chunk{.read_revision = meta.revision};
  TESSERA_ASSIGN_OR_RETURN(
      Statement query,
      db.Prepare("SELECT revision, type, key, value, create_revision, version, seq FROM events "
                 "WHERE revision >= ?1 AND revision <= ?2 AND substr(key, 1, length(?3)) = ?3 "
                 "ORDER BY revision, seq LIMIT ?4"));
  query.BindInt64(1, from);
  query.BindInt64(2, meta.revision);
  query.BindBlob(3, prefix);
  query.BindInt64(4, static_cast<int64_t>(max_events));
  int64_t last_seq = 0;
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    chunk.events.push_back(EventAt(query));
    last_seq = query.ColumnInt64(6);
  }
  if (chunk.events.size() < max_events) return chunk;

  // The limit cut the read short: finish the last revision so that none is split.
  chunk.complete = false;
  TESSERA_ASSIGN_OR_RETURN(
      Statement rest,
      db.Prepare("SELECT revision, type, key, value, create_revision, version FROM events "
                 "WHERE revision = ?1 AND seq > ?2 AND substr(key, 1, length(?3)) = ?3 "
                 "ORDER BY seq"));
  rest.BindInt64(1, chunk.events.back().revision());
  rest.BindInt64(2, last_seq);
  rest.BindBlob(3, prefix);
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(bool row, rest.Step());
    if (!row) return chunk;
    chunk.events.push_back(EventAt(rest));
  }
}

}  // namespace tessera::store::sqlite

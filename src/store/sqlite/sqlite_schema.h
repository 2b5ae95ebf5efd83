// The SQLite backend's tables and the queries both of its sides (reader pool and writer) share.
//
//   meta(name, value)     schema_version, revision (the store's current revision),
//                         compacted (the compaction revision: history starts there), opens;
//   kv(key, value, create_revision, mod_revision, version)
//                         the current keys (WITHOUT ROWID: clustered on the key, so a prefix
//                         range is one index range);
//   events(revision, seq, type, key, value, create_revision, version)
//                         the change history, clustered on (revision, seq): one row per
//                         changed key, seq numbering the changes inside one revision.
// Keys are BLOBs so that SQLite orders them bytewise, as the Store contract says.
//
// Functions take a Connection owned by the calling thread. Reads that need one consistent
// view open their own read transaction.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/sqlite/sqlite_connection.h"
#include "store/watch_hub.h"
#include "tessera/store/store.h"

namespace tessera::store::sqlite {

inline constexpr int64_t kSchemaVersion = 1;

// Creates the tables of an empty database; checks the schema of an existing one
// (FailedPrecondition: not a Tessera store, or another schema version). Runs in the caller's
// write transaction.
absl::Status EnsureSchema(Connection& db);

struct Meta {
  Revision revision = 0;
  Revision compacted = 0;
};

absl::StatusOr<Meta> ReadMeta(Connection& db);
absl::Status WriteMeta(Connection& db, std::string_view name, int64_t value);

absl::StatusOr<std::optional<KeyValue>> ReadKey(Connection& db, std::string_view key);
absl::StatusOr<RangeResult> ReadRange(Connection& db, const RangeRequest& request);
absl::StatusOr<HistoryChunk> ReadHistory(Connection& db, std::string_view prefix, Revision from,
                                         size_t max_events);

}  // namespace tessera::store::sqlite

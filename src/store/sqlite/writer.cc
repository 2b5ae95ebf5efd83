#include "store/sqlite/writer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/key_range.h"
#include "store/txn_validation.h"
#include "tessera/common/status_macros.h"

namespace tessera::store::sqlite {
namespace {

constexpr int64_t kEventPut = 0;
constexpr int64_t kEventDelete = 1;

// Failures after which the store may go on: the next batch can succeed.
bool Transient(const absl::Status& status) {
  return absl::IsResourceExhausted(status) || absl::IsUnavailable(status);
}

}  // namespace

Writer::Writer(std::unique_ptr<Connection> db, Meta meta, std::shared_ptr<WatchHub> hub,
               const SqliteStoreOptions& options)
    : options_(options),
      db_(std::move(db)),
      hub_(std::move(hub)),
      revision_(meta.revision),
      compacted_(meta.compacted),
      thread_([this] { Run(); }) {}

Writer::~Writer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

absl::Status Writer::Enqueue(WriteRequest request) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("store: closing; no more writes");
  if (!failure_.ok()) return failure_;
  if (queue_.size() >= options_.max_queued_txns) {
    return absl::ResourceExhaustedError(
        absl::StrCat("store: write queue full (", queue_.size(),
                     " transactions waiting for commit); retry with back-off"));
  }
  queue_.push_back(std::move(request));
  queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
  return absl::OkStatus();
}

SqliteStoreStats Writer::Stats() const {
  return {.txns_committed = txns_committed_.load(std::memory_order_relaxed),
          .batches_committed = batches_committed_.load(std::memory_order_relaxed),
          .largest_batch = largest_batch_.load(std::memory_order_relaxed),
          .queued = queued_.load(std::memory_order_relaxed)};
}

void Writer::Run() {
  auto has_work = [this]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; };
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work));
      if (queue_.empty()) return;  // stopping, and every queued request is done
    }
    if (options_.before_batch_for_test) options_.before_batch_for_test();
    std::vector<WriteRequest> batch;
    {
      absl::MutexLock lock(&mu_);
      size_t take = std::min(queue_.size(), options_.max_batch_txns);
      batch.reserve(take);
      for (size_t i = 0; i < take; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    }
    CommitBatch(batch);
  }
}

void Writer::CommitBatch(std::vector<WriteRequest>& batch) {
  const Revision start_revision = revision_;
  const Revision start_compacted = compacted_;
  std::vector<Event> events;
  std::vector<absl::StatusOr<TxnResult>> results;
  results.reserve(batch.size());

  absl::Status status = db_->Exec("BEGIN IMMEDIATE");
  for (size_t i = 0; i < batch.size() && status.ok(); ++i) {
    absl::StatusOr<TxnResult> result;
    status = batch[i].compact ? ApplyCompact(*batch[i].compact, result)
                              : Apply(batch[i].txn, events, result);
    results.push_back(std::move(result));
  }
  if (status.ok() && revision_ != start_revision) status = WriteMeta(*db_, "revision", revision_);
  if (status.ok()) status = db_->Exec("COMMIT");

  if (!status.ok()) {
    // Nothing of this batch is applied. ROLLBACK fails harmlessly if SQLite already rolled back.
    db_->Exec("ROLLBACK").IgnoreError();
    revision_ = start_revision;
    compacted_ = start_compacted;
    absl::Status failed(status.code(), absl::StrCat("store: commit failed, nothing of it applied: ",
                                                    status.message()));
    if (!Transient(status)) Fail(failed);
    for (WriteRequest& request : batch) request.done(failed);
    return;
  }
  if (revision_ != start_revision) hub_->Publish(events, revision_);
  if (compacted_ != start_compacted) hub_->SetCompacted(compacted_);
  txns_committed_.fetch_add(static_cast<int64_t>(batch.size()), std::memory_order_relaxed);
  batches_committed_.fetch_add(1, std::memory_order_relaxed);
  if (static_cast<int64_t>(batch.size()) > largest_batch_.load(std::memory_order_relaxed)) {
    largest_batch_.store(static_cast<int64_t>(batch.size()), std::memory_order_relaxed);
  }
  for (size_t i = 0; i < batch.size(); ++i) batch[i].done(std::move(results[i]));
}

void Writer::Fail(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  failure_ =
      absl::Status(status.code(),
                   absl::StrCat(status.message(),
                                "; the store refuses writes until the data directory is reopened"));
}

absl::Status Writer::Apply(const Txn& txn, std::vector<Event>& events,
                           absl::StatusOr<TxnResult>& result) {
  TESSERA_ASSIGN_OR_RETURN(bool succeeded, Compares(txn));
  const std::vector<Op>& ops = succeeded ? txn.success : txn.failure;
  const Revision revision = revision_ + 1;
  const size_t first_event = events.size();
  seq_ = 0;
  TxnResult outcome{.succeeded = succeeded};
  for (const Op& op : ops) {
    switch (op.type) {
      case Op::Type::kPut:
        TESSERA_RETURN_IF_ERROR(Put(op, revision, events));
        break;
      case Op::Type::kDelete: {
        TESSERA_ASSIGN_OR_RETURN(bool deleted, Delete(op.key, revision, events));
        outcome.deleted += deleted;
        break;
      }
      case Op::Type::kDeletePrefix: {
        TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, KeysWithPrefix(op.key));
        for (const std::string& key : keys) {
          TESSERA_ASSIGN_OR_RETURN(bool deleted, Delete(key, revision, events));
          outcome.deleted += deleted;
        }
        break;
      }
    }
  }
  // Only a transaction that changed something consumes a revision.
  if (events.size() > first_event) revision_ = revision;
  outcome.revision = revision_;
  result = outcome;
  return absl::OkStatus();
}

absl::StatusOr<bool> Writer::Compares(const Txn& txn) {
  for (const Compare& compare : txn.compares) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<KeyValue> current, ReadKey(*db_, compare.key));
    if (!EvaluateCompare(compare, current ? &*current : nullptr)) return false;
  }
  return true;
}

absl::Status Writer::Put(const Op& op, Revision revision, std::vector<Event>& events) {
  TESSERA_ASSIGN_OR_RETURN(
      Statement upsert,
      db_->Prepare("INSERT INTO kv(key, value, create_revision, mod_revision, version) "
                   "VALUES(?1, ?2, ?3, ?3, 1) ON CONFLICT(key) DO UPDATE SET "
                   "value = excluded.value, mod_revision = excluded.mod_revision, "
                   "version = version + 1 RETURNING create_revision, version"));
  upsert.BindBlob(1, op.key);
  upsert.BindBlob(2, op.value);
  upsert.BindInt64(3, revision);
  TESSERA_ASSIGN_OR_RETURN(bool row, upsert.Step());
  if (!row) return absl::InternalError("store: upsert returned no row");
  Event event{.type = Event::Type::kPut,
              .kv = {.key = op.key,
                     .value = op.value,
                     .create_revision = upsert.ColumnInt64(0),
                     .mod_revision = revision,
                     .version = upsert.ColumnInt64(1)}};
  return AppendEvent(event, events);
}

absl::StatusOr<bool> Writer::Delete(std::string_view key, Revision revision,
                                    std::vector<Event>& events) {
  TESSERA_ASSIGN_OR_RETURN(Statement erase,
                           db_->Prepare("DELETE FROM kv WHERE key = ?1 RETURNING key"));
  erase.BindBlob(1, key);
  TESSERA_ASSIGN_OR_RETURN(bool deleted, erase.Step());
  if (!deleted) return false;
  Event event{.type = Event::Type::kDelete,
              .kv = {.key = std::string(key), .mod_revision = revision}};
  TESSERA_RETURN_IF_ERROR(AppendEvent(event, events));
  return true;
}

absl::StatusOr<std::vector<std::string>> Writer::KeysWithPrefix(std::string_view prefix) {
  std::optional<std::string> end = PrefixEnd(prefix);
  TESSERA_ASSIGN_OR_RETURN(
      Statement query,
      end ? db_->Prepare("SELECT key FROM kv WHERE key >= ?1 AND key < ?2 ORDER BY key")
          : db_->Prepare("SELECT key FROM kv WHERE key >= ?1 ORDER BY key"));
  query.BindBlob(1, prefix);
  if (end) query.BindBlob(2, *end);
  std::vector<std::string> keys;
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return keys;
    keys.push_back(query.ColumnBlob(0));
  }
}

absl::Status Writer::AppendEvent(const Event& event, std::vector<Event>& events) {
  TESSERA_ASSIGN_OR_RETURN(
      Statement insert,
      db_->Prepare("INSERT INTO events(revision, seq, type, key, value, create_revision, "
                   "version) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  insert.BindInt64(1, event.revision());
  insert.BindInt64(2, seq_++);
  insert.BindInt64(3, event.type == Event::Type::kPut ? kEventPut : kEventDelete);
  insert.BindBlob(4, event.kv.key);
  insert.BindBlob(5, event.kv.value);
  insert.BindInt64(6, event.kv.create_revision);
  insert.BindInt64(7, event.kv.version);
  TESSERA_RETURN_IF_ERROR(insert.Run());
  events.push_back(event);
  return absl::OkStatus();
}

absl::Status Writer::ApplyCompact(Revision revision, absl::StatusOr<TxnResult>& result) {
  if (revision > revision_) {
    result = absl::OutOfRangeError(absl::StrCat(
        "compact: revision ", revision, " is in the future (current revision ", revision_, ")"));
    return absl::OkStatus();
  }
  if (revision <= compacted_) {
    result = absl::OutOfRangeError(absl::StrCat("compact: revision ", revision,
                                                " is already compacted (history starts at ",
                                                compacted_, ")"));
    return absl::OkStatus();
  }
  TESSERA_ASSIGN_OR_RETURN(Statement erase, db_->Prepare("DELETE FROM events WHERE revision < ?1"));
  erase.BindInt64(1, revision);
  TESSERA_RETURN_IF_ERROR(erase.Run());
  TESSERA_RETURN_IF_ERROR(WriteMeta(*db_, "compacted", revision));
  compacted_ = revision;
  result = TxnResult{.succeeded = true, .revision = revision_};
  return absl::OkStatus();
}

}  // namespace tessera::store::sqlite

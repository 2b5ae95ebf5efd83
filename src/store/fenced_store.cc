#include "store/fenced_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "store/txn_validation.h"

namespace tessera::store {

FencedStore::FencedStore(Store* inner, Compare fence, std::function<void()> on_fenced)
    : inner_(inner), fence_(std::move(fence)), on_fenced_(std::move(on_fenced)) {}

absl::StatusOr<std::optional<KeyValue>> FencedStore::Get(std::string_view key) {
  return inner_->Get(key);
}

absl::StatusOr<RangeResult> FencedStore::Range(const RangeRequest& request) {
  return inner_->Range(request);
}

absl::StatusOr<Txn> FencedStore::Fenced(Txn txn) const {
  if (!txn.failure.empty()) {
    return absl::InvalidArgumentError(
        "failure: a fenced transaction has no failure branch (a lost fence would run it)");
  }
  txn.compares.push_back(fence_);
  return txn;
}

absl::StatusOr<TxnResult> FencedStore::Checked(absl::StatusOr<TxnResult> result) {
  if (!result.ok() || result->succeeded) return result;
  absl::StatusOr<std::optional<KeyValue>> current = inner_->Get(fence_.key);
  if (!current.ok()) return current.status();
  if (EvaluateCompare(fence_, current->has_value() ? &**current : nullptr)) return result;
  if (!fenced_.exchange(true) && on_fenced_) on_fenced_();
  return absl::FailedPreconditionError(absl::StrCat("fenced: this replica no longer leads (term ",
                                                    fence_.number, " of ", fence_.key,
                                                    " has ended); nothing was written"));
}

absl::StatusOr<TxnResult> FencedStore::Commit(Txn txn) {
  absl::StatusOr<Txn> fenced = Fenced(std::move(txn));
  if (!fenced.ok()) return fenced.status();
  return Checked(inner_->Commit(*std::move(fenced)));
}

absl::Status FencedStore::CommitAsync(Txn txn, TxnCallback done) {
  absl::StatusOr<Txn> fenced = Fenced(std::move(txn));
  if (!fenced.ok()) return fenced.status();
  return inner_->CommitAsync(*std::move(fenced),
                             [this, done = std::move(done)](absl::StatusOr<TxnResult> result) {
                               done(Checked(std::move(result)));
                             });
}

absl::StatusOr<std::unique_ptr<Watcher>> FencedStore::Watch(std::string_view prefix,
                                                            Revision from_revision) {
  return inner_->Watch(prefix, from_revision);
}

TxnLimits FencedStore::limits() const {
  // The fence takes one entry and its key's bytes of every transaction.
  TxnLimits limits = inner_->limits();
  limits.max_entries -= 1;
  limits.max_total_bytes -= fence_.key.size();
  return limits;
}

absl::Status FencedStore::Compact(Revision revision) { return inner_->Compact(revision); }

}  // namespace tessera::store
